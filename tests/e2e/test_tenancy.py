"""One tenant cannot read, list, change or delete another tenant's sessions
by any call, whatever ids it sends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import field_mask_pb2

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import auth

ALPHA = auth("key-alpha")
BETA = auth("key-beta")


@pytest.fixture(scope="module")
def alpha_session(server: Any) -> str:
    with grpc.insecure_channel(server.address) as channel:
        stub = SessionServiceStub(channel)
        stub.CreateSession(
            pb.CreateSessionRequest(
                session_id="secret", session=pb.Session(user_id="alice", agent_id="a1")
            ),
            metadata=ALPHA,
        )
        stub.AppendMessages(
            pb.AppendMessagesRequest(
                session_id="secret",
                messages=[pb.SessionMessage(role=pb.ROLE_USER, content="alpha's secret")],
                request_id="alpha-req",
            ),
            metadata=ALPHA,
        )
    return "secret"


def beta_calls(stub: SessionServiceStub, session_id: str) -> dict[str, Callable[[], Any]]:
    return {
        "get": lambda: stub.GetSession(pb.GetSessionRequest(session_id=session_id), metadata=BETA),
        "update": lambda: stub.UpdateSession(
            pb.UpdateSessionRequest(
                session=pb.Session(session_id=session_id, agent_id="evil"),
                update_mask=field_mask_pb2.FieldMask(paths=["agent_id"]),
            ),
            metadata=BETA,
        ),
        "delete": lambda: stub.DeleteSession(
            pb.DeleteSessionRequest(session_id=session_id), metadata=BETA
        ),
        "append": lambda: stub.AppendMessages(
            pb.AppendMessagesRequest(
                session_id=session_id, messages=[pb.SessionMessage(role=pb.ROLE_USER, content="x")]
            ),
            metadata=BETA,
        ),
        "list-messages": lambda: stub.ListMessages(
            pb.ListMessagesRequest(session_id=session_id), metadata=BETA
        ),
        "window": lambda: stub.GetContextWindow(
            pb.GetContextWindowRequest(session_id=session_id, token_budget=1000), metadata=BETA
        ),
        "compact": lambda: stub.CompactSession(
            pb.CompactSessionRequest(session_id=session_id, keep_recent_messages=1),
            metadata=BETA,
        ),
        "versions": lambda: stub.ListSessionVersions(
            pb.ListSessionVersionsRequest(session_id=session_id), metadata=BETA
        ),
        "version": lambda: stub.GetSessionVersion(
            pb.GetSessionVersionRequest(session_id=session_id, version=1), metadata=BETA
        ),
        "rollback": lambda: stub.RollbackSession(
            pb.RollbackSessionRequest(session_id=session_id, target_version=1), metadata=BETA
        ),
    }


def test_other_tenant_sees_nothing(sessions: SessionServiceStub, alpha_session: str) -> None:
    for name, call in beta_calls(sessions, alpha_session).items():
        with pytest.raises(grpc.RpcError) as failure:
            call()
        assert failure.value.code() == grpc.StatusCode.NOT_FOUND, name
    listed = sessions.ListSessions(pb.ListSessionsRequest(user_id="alice"), metadata=BETA)
    assert list(listed.sessions) == []
    # Replaying alpha's idempotency key from beta does not reveal alpha's messages.
    sessions.CreateSession(
        pb.CreateSessionRequest(session_id="beta-own", session=pb.Session(user_id="bob")),
        metadata=BETA,
    )
    replay = sessions.AppendMessages(
        pb.AppendMessagesRequest(
            session_id="beta-own",
            messages=[pb.SessionMessage(role=pb.ROLE_USER, content="beta's own")],
            request_id="alpha-req",
        ),
        metadata=BETA,
    )
    assert not replay.replayed and replay.messages[0].content == "beta's own"
    # Alpha's session is untouched.
    own = sessions.GetSession(pb.GetSessionRequest(session_id="secret"), metadata=ALPHA).session
    assert own.agent_id == "a1" and own.message_count == 1 and own.version == 2


def test_same_id_in_two_tenants_is_two_sessions(
    sessions: SessionServiceStub, alpha_session: str
) -> None:
    beta = sessions.CreateSession(
        pb.CreateSessionRequest(session_id=alpha_session, session=pb.Session(user_id="bob")),
        metadata=BETA,
    ).session
    assert beta.user_id == "bob" and beta.version == 1
    alpha = sessions.GetSession(pb.GetSessionRequest(session_id=alpha_session), metadata=ALPHA)
    assert alpha.session.user_id == "alice"
    sessions.DeleteSession(pb.DeleteSessionRequest(session_id=alpha_session), metadata=BETA)
    still = sessions.GetSession(pb.GetSessionRequest(session_id=alpha_session), metadata=ALPHA)
    assert still.session.message_count == 1
