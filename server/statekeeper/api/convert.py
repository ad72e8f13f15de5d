"""proto <-> domain conversions for sessions. No logic beyond translation and
the checks that only make sense on the wire (enum numbers, proto field
presence)."""

from __future__ import annotations

import math
from typing import Any

from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2
from google.protobuf.json_format import MessageToDict

from statekeeper.core.errors import InvalidArgumentError
from statekeeper.core.sessions.models import (
    ChangeKind,
    Message,
    MessageDraft,
    Role,
    SessionDraft,
    SessionRecord,
    SessionStatus,
    SessionVersion,
    ToolCall,
)
from statekeeper_client.v1 import session_pb2 as pb

# The range of google.protobuf.Timestamp (0001-01-01 .. 9999-12-31T23:59:59Z).
_MIN_TIMESTAMP_SECONDS = -62_135_596_800
_MAX_TIMESTAMP_SECONDS = 253_402_300_799


def timestamp(seconds: float | None) -> timestamp_pb2.Timestamp | None:
    """A stored time as a Timestamp, clamped into the range a Timestamp can
    hold: records written before requests were range-checked may hold times a
    float cannot place exactly (9999-12-31T23:59:59.999999999 reads back as
    year 10000), and a read must still answer."""
    if seconds is None:
        return None
    if not math.isfinite(seconds) or not (
        _MIN_TIMESTAMP_SECONDS <= seconds < _MAX_TIMESTAMP_SECONDS
    ):
        bound = _MIN_TIMESTAMP_SECONDS if seconds < 0 else _MAX_TIMESTAMP_SECONDS
        return timestamp_pb2.Timestamp(seconds=bound)
    # What Timestamp.FromNanoseconds sets, in one constructor call.
    whole, nanos = divmod(round(seconds * 1e9), 1_000_000_000)
    return timestamp_pb2.Timestamp(seconds=whole, nanos=nanos)


def duration_seconds(field: str, duration: duration_pb2.Duration) -> float:
    seconds = duration.seconds + duration.nanos / 1e9
    if seconds < 0:
        raise InvalidArgumentError(field, "must not be negative")
    return seconds


def struct_to_dict(value: struct_pb2.Struct) -> dict[str, Any]:
    return MessageToDict(value)


def dict_to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def status_from_proto(field: str, value: int, allow_unset: bool) -> SessionStatus | None:
    if value == pb.SESSION_STATUS_UNSPECIFIED:
        if allow_unset:
            return None
        raise InvalidArgumentError(field, "must be set")
    try:
        return SessionStatus(value)
    except ValueError:
        raise InvalidArgumentError(field, f"unknown status {value}") from None


def role_from_proto(field: str, value: int) -> Role:
    if value == pb.ROLE_UNSPECIFIED:
        raise InvalidArgumentError(field, "is required")
    try:
        return Role(value)
    except ValueError:
        raise InvalidArgumentError(field, f"unknown role {value}") from None


def tool_call_from_proto(call: pb.ToolCall) -> ToolCall:
    return ToolCall(id=call.id, name=call.name, arguments=call.arguments)


def tool_call_to_proto(call: ToolCall) -> pb.ToolCall:
    return pb.ToolCall(id=call.id, name=call.name, arguments=call.arguments)


def session_draft(session: pb.Session, field: str = "session") -> SessionDraft:
    return SessionDraft(
        user_id=session.user_id,
        agent_id=session.agent_id,
        status=status_from_proto(f"{field}.status", session.status, allow_unset=True),
        context_variables=struct_to_dict(session.context_variables),
        active_tools=tuple(session.active_tools),
        pending_tool_calls=tuple(tool_call_from_proto(c) for c in session.pending_tool_calls),
        metadata=dict(session.metadata),
        ttl_seconds=duration_seconds(f"{field}.ttl", session.ttl),
    )


