"""proto <-> domain conversions for the blackboard. Only translation and the
checks that exist on the wire alone (oneof presence, enum numbers)."""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict

from statekeeper.api.convert import optional_seconds, timestamp
from statekeeper.core.blackboard.models import Entry, Event, EventType, Header, Value, ValueKind
from statekeeper.core.blackboard.service import (
    Compare,
    CompareOperator,
    CompareTarget,
    DeleteOp,
    DeleteResult,
    GetOp,
    GetResult,
    Op,
    OpResult,
    PutOp,
    PutResult,
    WatchRequest,
)
from statekeeper.core.blackboard.watch import WatchMessage, WatchMessageKind
from statekeeper.core.errors import InvalidArgumentError
from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2

# ----- values and entries -------------------------------------------------------


def value_from_proto(value: pb.BlackboardValue) -> Value | None:
    kind = value.WhichOneof("kind")
    if kind == "payload":
        payload = value.payload
        return Value.payload(payload.data, payload.content_type, payload.schema_version)
    if kind == "json":
        return Value.json_object(MessageToDict(value.json))
    return None


def value_to_proto(value: Value) -> pb.BlackboardValue:
    if value.kind == ValueKind.PAYLOAD:
        payload = common_pb2.Payload(
            content_type=value.content_type, schema_version=value.schema_version, data=value.data
        )
        return pb.BlackboardValue(payload=payload)
    struct = struct_pb2.Struct()
    struct.update(value.as_object())
    return pb.BlackboardValue(json=struct)


def optional_entry(entry: Entry | None) -> pb.BlackboardEntry | None:
    return None if entry is None else entry_to_proto(entry)


def entry_to_proto(entry: Entry) -> pb.BlackboardEntry:
    return pb.BlackboardEntry(
        board=entry.board,
        key=entry.key,
        value=None if entry.value is None else value_to_proto(entry.value),
        create_revision=entry.create_revision,
        mod_revision=entry.mod_revision,
        version=entry.version,
        writer_agent_id=entry.writer_agent_id,
        expire_time=timestamp(entry.expire_time),
        update_time=timestamp(entry.update_time),
    )


def header_to_proto(header: Header) -> pb.BlackboardHeader:
    return pb.BlackboardHeader(revision=header.revision, oldest_revision=header.oldest_revision)


def event_to_proto(event: Event) -> pb.BlackboardEvent:
    entry = event.entry
    if event.type != EventType.PUT:
        # Removals carry board, key and the removal's revision only.
        entry = Entry(entry.board, entry.key, None, 0, entry.mod_revision, 0)
    return pb.BlackboardEvent(
        type=int(event.type),  # type: ignore[arg-type]
        entry=entry_to_proto(entry),
        previous=optional_entry(event.previous),
        revision=event.revision,
    )


# ----- requests -------------------------------------------------------------------


def put_op(request: pb.PutEntryRequest | pb.TxnPut) -> PutOp:
    """A put, from PutEntry or from a Txn (the two name its fields alike)."""
    return PutOp(
        key=request.key,
        value=value_from_proto(request.value),
        ttl_seconds=optional_seconds(request, "ttl"),
        keep_ttl=request.keep_ttl,
        return_previous=request.return_previous,
    )


def optional_revision(message: object, field: str) -> int | None:
    if not message.HasField(field):  # type: ignore[attr-defined]
        return None
    value: int = getattr(message, field)
    return value


def compare_from_proto(field: str, compare: pb.TxnCompare) -> Compare:
    operator = compare.operator
    if operator == pb.TXN_COMPARE_OPERATOR_UNSPECIFIED:
        raise InvalidArgumentError(f"{field}.operator", "is required")
    try:
        domain_operator = CompareOperator(operator)
    except ValueError:
        raise InvalidArgumentError(f"{field}.operator", f"unknown operator {operator}") from None
    target = compare.WhichOneof("target")
    if target is None:
        raise InvalidArgumentError(
            f"{field}.target",
            "must set mod_revision, create_revision, version, value or exists",
        )
    operand: int | bool | Value
    if target == "value":
        value = value_from_proto(compare.value)
        if value is None:
            raise InvalidArgumentError(f"{field}.value", "must set payload or json")
        operand = value
    else:
        operand = getattr(compare, target)
    return Compare(compare.key, domain_operator, CompareTarget(target), operand)


def compares_from_proto(request: pb.TxnRequest) -> list[Compare]:
    return [compare_from_proto(f"compares[{i}]", c) for i, c in enumerate(request.compares)]


def branch_from_proto(name: str, ops: Iterable[pb.TxnOp]) -> list[Op]:
    return [op_from_proto(f"{name}[{i}]", op) for i, op in enumerate(ops)]


