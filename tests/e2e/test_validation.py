"""Bad input on every implemented RPC gets the right code with the field
named; nothing gets INTERNAL or UNKNOWN; the server stays up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, field_mask_pb2, struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import ServerProcess, auth
from tests.e2e.errors import bad_field

INVALID = grpc.StatusCode.INVALID_ARGUMENT
TOO_BIG = grpc.StatusCode.RESOURCE_EXHAUSTED
BIG = "x" * (256 * 1024 + 1)


def ok_user() -> pb.SessionMessage:
    return pb.SessionMessage(role=pb.ROLE_USER, content="hello")


# (case id, rpc name, request, expected code, expected field)
CASES: list[tuple[str, str, Any, grpc.StatusCode, str]] = [
    (
        "create-bad-id",
        "CreateSession",
        pb.CreateSessionRequest(session_id="bad id/../x", session=pb.Session(user_id="u")),
        INVALID,
        "session_id",
    ),
    (
        "create-long-id",
        "CreateSession",
        pb.CreateSessionRequest(session_id="a" * 129, session=pb.Session(user_id="u")),
        INVALID,
        "session_id",
    ),
    (
        "create-no-user",
        "CreateSession",
        pb.CreateSessionRequest(session_id="v1", session=pb.Session()),
        INVALID,
        "session.user_id",
    ),
    (
        "create-unknown-status",
        "CreateSession",
        pb.CreateSessionRequest(session=pb.Session(user_id="u", status=42)),  # type: ignore[arg-type]
        INVALID,
        "session.status",
    ),
    (
        "create-negative-ttl",
        "CreateSession",
        pb.CreateSessionRequest(
            session=pb.Session(user_id="u", ttl=duration_pb2.Duration(seconds=-5))
        ),
        INVALID,
        "session.ttl",
    ),
    (
        "create-huge-ttl",
        "CreateSession",
        pb.CreateSessionRequest(
            session=pb.Session(user_id="u", ttl=duration_pb2.Duration(seconds=10**9))
        ),
        TOO_BIG,
        "session.ttl",
    ),
    (
        "create-too-much-metadata",
        "CreateSession",
        pb.CreateSessionRequest(
            session=pb.Session(user_id="u", metadata={f"k{i}": "v" for i in range(65)})
        ),
        TOO_BIG,
        "session.metadata",
    ),
    (
        "create-huge-variables",
        "CreateSession",
        pb.CreateSessionRequest(
            session=pb.Session(
                user_id="u",
                context_variables=struct_pb2.Struct(
                    fields={"blob": struct_pb2.Value(string_value=BIG)}
                ),
            )
        ),
        TOO_BIG,
        "session.context_variables",
    ),
    ("get-empty-id", "GetSession", pb.GetSessionRequest(), INVALID, "session_id"),
    ("get-bad-id", "GetSession", pb.GetSessionRequest(session_id="a b"), INVALID, "session_id"),
    (
        "list-negative-page",
        "ListSessions",
        pb.ListSessionsRequest(page_size=-1),
        INVALID,
        "page_size",
    ),
    (
        "list-bad-token",
        "ListSessions",
        pb.ListSessionsRequest(page_token="%%%not-a-token"),
        INVALID,
        "page_token",
    ),
    ("list-unknown-status", "ListSessions", pb.ListSessionsRequest(status=99), INVALID, "status"),  # type: ignore[arg-type]
    (
        "update-unknown-path",
        "UpdateSession",
        pb.UpdateSessionRequest(
            session=pb.Session(session_id="valid"),
            update_mask=field_mask_pb2.FieldMask(paths=["no_such_field"]),
        ),
        INVALID,
        "update_mask",
    ),
    (
        "update-immutable-path",
        "UpdateSession",
        pb.UpdateSessionRequest(
            session=pb.Session(session_id="valid", user_id="x"),
            update_mask=field_mask_pb2.FieldMask(paths=["user_id"]),
        ),
        INVALID,
        "update_mask",
    ),
    (
        "update-empty-id",
        "UpdateSession",
        pb.UpdateSessionRequest(update_mask=field_mask_pb2.FieldMask(paths=["agent_id"])),
        INVALID,
        "session.session_id",
    ),
    ("delete-empty-id", "DeleteSession", pb.DeleteSessionRequest(), INVALID, "session_id"),
    (
        "append-no-messages",
        "AppendMessages",
        pb.AppendMessagesRequest(session_id="valid"),
        INVALID,
        "messages",
    ),
    (
        "append-unknown-role",
        "AppendMessages",
        pb.AppendMessagesRequest(
            session_id="valid", messages=[ok_user(), pb.SessionMessage(role=17, content="x")]
        ),  # type: ignore[arg-type]
        INVALID,
        "messages[1].role",
    ),
    (
        "append-unset-role",
        "AppendMessages",
        pb.AppendMessagesRequest(session_id="valid", messages=[pb.SessionMessage(content="x")]),
        INVALID,
        "messages[0].role",
    ),
    (
        "append-oversized",
        "AppendMessages",
        pb.AppendMessagesRequest(
            session_id="valid", messages=[pb.SessionMessage(role=pb.ROLE_USER, content=BIG)]
        ),
        TOO_BIG,
        "messages[0].content",
    ),
    (
        "append-too-many",
        "AppendMessages",
        pb.AppendMessagesRequest(session_id="valid", messages=[ok_user()] * 101),
        TOO_BIG,
        "messages",
    ),
    (
        "append-bad-request-id",
        "AppendMessages",
        pb.AppendMessagesRequest(session_id="valid", messages=[ok_user()], request_id="no spaces"),
        INVALID,
        "request_id",
    ),
    (
        "messages-negative-page",
        "ListMessages",
        pb.ListMessagesRequest(session_id="valid", page_size=-3),
        INVALID,
        "page_size",
    ),
    (
        "window-zero-budget",
        "GetContextWindow",
        pb.GetContextWindowRequest(session_id="valid"),
        INVALID,
        "token_budget",
    ),
    (
        "window-negative-reserve",
        "GetContextWindow",
        pb.GetContextWindowRequest(session_id="valid", token_budget=100, reserved_output_tokens=-1),
        INVALID,
        "reserved_output_tokens",
    ),
    (
        "window-huge-budget",
        "GetContextWindow",
        pb.GetContextWindowRequest(session_id="valid", token_budget=2_000_001),
        TOO_BIG,
        "token_budget",
    ),
    (
        "compact-negative-keep",
        "CompactSession",
        pb.CompactSessionRequest(session_id="valid", keep_recent_messages=-2),
        INVALID,
        "keep_recent_messages",
    ),
    (
        "versions-negative-page",
        "ListSessionVersions",
        pb.ListSessionVersionsRequest(session_id="valid", page_size=-1),
        INVALID,
        "page_size",
    ),
    (
        "version-zero",
        "GetSessionVersion",
        pb.GetSessionVersionRequest(session_id="valid"),
        INVALID,
        "version",
    ),
    (
        "rollback-zero",
        "RollbackSession",
        pb.RollbackSessionRequest(session_id="valid"),
        INVALID,
        "target_version",
    ),
    (
        "rollback-future",
        "RollbackSession",
        pb.RollbackSessionRequest(session_id="valid", target_version=99),
        INVALID,
        "target_version",
    ),
]


@pytest.fixture(scope="module", autouse=True)
def valid_session(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        SessionServiceStub(channel).CreateSession(
            pb.CreateSessionRequest(session_id="valid", session=pb.Session(user_id="u")),
            metadata=auth(),
        )


@pytest.mark.parametrize(
    ("rpc", "request_message", "code", "field"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_input(
    sessions: SessionServiceStub,
    rpc: str,
    request_message: Any,
    code: grpc.StatusCode,
    field: str,
) -> None:
    call: Callable[..., Any] = getattr(sessions, rpc)
    with pytest.raises(grpc.RpcError) as failure:
        call(request_message, metadata=auth())
    assert failure.value.code() == code, failure.value.details()
    assert bad_field(failure.value) == field
    assert field in (failure.value.details() or "")


def test_garbage_bytes_are_invalid_argument(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        raw = channel.unary_unary("/statekeeper.v1.SessionService/GetSession")
        with pytest.raises(grpc.RpcError) as failure:
            raw(b"\xff\xff\xff\xff\x0f", metadata=auth())
        assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert bad_field(failure.value) == "request"


def test_not_found_codes(sessions: SessionServiceStub) -> None:
    for call in (
        lambda: sessions.GetSession(pb.GetSessionRequest(session_id="missing"), metadata=auth()),
        lambda: sessions.AppendMessages(
            pb.AppendMessagesRequest(session_id="missing", messages=[ok_user()]), metadata=auth()
        ),
        lambda: sessions.GetSessionVersion(
            pb.GetSessionVersionRequest(session_id="valid", version=999), metadata=auth()
        ),
    ):
        with pytest.raises(grpc.RpcError) as failure:
            call()
        assert failure.value.code() == grpc.StatusCode.NOT_FOUND


def test_duplicate_create_is_already_exists(sessions: SessionServiceStub) -> None:
    with pytest.raises(grpc.RpcError) as failure:
        sessions.CreateSession(
            pb.CreateSessionRequest(session_id="valid", session=pb.Session(user_id="u")),
            metadata=auth(),
        )
    assert failure.value.code() == grpc.StatusCode.ALREADY_EXISTS


def test_budget_below_fixed_parts_is_failed_precondition(sessions: SessionServiceStub) -> None:
    with pytest.raises(grpc.RpcError) as failure:
        sessions.GetContextWindow(
            pb.GetContextWindowRequest(
                session_id="valid", token_budget=50, reserved_output_tokens=49
            ),
            metadata=auth(),
        )
    assert failure.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_missing_or_wrong_key_is_unauthenticated(sessions: SessionServiceStub) -> None:
    for metadata in ([], [("x-api-key", "wrong")], [("authorization", "Bearer wrong")]):
        with pytest.raises(grpc.RpcError) as failure:
            sessions.GetSession(pb.GetSessionRequest(session_id="valid"), metadata=metadata)
        assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED
    bearer = [("authorization", "Bearer key-alpha")]
    assert sessions.GetSession(pb.GetSessionRequest(session_id="valid"), metadata=bearer)


def test_server_still_serving(server: ServerProcess) -> None:
    assert server.process is not None and server.process.poll() is None
    with grpc.insecure_channel(server.address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert "Traceback" not in server.log(), "an error escaped as INTERNAL"