# The updatable fields of a Session: those set when not empty, and the
# message fields, set when present (an empty context_variables is a value).
_VALUE_PATHS = ("agent_id", "status", "active_tools", "pending_tool_calls", "metadata")
_MESSAGE_PATHS = ("context_variables", "ttl")


def set_paths(session: pb.Session) -> set[str]:
    """The updatable fields that are set, for an update without a mask."""
    paths = {path for path in _VALUE_PATHS if getattr(session, path)}
    paths.update(path for path in _MESSAGE_PATHS if session.HasField(path))
    return paths


def message_draft(message: pb.SessionMessage, field: str) -> MessageDraft:
    return MessageDraft(
        role=role_from_proto(f"{field}.role", message.role),
        content=message.content,
        name=message.name,
        tool_calls=tuple(tool_call_from_proto(c) for c in message.tool_calls),
        tool_call_id=message.tool_call_id,
        metadata=dict(message.metadata),
    )


def session_to_proto(record: SessionRecord) -> pb.Session:
    # Every write answers with its session: empty fields are left out of the
    # constructor (cheaper), context_variables is present even when empty.
    session = pb.Session(
        session_id=record.session_id,
        user_id=record.user_id,
        agent_id=record.agent_id,
        status=int(record.status),  # type: ignore[arg-type]
        create_time=timestamp(record.create_time),
        update_time=timestamp(record.update_time),
        expire_time=timestamp(record.expire_time),
        version=record.version,
        etag=record.etag,
        message_count=record.message_count,
        window_message_count=record.window_message_count,
        window_tokens=record.window_tokens,
        compaction_summary=record.compaction_summary,
        compacted_through_sequence=record.compacted_through,
    )
    if record.context_variables:
        session.context_variables.update(record.context_variables)
    else:
        session.context_variables.SetInParent()
    if record.active_tools:
        session.active_tools.extend(record.active_tools)
    if record.pending_tool_calls:
        session.pending_tool_calls.extend(tool_call_to_proto(c) for c in record.pending_tool_calls)
    if record.metadata:
        session.metadata.update(record.metadata)
    if record.ttl_seconds > 0:
        session.ttl.FromNanoseconds(round(record.ttl_seconds * 1e9))
    return session


def message_to_proto(message: Message) -> pb.SessionMessage:
    return pb.SessionMessage(
        sequence=message.sequence,
        message_id=message.message_id,
        role=int(message.role),  # type: ignore[arg-type]
        content=message.content,
        name=message.name,
        tool_calls=[tool_call_to_proto(c) for c in message.tool_calls],
        tool_call_id=message.tool_call_id,
        metadata=message.metadata,
        token_count=message.token_count,
        create_time=timestamp(message.create_time),
        rolled_back=message.rolled_back,
    )


def version_to_proto(version: SessionVersion) -> pb.SessionVersion:
    return pb.SessionVersion(
        version=version.version,
        parent_version=version.parent_version,
        change_kind=int(ChangeKind(version.change_kind)),  # type: ignore[arg-type]
        create_time=timestamp(version.create_time),
        session=session_to_proto(version.snapshot),
    )


def optional_seconds(message: object, field: str) -> float | None:
    """The seconds of a Duration field, or None when it is unset."""
    if not message.HasField(field):  # type: ignore[attr-defined]
        return None
    return duration_seconds(field, getattr(message, field))


class SerializedResponse:
    """A unary response already serialized, answered as is through a
    handler whose serializer is `serialized_response`. It tells its size
    like a message does (ByteSize), for what measures responses (the access
    log) without encoding them again."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def ByteSize(self) -> int:
        return len(self.data)


def serialized_response(response: SerializedResponse | Any) -> bytes:
    """Response serializer of a handler whose servicer may answer with a
    SerializedResponse (GetContextWindow, see session_servicer.register)."""
    if isinstance(response, SerializedResponse):
        return response.data
    data: bytes = response.SerializeToString()
    return data