def op_from_proto(field: str, op: pb.TxnOp) -> Op:
    which = op.WhichOneof("op")
    if which == "put_entry":
        return put_op(op.put_entry)
    if which == "delete_entry":
        return DeleteOp(op.delete_entry.key, op.delete_entry.return_previous)
    if which == "get_entry":
        return GetOp(op.get_entry.key)
    raise InvalidArgumentError(field, "must set put_entry, delete_entry or get_entry")


def op_result_to_proto(result: OpResult) -> pb.TxnOpResult:
    if isinstance(result, PutResult):
        return pb.TxnOpResult(
            put_entry=pb.TxnPutResult(
                entry=entry_to_proto(result.entry), previous=optional_entry(result.previous)
            )
        )
    if isinstance(result, DeleteResult):
        return pb.TxnOpResult(
            delete_entry=pb.TxnDeleteResult(
                deleted=result.deleted, previous=optional_entry(result.previous)
            )
        )
    assert isinstance(result, GetResult)
    return pb.TxnOpResult(
        get_entry=pb.TxnGetResult(
            found=result.entry is not None, entry=optional_entry(result.entry)
        )
    )


def selector_of(request: pb.ListEntriesRequest | pb.WatchRequest) -> tuple[str | None, str | None]:
    which = request.WhichOneof("selector")
    if which == "prefix":
        return request.prefix, None
    if which == "pattern":
        return None, request.pattern
    return None, None


def watch_request(request: pb.WatchRequest) -> WatchRequest:
    prefix, pattern = selector_of(request)
    kinds: set[EventType] = set()
    for index, value in enumerate(request.event_types):
        try:
            if value == pb.BLACKBOARD_EVENT_TYPE_UNSPECIFIED:
                raise ValueError(value)
            kinds.add(EventType(value))
        except ValueError:
            raise InvalidArgumentError(
                f"event_types[{index}]", f"is not an event type: {value}"
            ) from None
    return WatchRequest(
        board=request.board,
        prefix=prefix,
        pattern=pattern,
        start_revision=request.start_revision,
        initial_snapshot=request.initial_snapshot,
        prev_value=request.prev_value,
        progress_interval_seconds=optional_seconds(request, "progress_notify_interval"),
        event_types=frozenset(kinds),
    )


def watch_message_to_proto(message: WatchMessage) -> pb.WatchResponse:
    response = pb.WatchResponse(
        header=header_to_proto(message.header), resume_revision=message.resume_revision
    )
    kind = message.kind
    if kind == WatchMessageKind.STARTED:
        response.started.start_revision = message.revision
    elif kind == WatchMessageKind.EVENTS:
        response.events.events.extend(map(event_to_proto, message.events))
    elif kind == WatchMessageKind.PROGRESS:
        response.progress.revision = message.revision
    elif kind == WatchMessageKind.SNAPSHOT_BEGIN:
        response.snapshot_begin.revision = message.revision
    elif kind == WatchMessageKind.SNAPSHOT_CHUNK:
        response.snapshot_chunk.entries.extend(map(entry_to_proto, message.entries))
    else:
        response.snapshot_end.revision = message.revision
        response.snapshot_end.entry_count = message.entry_count
    return response


class SerializedWatchResponses:
    """The serialized WatchResponse of a WatchMessage, built once per
    dispatch: the watchers of one revision that want the same events hold
    the very same events tuple (core/blackboard/watch.py), and their
    messages carry the same header, so one encoding serves them all.

    Keyed by the tuple's identity, not its value: hashing or comparing
    events costs more than encoding them. The cache keeps the tuple alive,
    so an id is never reused while its entry exists. Small, because a
    response may hold up to max_response_bytes."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._recent: dict[tuple[int, int, int, int], tuple[tuple[Event, ...], bytes]] = {}
        # The last message encoded (kept alive here, so its identity is not
        # reused): the watchers of one dispatch usually share the message
        # itself (core/blackboard/watch.py), and this check is the cheapest.
        self._last: tuple[WatchMessage | None, bytes] = (None, b"")

    def __call__(self, message: WatchMessage) -> bytes:
        last, encoded = self._last
        if message is last:
            return encoded
        if message.kind != WatchMessageKind.EVENTS:
            return watch_message_to_proto(message).SerializeToString()
        encoded = self._events(message)
        self._last = (message, encoded)
        return encoded

    def _events(self, message: WatchMessage) -> bytes:
        header = message.header
        key = (id(message.events), header.revision, header.oldest_revision, message.resume_revision)
        cached = self._recent.get(key)
        if cached is not None and cached[0] is message.events:
            return cached[1]
        encoded = watch_message_to_proto(message).SerializeToString()
        if len(self._recent) >= self._size:
            del self._recent[next(iter(self._recent))]
        self._recent[key] = (message.events, encoded)
        return encoded


def serialized_watch_response(response: bytes | pb.WatchResponse) -> bytes:
    """The Watch handler's response serializer: the servicer writes
    responses already serialized (SerializedWatchResponses)."""
    if isinstance(response, bytes):
        return response
    return response.SerializeToString()
