"""Tests of the client layer's own behaviour: auth metadata, retries on
UNAVAILABLE only, idempotency keys, ErrorInfo decoding, and the resuming
Watch. They run against a scripted gRPC server on loopback, because the failure
paths (a stream broken half way, UNAVAILABLE twice then success) cannot be
produced on demand by the real server; the real server is exercised by the
conformance scenario (scripts/conformance.sh)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from statekeeper_client import (
    NO_RETRY,
    AsyncClient,
    Client,
    RetryPolicy,
    ServiceNotImplementedError,
    StatekeeperRpcError,
    TlsOptions,
)
from statekeeper_client.v1 import (
    blackboard_pb2,
    blackboard_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)

FAST = RetryPolicy(max_attempts=4, initial_backoff=0.01, max_backoff=0.05, jitter=0)


def _abort(
    context: grpc.ServicerContext, code: grpc.StatusCode, message: str, reason: str, **metadata: str
) -> None:
    info = error_details_pb2.ErrorInfo(reason=reason, domain="statekeeper.dev", metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    context.abort_with_status(_RichStatus(code, message, status.SerializeToString()))


class _RichStatus(grpc.Status):
    def __init__(self, code: grpc.StatusCode, details: str, payload: bytes) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = (("grpc-status-details-bin", payload),)


class Sessions(session_pb2_grpc.SessionServiceServicer):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, dict[str, str]]] = []
        self.unavailable_left = 0
        self.fail_with: grpc.StatusCode | None = None

    def _record(self, name: str, request: Any, context: grpc.ServicerContext) -> None:
        self.calls.append((name, request, dict(context.invocation_metadata())))

    def GetSession(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record("GetSession", request, context)
        if self.unavailable_left > 0:
            self.unavailable_left -= 1
            context.abort(grpc.StatusCode.UNAVAILABLE, "try again")
        if self.fail_with is not None:
            _abort(context, self.fail_with, "stale etag", "ETAG_MISMATCH", field="expected_etag")
        return session_pb2.GetSessionResponse(
            session=session_pb2.Session(session_id=request.session_id)
        )

    def AppendMessages(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record("AppendMessages", request, context)
        if self.unavailable_left > 0:
            self.unavailable_left -= 1
            context.abort(grpc.StatusCode.UNAVAILABLE, "lost the reply")
        return session_pb2.AppendMessagesResponse()


class Blackboard(blackboard_pb2_grpc.BlackboardServiceServicer):
    """Watch streams scripted per call: each script is a list of
    WatchResponse or a StatusCode to end the stream with."""

    def __init__(self) -> None:
        self.requests: list[blackboard_pb2.WatchRequest] = []
        self.scripts: list[list[Any]] = []
        self.unimplemented = False

    def Watch(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        self.requests.append(request)
        if self.unimplemented:
            # What grpc answers for a method the server does not serve.
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        script = self.scripts.pop(0) if self.scripts else []
        for item in script:
            if isinstance(item, grpc.StatusCode):
                context.abort(item, "scripted end")
            yield item
        threading.Event().wait(5)  # hold the stream open until the client cancels


def started(revision: int) -> blackboard_pb2.WatchResponse:
    return blackboard_pb2.WatchResponse(
        started=blackboard_pb2.WatchStarted(start_revision=revision), resume_revision=revision
    )


def event(revision: int, key: str) -> blackboard_pb2.WatchResponse:
    return blackboard_pb2.WatchResponse(
        events=blackboard_pb2.WatchEvents(
            events=[
                blackboard_pb2.BlackboardEvent(
                    type=blackboard_pb2.BLACKBOARD_EVENT_TYPE_PUT,
                    revision=revision,
                    entry=blackboard_pb2.BlackboardEntry(key=key, mod_revision=revision),
                )
            ]
        ),
        resume_revision=revision + 1,
    )


@pytest.fixture
def server() -> Iterator[tuple[str, Sessions, Blackboard]]:
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    sessions, board = Sessions(), Blackboard()
    session_pb2_grpc.add_SessionServiceServicer_to_server(sessions, srv)
    blackboard_pb2_grpc.add_BlackboardServiceServicer_to_server(board, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    yield f"127.0.0.1:{port}", sessions, board
    srv.stop(grace=None)


def test_api_key_and_bearer_are_sent(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, sessions, _ = server
    with Client(addr, api_key="k1") as sk:
        sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="s"))
    with Client(addr, bearer_token="t1") as sk:
        sk.sessions.GetSession(
            session_pb2.GetSessionRequest(session_id="s"), metadata=[("x-trace", "1")]
        )
    assert sessions.calls[0][2]["x-api-key"] == "k1"
    assert sessions.calls[1][2]["authorization"] == "Bearer t1"
    assert sessions.calls[1][2]["x-trace"] == "1"
    with pytest.raises(ValueError):
        Client(addr, api_key="k", bearer_token="t")


def test_unavailable_is_retried_then_succeeds(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, sessions, _ = server
    sessions.unavailable_left = 2
    with Client(addr, api_key="k", retry=FAST) as sk:
        got = sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="s1"))
    assert got.session.session_id == "s1"
    assert len(sessions.calls) == 3


def test_unavailable_gives_up_after_max_attempts(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, sessions, _ = server
    sessions.unavailable_left = 100
    with Client(addr, retry=FAST) as sk, pytest.raises(StatekeeperRpcError) as raised:
        sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="s1"))
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert len(sessions.calls) == FAST.max_attempts
    sessions.calls.clear()
    with Client(addr, retry=NO_RETRY) as sk, pytest.raises(grpc.RpcError):
        sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="s1"))
    assert len(sessions.calls) == 1


def test_other_codes_are_not_retried_and_carry_error_info(
    server: tuple[str, Sessions, Blackboard],
) -> None:
    addr, sessions, _ = server
    sessions.fail_with = grpc.StatusCode.ABORTED
    with Client(addr, retry=FAST) as sk, pytest.raises(StatekeeperRpcError) as raised:
        sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="s1"))
    error = raised.value
    assert len(sessions.calls) == 1
    assert error.code() == grpc.StatusCode.ABORTED
    assert error.reason == "ETAG_MISMATCH"
    assert error.domain == "statekeeper.dev"
    assert error.error_metadata == {"field": "expected_etag"}
    assert "SessionService/GetSession" in str(error)


def test_retried_append_keeps_one_request_id(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, sessions, _ = server
    sessions.unavailable_left = 1
    request = session_pb2.AppendMessagesRequest(session_id="s1")
    with Client(addr, retry=FAST) as sk:
        sk.sessions.AppendMessages(request)
    ids = [call[1].request_id for call in sessions.calls]
    assert len(ids) == 2 and ids[0] and ids[0] == ids[1]
    assert request.request_id == ""  # the caller's message is not modified
    sessions.calls.clear()
    with Client(addr, retry=FAST) as sk:
        sk.sessions.AppendMessages(
            session_pb2.AppendMessagesRequest(session_id="s1", request_id="mine")
        )
    assert sessions.calls[0][1].request_id == "mine"


def test_deadline_bounds_the_retries(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, sessions, _ = server
    sessions.unavailable_left = 100
    slow = RetryPolicy(max_attempts=50, initial_backoff=0.2, max_backoff=0.2, jitter=0)
    with Client(addr, retry=slow) as sk, pytest.raises(StatekeeperRpcError):
        sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="s"), timeout=0.5)
    assert 1 < len(sessions.calls) <= 4


def test_watch_resumes_from_last_revision(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, _, board = server
    board.scripts = [
        [started(5), event(5, "plan/a"), event(6, "plan/b"), grpc.StatusCode.UNAVAILABLE],
        [started(7), event(7, "plan/c")],
    ]
    with Client(addr, api_key="k", retry=FAST) as sk:
        seen = []
        with sk.watch("b1", prefix="plan/", timeout=5) as watch:
            for ev in watch:
                seen.append((ev.revision, ev.entry.key))
                if len(seen) == 3:
                    break
        assert seen == [(5, "plan/a"), (6, "plan/b"), (7, "plan/c")]
        assert watch.resume_revision == 8
        assert watch.streams_opened == 2
    assert [r.start_revision for r in board.requests] == [0, 7]
    assert all(r.prefix == "plan/" and r.board == "b1" for r in board.requests)


def test_watch_restarts_an_interrupted_snapshot(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, _, board = server
    chunk = blackboard_pb2.WatchResponse(
        snapshot_chunk=blackboard_pb2.WatchSnapshotChunk(
            entries=[blackboard_pb2.BlackboardEntry(key="k")]
        )
    )
    board.scripts = [
        [
            started(0),
            blackboard_pb2.WatchResponse(
                snapshot_begin=blackboard_pb2.WatchSnapshotBegin(revision=9)
            ),
            chunk,
            grpc.StatusCode.UNAVAILABLE,
        ],
        [
            started(0),
            blackboard_pb2.WatchResponse(
                snapshot_begin=blackboard_pb2.WatchSnapshotBegin(revision=9)
            ),
            chunk,
            blackboard_pb2.WatchResponse(
                snapshot_end=blackboard_pb2.WatchSnapshotEnd(revision=9, entry_count=1),
                resume_revision=10,
            ),
            event(10, "k"),
        ],
    ]
    with Client(addr, retry=FAST) as sk:
        watch = sk.watch("b1", initial_snapshot=True, timeout=5)
        kinds = []
        for response in watch.responses():
            kinds.append(response.WhichOneof("kind"))
            if kinds[-1] == "events":
                watch.cancel()
                break
    assert [r.initial_snapshot for r in board.requests] == [True, True]
    assert [r.start_revision for r in board.requests] == [0, 0]
    assert watch.resume_revision == 11


def test_watch_surfaces_unimplemented(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, _, board = server
    board.unimplemented = True
    with Client(addr, retry=FAST) as sk, pytest.raises(ServiceNotImplementedError) as raised:
        next(iter(sk.watch("b1", timeout=5)))
    assert raised.value.reason == ""
    assert raised.value.capability == "Method not found!"
    assert len(board.requests) == 1  # not retried


def test_watch_does_not_retry_compaction(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, _, board = server
    board.scripts = [[grpc.StatusCode.OUT_OF_RANGE]]
    with Client(addr, retry=FAST) as sk, pytest.raises(StatekeeperRpcError) as raised:
        list(sk.watch("b1", start_revision=3, timeout=5))
    assert raised.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert len(board.requests) == 1


async def test_async_client_retries_and_watches(server: tuple[str, Sessions, Blackboard]) -> None:
    addr, sessions, board = server
    sessions.unavailable_left = 2
    board.scripts = [
        [started(1), event(1, "x"), grpc.StatusCode.UNAVAILABLE],
        [started(2), event(2, "y")],
    ]
    async with AsyncClient(addr, api_key="k", retry=FAST) as sk:
        got = await sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="a"))
        assert got.session.session_id == "a"
        assert len(sessions.calls) == 3
        assert sessions.calls[-1][2]["x-api-key"] == "k"
        seen = []
        async with sk.watch("b1", timeout=5) as watch:
            async for ev in watch:
                seen.append(ev.revision)
                if len(seen) == 2:
                    break
        assert seen == [1, 2]
        assert [r.start_revision for r in board.requests] == [0, 2]
        sessions.fail_with = grpc.StatusCode.ABORTED
        with pytest.raises(StatekeeperRpcError) as raised:
            await sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="a"))
        assert raised.value.reason == "ETAG_MISMATCH"


def test_tls_options_from_the_environment_and_their_checks() -> None:
    assert TlsOptions.from_env({}) is None
    assert TlsOptions.from_env({"STATEKEEPER_TLS_ROOT_CA": ""}) is None
    options = TlsOptions.from_env(
        {"STATEKEEPER_TLS_ROOT_CA": "ca.pem", "STATEKEEPER_TLS_SERVER_NAME": "sk.example"}
    )
    assert options == TlsOptions(root_ca="ca.pem", server_name="sk.example")
    assert options.channel_options() == [("grpc.ssl_target_name_override", "sk.example")]
    with pytest.raises(ValueError, match="together"):
        TlsOptions(client_cert=b"cert")
    with pytest.raises(ValueError, match="not both"):
        Client("127.0.0.1:1", tls=TlsOptions(), credentials=grpc.ssl_channel_credentials())
