"""Field checks shared by every capability. Each raises an error naming the
request field, so a caller always learns which input was wrong."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from statekeeper.core.errors import InvalidArgumentError, LimitExceededError
from statekeeper.core.limits import Limits

_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]+$")


def check_id(field: str, value: str, limits: Limits, required: bool = True) -> None:
    """Ids are 1..max_id_length characters of [A-Za-z0-9._:-]."""
    if not value:
        if required:
            raise InvalidArgumentError(field, "is required")
        return
    if len(value) > limits.max_id_length:
        raise InvalidArgumentError(field, f"is longer than {limits.max_id_length} characters")
    if not _ID_PATTERN.match(value):
        raise InvalidArgumentError(field, "may only contain letters, digits and . _ : -")


def check_text(field: str, value: str, max_bytes: int) -> None:
    size = len(value.encode("utf-8"))
    if size > max_bytes:
        raise LimitExceededError(field, max_bytes, f"is {size} bytes")


def check_metadata(field: str, metadata: Mapping[str, str], limits: Limits) -> None:
    if len(metadata) > limits.max_metadata_entries:
        raise LimitExceededError(field, limits.max_metadata_entries, f"has {len(metadata)} entries")
    for key, value in metadata.items():
        if not key:
            raise InvalidArgumentError(field, "keys must not be empty")
        check_text(f"{field}[{key!r}]", key, limits.max_metadata_key_bytes)
        check_text(f"{field}[{key!r}]", value, limits.max_metadata_value_bytes)


def check_json_size(field: str, value: Any, max_bytes: int) -> None:
    check_text(field, json.dumps(value, separators=(",", ":")), max_bytes)


def check_count(field: str, items: Sequence[Any], limit: int) -> None:
    if len(items) > limit:
        raise LimitExceededError(field, limit, f"has {len(items)} items")


def check_non_negative(field: str, value: float) -> None:
    if value < 0:
        raise InvalidArgumentError(field, "must not be negative")


def page_size(field: str, requested: int, limits: Limits, default: int | None = None) -> int:
    """AIP-158: 0 means the default, negative is an error, big is clamped."""
    check_non_negative(field, requested)
    if requested == 0:
        return default if default is not None else limits.default_page_size
    return min(requested, limits.max_page_size)
