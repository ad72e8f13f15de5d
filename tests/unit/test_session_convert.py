"""session_to_proto and timestamp give the same messages (bytes and field
presence) as the straightforward construction they replaced."""

from __future__ import annotations

import math

import pytest
from google.protobuf import struct_pb2, timestamp_pb2

from statekeeper.api import convert
from statekeeper.core.sessions.models import SessionRecord, SessionStatus, ToolCall
from statekeeper_client.v1 import session_pb2 as pb


def reference_timestamp(seconds: float | None) -> timestamp_pb2.Timestamp | None:
    if seconds is None:
        return None
    if not math.isfinite(seconds) or not (-62_135_596_800 <= seconds < 253_402_300_799):
        return timestamp_pb2.Timestamp(seconds=-62_135_596_800 if seconds < 0 else 253_402_300_799)
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(round(seconds * 1e9))
    return stamp


def reference_session(record: SessionRecord) -> pb.Session:
    context = struct_pb2.Struct()
    context.update(record.context_variables)
    session = pb.Session(
        session_id=record.session_id,
        user_id=record.user_id,
        agent_id=record.agent_id,
        status=int(record.status),  # type: ignore[arg-type]
        context_variables=context,
        active_tools=list(record.active_tools),
        pending_tool_calls=[
            pb.ToolCall(id=c.id, name=c.name, arguments=c.arguments)
            for c in record.pending_tool_calls
        ],
        metadata=record.metadata,
        create_time=reference_timestamp(record.create_time),
        update_time=reference_timestamp(record.update_time),
        expire_time=reference_timestamp(record.expire_time),
        version=record.version,
        etag=record.etag,
        message_count=record.message_count,
        window_message_count=record.window_message_count,
        window_tokens=record.window_tokens,
        compaction_summary=record.compaction_summary,
        compacted_through_sequence=record.compacted_through,
    )
    if record.ttl_seconds > 0:
        session.ttl.FromNanoseconds(round(record.ttl_seconds * 1e9))
    return session


BARE = SessionRecord(session_id="s", user_id="u", version=2, create_time=1.5, update_time=2.25)
FULL = BARE.evolve(
    agent_id="agent",
    status=SessionStatus.PAUSED,
    context_variables={"nested": {"list": [1, "two", None, True]}, "n": 3.5},
    active_tools=("search", "book"),
    pending_tool_calls=(ToolCall("c1", "search", '{"q": 1}'), ToolCall("c2", "book", "{}")),
    metadata={"k": "v", "other": ""},
    ttl_seconds=90.125,
    expire_time=1_700_000_000.987654321,
    message_count=7,
    window_message_count=5,
    window_tokens=120,
    compaction_summary="earlier: greetings",
    compacted_through=2,
)


@pytest.mark.parametrize("record", [BARE, FULL], ids=["bare", "full"])
def test_session_to_proto_is_unchanged(record: SessionRecord) -> None:
    ours, reference = convert.session_to_proto(record), reference_session(record)
    assert ours == reference
    assert ours.SerializeToString(deterministic=True) == reference.SerializeToString(
        deterministic=True
    )
    for name in ("context_variables", "create_time", "update_time", "expire_time", "ttl"):
        assert ours.HasField(name) == reference.HasField(name), name


@pytest.mark.parametrize(
    "seconds",
    [
        None,
        0.0,
        1.5,
        -1.5,
        -0.000000001,
        1_700_000_000.123456789,
        1e-10,
        253_402_300_798.9999,
        -62_135_596_800.0,
        1e20,
        -1e20,
        math.inf,
        -math.inf,
        math.nan,
    ],
)
def test_timestamp_is_unchanged(seconds: float | None) -> None:
    assert convert.timestamp(seconds) == reference_timestamp(seconds)
