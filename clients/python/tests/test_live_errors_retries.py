"""Typed errors and safe retries against a real server.

The retry tests put a loopback TCP proxy between the client and the server
that, once armed, forwards the next bytes the client sends (the call) to the
server, lets the server apply it, and then cuts the connection before the
answer comes back: the client sees UNAVAILABLE for a call that was applied.
A mutation without an idempotency key must then not be repeated; one with a
key (set by the client) is repeated and the server replays its first answer;
a read is repeated."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from live import API_KEY, REPO, LiveServer, scaled

from statekeeper_client import Client, RetryPolicy, StatekeeperRpcError, errors
from statekeeper_client._common import IDEMPOTENT, KEYED, READ, SERVICES, UNSAFE, retry_safety
from statekeeper_client.v1 import blackboard_pb2, common_pb2, session_pb2

PATIENT = RetryPolicy(max_attempts=20, initial_backoff=0.05, max_backoff=0.5, jitter=0.1)


class CuttingProxy:
    """127.0.0.1:<port> -> upstream; `arm()` makes it cut the connection
    that next carries client bytes, after forwarding them and waiting
    `hold` seconds, without passing any answer back."""

    def __init__(self, upstream: str, hold: float) -> None:
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.hold = hold
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.armed = threading.Event()
        self.cuts = 0
        self.sockets: list[socket.socket] = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self) -> None:
        self.armed.set()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            self.sockets += [client, server]
            cutting = threading.Event()
            threading.Thread(target=self._up, args=(client, server, cutting), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, cutting), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, cutting: threading.Event) -> None:
        try:
            while data := client.recv(65536):
                if self.armed.is_set():
                    self.armed.clear()
                    cutting.set()
                    server.sendall(data)
                    time.sleep(self.hold)
                    self.cuts += 1
                    break
                server.sendall(data)
        except OSError:
            pass
        for sock in (client, server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _down(self, server: socket.socket, client: socket.socket, cutting: threading.Event) -> None:
        try:
            while data := server.recv(65536):
                if not cutting.is_set():
                    client.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(Path(tmp_path_factory.mktemp("errors")) / "data")
    live.start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def proxy(server: LiveServer) -> Iterator[CuttingProxy]:
    cutting = CuttingProxy(server.address, hold=scaled(0.5))
    try:
        yield cutting
    finally:
        cutting.close()


def through(proxy: CuttingProxy) -> Client:
    """A client over the proxy whose connection is up and quiet."""
    client = Client(proxy.address, api_key=API_KEY, retry=PATIENT, timeout=scaled(30))
    client.health()
    time.sleep(0.2)
    return client


def test_mutation_without_key_is_not_repeated(server: LiveServer, proxy: CuttingProxy) -> None:
    client = through(proxy)
    try:
        proxy.arm()
        with pytest.raises(StatekeeperRpcError) as raised:
            client.sessions.CreateSession(
                session_pb2.CreateSessionRequest(
                    session_id="cut-create", session=session_pb2.Session(user_id="u")
                )
            )
    finally:
        client.close()
    assert proxy.cuts == 1
    # Not repeated: a repeat would have met the session the first attempt made
    # (ALREADY_EXISTS) or succeeded; the caller gets the UNAVAILABLE instead.
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    with Client(server.address, api_key=API_KEY) as direct:
        got = direct.sessions.GetSession(session_pb2.GetSessionRequest(session_id="cut-create"))
    assert got.session.session_id == "cut-create"  # the cut call was applied


def test_mutation_with_key_is_repeated_and_replayed(
    server: LiveServer, proxy: CuttingProxy
) -> None:
    with Client(server.address, api_key=API_KEY) as direct:
        session_id = direct.sessions.CreateSession(
            session_pb2.CreateSessionRequest(session=session_pb2.Session(user_id="u"))
        ).session.session_id
    client = through(proxy)
    request = session_pb2.AppendMessagesRequest(
        session_id=session_id,
        messages=[session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content="once")],
    )
    try:
        proxy.arm()
        appended = client.sessions.AppendMessages(request)  # no request_id given
    finally:
        client.close()
    assert proxy.cuts == 1
    assert appended.replayed, "the repeat was not answered from the first attempt"
    assert request.request_id == ""  # the caller's request is left alone
    with Client(server.address, api_key=API_KEY) as direct:
        listed = direct.sessions.ListMessages(
            session_pb2.ListMessagesRequest(session_id=session_id)
        )
    assert [m.content for m in listed.messages] == ["once"]


def test_read_is_repeated(server: LiveServer, proxy: CuttingProxy) -> None:
    with Client(server.address, api_key=API_KEY) as direct:
        direct.sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session_id="cut-read", session=session_pb2.Session(user_id="u")
            )
        )
    client = through(proxy)
    try:
        proxy.arm()
        got = client.sessions.GetSession(session_pb2.GetSessionRequest(session_id="cut-read"))
    finally:
        client.close()
    assert proxy.cuts == 1
    assert got.session.session_id == "cut-read"


def test_retry_safety_of_every_method() -> None:
    keyed, unsafe = set(), set()
    for spec in SERVICES:
        for method in spec.descriptor.methods:
            if method.server_streaming:
                continue
            request = _request_of(method)
            safety = retry_safety(method.name, request)
            assert safety in (READ, KEYED, IDEMPOTENT, UNSAFE)
            has_key = "request_id" in method.input_type.fields_by_name
            assert (safety == KEYED) == has_key, method.full_name
            (keyed if safety == KEYED else unsafe if safety == UNSAFE else set()).add(method.name)
    assert keyed == {"AppendMessages", "SendMessage", "RequestReply", "SendReply"}
    assert {"CreateSession", "PutEntry", "Txn", "DeleteEntry", "SaveCheckpoint"} <= unsafe
    assert retry_safety("GetEntry") == READ and retry_safety("AckMessages") == IDEMPOTENT


def _request_of(method: object) -> object:
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(method.input_type)()  # type: ignore[attr-defined]


def test_every_reason_of_the_proto_has_its_class() -> None:
    text = (REPO / "proto" / "statekeeper" / "v1" / "common.proto").read_text()
    body = text[text.index("enum ErrorReason") :]
    body = body[: body.index("}")]
    reasons = set(re.findall(r"^\s*ERROR_REASON_(\w+)\s*=", body, re.M)) - {"UNSPECIFIED"}
    assert reasons and set(errors.REASON_CLASSES) == reasons
    for reason, cls in errors.REASON_CLASSES.items():
        assert issubclass(cls, StatekeeperRpcError) and issubclass(cls, grpc.RpcError)
        assert getattr(errors, errors.class_name(reason)) is cls
        assert errors.error_class(reason) is cls
    assert errors.EtagMismatchError is errors.REASON_CLASSES["ETAG_MISMATCH"]
    assert errors.error_class("A_REASON_FROM_A_NEWER_SERVER") is StatekeeperRpcError


def test_server_reasons_raise_their_classes(server: LiveServer) -> None:
    with Client(server.address, api_key=API_KEY, retry=PATIENT) as sk:
        with pytest.raises(errors.NotFoundError) as missing:
            sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id="nope"))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        assert missing.value.reason_code == common_pb2.ERROR_REASON_NOT_FOUND

        value = blackboard_pb2.BlackboardValue()
        value.json.update({"v": 1})
        put = sk.blackboard.PutEntry(
            blackboard_pb2.PutEntryRequest(board="errors", key="k", value=value)
        )
        try:
            sk.blackboard.PutEntry(
                blackboard_pb2.PutEntryRequest(
                    board="errors",
                    key="k",
                    value=value,
                    expected_mod_revision=put.entry.mod_revision + 100,
                )
            )
        except grpc.RpcError as error:  # still a grpc.RpcError
            assert isinstance(error, errors.RevisionMismatchError)
            match error.reason_code:
                case common_pb2.ERROR_REASON_REVISION_MISMATCH:
                    current = error.error_metadata["current_revision"]
                case _:
                    pytest.fail(f"reason {error.reason}")
        else:
            pytest.fail("a stale expected_mod_revision was accepted")
        assert int(current) == put.entry.mod_revision

        with pytest.raises(errors.InvalidFieldError) as invalid:
            sk.sessions.GetSession(session_pb2.GetSessionRequest(session_id=""))
        assert invalid.value.error_metadata.get("field") == "session_id"

    with (
        Client(server.address, api_key="not-a-key") as stranger,
        pytest.raises(errors.UnauthenticatedError),
    ):
        stranger.sessions.GetSession(session_pb2.GetSessionRequest(session_id="x"))
