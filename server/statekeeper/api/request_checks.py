"""The checks every request of every RPC gets, from its descriptor alone.

The interceptor runs `check_request` on each request before the servicer
sees it, so one rule holds for every field of every RPC on both backends:

* a google.protobuf.Duration is well formed, not negative, at most 100 years;
* a google.protobuf.Timestamp is well formed and between 1678 and 2261 (what
  int64 nanoseconds hold);
* strings (map keys and JSON strings in Struct/Value included) hold no NUL;
* float and double fields, and JSON numbers, are finite.

Each violation is an InvalidArgumentError naming the field by its path in the
request (`episode.occur_time`, `messages[2].content`, `value.json["k"][0]`).
The rules themselves live in core/validation.py; this module only walks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from statekeeper.core.validation import (
    check_characters,
    check_duration,
    check_finite,
    check_timestamp,
)

_DURATION = "google.protobuf.Duration"
_TIMESTAMP = "google.protobuf.Timestamp"
_STRUCT = "google.protobuf.Struct"
_VALUE = "google.protobuf.Value"
_LIST_VALUE = "google.protobuf.ListValue"
_FLOATS = (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT)


def check_request(request: Message) -> None:
    """Raises InvalidArgumentError for the first field that breaks a rule."""
    _check_message(request, "")


def _check_message(message: Message, path: str) -> None:
    name = message.DESCRIPTOR.full_name
    if name == _DURATION:
        check_duration(path, message.seconds, message.nanos)  # type: ignore[attr-defined]
    elif name == _TIMESTAMP:
        check_timestamp(path, message.seconds, message.nanos)  # type: ignore[attr-defined]
    elif name in (_STRUCT, _VALUE, _LIST_VALUE):
        _check_json(message, path)
    else:
        for field, value in message.ListFields():  # only the fields that are set
            _check_field(field, value, _join(path, field.name))


def _check_field(field: FieldDescriptor, value: object, path: str) -> None:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        for key, item in value.items():  # type: ignore[attr-defined]
            item_path = f"{path}[{key!r}]"
            if isinstance(key, str):
                check_characters(item_path, key)
            _check_single(value_field, item, item_path)
    elif field.is_repeated and field.type in _FLOATS:
        _check_floats(value, path)  # type: ignore[arg-type]
    elif field.is_repeated:
        for index, item in enumerate(value):  # type: ignore[arg-type]
            _check_single(field, item, f"{path}[{index}]")
    else:
        _check_single(field, value, path)


def _check_single(field: FieldDescriptor, value: object, path: str) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        _check_message(value, path)  # type: ignore[arg-type]
    elif field.type == FieldDescriptor.TYPE_STRING:
        check_characters(path, value)  # type: ignore[arg-type]
    elif field.type in _FLOATS:
        check_finite(path, value)  # type: ignore[arg-type]


def _check_floats(values: Sequence[float], path: str) -> None:
    """Repeated floats (embeddings: thousands per request) in one vectorised
    pass; the first non-finite one is named as the per-item loop would."""
    # asarray reads a repeated field's buffer in one pass (fromiter goes
    # through Python floats one by one: ~3.5x slower for embeddings).
    array = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(array))
    if len(bad):
        index = int(bad[0])
        check_finite(f"{path}[{index}]", values[index])


def _check_json(message: Message, path: str) -> None:
    """Struct, Value and ListValue: the same rules on JSON keys and values."""
    name = message.DESCRIPTOR.full_name
    if name == _STRUCT:
        for key, item in message.fields.items():  # type: ignore[attr-defined]
            item_path = f"{path}[{key!r}]"
            check_characters(item_path, key)
            _check_json(item, item_path)
    elif name == _LIST_VALUE:
        for index, item in enumerate(message.values):  # type: ignore[attr-defined]
            _check_json(item, f"{path}[{index}]")
    else:
        kind = message.WhichOneof("kind")
        if kind == "number_value":
            check_finite(path, message.number_value)  # type: ignore[attr-defined]
        elif kind == "string_value":
            check_characters(path, message.string_value)  # type: ignore[attr-defined]
        elif kind in ("struct_value", "list_value"):
            _check_json(getattr(message, kind), path)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
