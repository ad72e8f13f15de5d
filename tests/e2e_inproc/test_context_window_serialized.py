"""GetContextWindow answered from the serialized response of an unchanged
window (session_servicer.register): through a real grpc.aio server with
the real interceptors on a real embedded store, a client gets exactly what
the plain servicer answers, every change to the session (append, compaction,
rollback, update, delete) is seen at once, the metrics count the bytes
actually sent, and bad input keeps its INVALID_ARGUMENT."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf import field_mask_pb2
from prometheus_client import CollectorRegistry

from statekeeper.api import session_servicer
from statekeeper.api.access_log import TelemetryInterceptor
from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.api.session_servicer import SessionServicer
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Authenticator
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.telemetry import RpcMetrics
from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1 import session_pb2_grpc

KEY = (("x-api-key", "key-alpha"),)
BUDGET = 300


@dataclass
class Servers:
    serialized: session_pb2_grpc.SessionServiceStub  # through register()
    plain: session_pb2_grpc.SessionServiceStub  # the generated registration
    registry: CollectorRegistry


async def serve(
    sessions: SessionManager, registry: CollectorRegistry, serialized: bool
) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server(
        interceptors=[
            TelemetryInterceptor(None, RpcMetrics(registry)),
            DomainInterceptor(Authenticator({"key-alpha": "alpha"}), Limits()),
        ]
    )
    if serialized:
        session_servicer.register(server, sessions)
    else:
        session_pb2_grpc.add_SessionServiceServicer_to_server(  # type: ignore[no-untyped-call]
            SessionServicer(sessions), server
        )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[Servers]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    counter = TokenCounter()
    sessions = SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())
    registry = CollectorRegistry()
    fast, fast_address = await serve(sessions, registry, serialized=True)
    plain, plain_address = await serve(sessions, CollectorRegistry(), serialized=False)
    channels = [grpc.aio.insecure_channel(a) for a in (fast_address, plain_address)]
    try:
        yield Servers(
            session_pb2_grpc.SessionServiceStub(channels[0]),  # type: ignore[no-untyped-call]
            session_pb2_grpc.SessionServiceStub(channels[1]),  # type: ignore[no-untyped-call]
            registry,
        )
    finally:
        for channel in channels:
            await channel.close()
        await fast.stop(0)
        await plain.stop(0)
        await storage.close()


def window_request(session_id: str = "s", **fields: object) -> pb.GetContextWindowRequest:
    return pb.GetContextWindowRequest(
        session_id=session_id, token_budget=BUDGET, system_prompt="Be brief.", **fields
    )


async def append(stub: session_pb2_grpc.SessionServiceStub, *texts: str) -> pb.Session:
    messages = [pb.SessionMessage(role=pb.ROLE_USER, content=text) for text in texts]
    response = await stub.AppendMessages(
        pb.AppendMessagesRequest(session_id="s", messages=messages), metadata=KEY
    )
    return response.session


async def both_windows(
    servers: Servers, request: pb.GetContextWindowRequest
) -> pb.GetContextWindowResponse:
    """The window through both registrations, twice each (the second from
    what the first left); they must be the same message. Returns it."""
    answers = [
        await stub.GetContextWindow(request, metadata=KEY)
        for stub in (servers.serialized, servers.serialized, servers.plain, servers.plain)
    ]
    for answer in answers[1:]:
        assert answer == answers[0]
    return answers[0]


def contents(window: pb.GetContextWindowResponse) -> list[str]:
    return [message.content for message in window.messages]


def sent_bytes(registry: CollectorRegistry) -> float:
    value = registry.get_sample_value(
        "statekeeper_rpc_sent_bytes_total",
        {
            "grpc_type": "unary",
            "grpc_service": "statekeeper.v1.SessionService",
            "grpc_method": "GetContextWindow",
        },
    )
    return value or 0.0


async def test_an_unchanged_window_is_served_serialized_and_every_change_is_seen(
    servers: Servers,
) -> None:
    stub = servers.serialized
    await stub.CreateSession(
        pb.CreateSessionRequest(session_id="s", session=pb.Session(user_id="u")), metadata=KEY
    )
    texts = [f"message {index} about the weather in city {index}" for index in range(60)]
    session = await append(stub, *texts)
    window = await both_windows(servers, window_request())
    assert contents(window)[-1] == texts[-1]
    assert window.summary and window.version == session.version

    session = await append(stub, "a new question")
    window = await both_windows(servers, window_request())
    assert contents(window)[-1] == "a new question"
    assert window.version == session.version

    # Another request on the same version is another window.
    small = await both_windows(servers, window_request(reserved_output_tokens=200))
    assert len(small.messages) < len(window.messages)

    compacted = await stub.CompactSession(
        pb.CompactSessionRequest(session_id="s", keep_recent_messages=4), metadata=KEY
    )
    window = await both_windows(servers, window_request())
    assert window.version == compacted.session.version
    assert window.summarized_message_count == len(texts) + 1 - len(window.messages)

    rolled = await stub.RollbackSession(
        pb.RollbackSessionRequest(session_id="s", target_version=session.version - 1),
        metadata=KEY,
    )
    window = await both_windows(servers, window_request())
    assert window.version == rolled.session.version
    assert "a new question" not in contents(window)

    updated = await stub.UpdateSession(
        pb.UpdateSessionRequest(
            session=pb.Session(session_id="s", agent_id="planner"),
            update_mask=field_mask_pb2.FieldMask(paths=["agent_id"]),
        ),
        metadata=KEY,
    )
    window = await both_windows(servers, window_request())
    assert window.version == updated.session.version

    await stub.DeleteSession(pb.DeleteSessionRequest(session_id="s"), metadata=KEY)
    with pytest.raises(grpc.aio.AioRpcError) as gone:
        await stub.GetContextWindow(window_request(), metadata=KEY)
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


async def test_sent_bytes_are_those_of_the_serialized_window(servers: Servers) -> None:
    stub = servers.serialized
    await stub.CreateSession(
        pb.CreateSessionRequest(session_id="s", session=pb.Session(user_id="u")), metadata=KEY
    )
    await append(stub, *(f"line {index}" for index in range(20)))
    before = sent_bytes(servers.registry)
    windows = [await stub.GetContextWindow(window_request(), metadata=KEY) for _ in range(3)]
    assert sent_bytes(servers.registry) - before == sum(w.ByteSize() for w in windows) > 0


async def test_bad_window_requests_keep_their_errors(servers: Servers) -> None:
    stub = servers.serialized
    await stub.CreateSession(
        pb.CreateSessionRequest(session_id="s", session=pb.Session(user_id="u")), metadata=KEY
    )
    with pytest.raises(grpc.aio.AioRpcError) as bad:
        await stub.GetContextWindow(
            pb.GetContextWindowRequest(session_id="s", token_budget=0), metadata=KEY
        )
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "token_budget" in (bad.value.details() or "")
