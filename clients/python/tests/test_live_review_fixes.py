"""Regressions of the client review (issue 17), against a real server.

The inbox tests put a loopback relay between the client and the server that
can cut every connection it carries (and refuse new ones for a while), so
that a stream or a call breaks while the server keeps running:

* an idle inbox consumer whose stream broke once, then stayed open longer
  than `reconnect_timeout`, survives the next break (the give-up time counts
  from the first failure of the current run, not of the consumer's life);
* an ack that fails after a handler outlived its first lease is retried
  within the lease its extensions bought, not abandoned as expired.

The Watch tests check that the resume point never passes a revision whose
events were not all handed out yet (a Txn of three keys), and that leaving
the event loop closes the stream at once."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from google.protobuf.duration_pb2 import Duration
from live import API_KEY, LiveServer, scaled

from statekeeper_client import AsyncClient, Client, RetryPolicy
from statekeeper_client.v1 import blackboard_pb2, common_pb2, message_pb2

QUICK = RetryPolicy(max_attempts=1000, initial_backoff=0.05, max_backoff=0.3, jitter=0.1)
#: Unary calls are not retried by the client itself: the consumer's own
#: settle loop must do it.
ONCE = RetryPolicy(max_attempts=1)


class Relay:
    """127.0.0.1:<port> -> upstream, byte for byte; `cut(down_for)` closes
    every connection it carries and closes new ones at once for `down_for`
    seconds."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.down_until = 0.0
        self.cuts = 0
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if time.monotonic() < self.down_until:
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cut(self, down_for: float = 0.0) -> None:
        with self.lock:
            self.down_until = time.monotonic() + down_for
            sockets, self.sockets = self.sockets, []
            self.cuts += 1
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        self.cut()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(Path(tmp_path_factory.mktemp("review")) / "data")
    live.start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def relay(server: LiveServer) -> Iterator[Relay]:
    relay = Relay(server.address)
    try:
        yield relay
    finally:
        relay.close()


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + scaled(timeout)
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def send(address: str, agent: str, body: str) -> str:
    with Client(address, api_key=API_KEY, retry=QUICK, timeout=scaled(30)) as sk:
        return str(
            sk.messages.SendMessage(
                message_pb2.SendMessageRequest(
                    from_agent="producer",
                    to_agent=agent,
                    type="job",
                    payload=common_pb2.Payload(content_type="text/plain", data=body.encode()),
                    request_id=f"{agent}-{body}",
                )
            ).message_id
        )


def test_idle_inbox_outlives_reconnect_timeout_between_two_breaks(
    server: LiveServer, relay: Relay
) -> None:
    agent = "worker-idle-breaks"
    reconnect_timeout = 2.0
    handled: list[str] = []
    failure: list[BaseException] = []
    client = Client(relay.address, api_key=API_KEY, retry=QUICK, timeout=scaled(30))
    consumer = client.inbox(
        agent, lambda d: handled.append(d.message.message_id), reconnect_timeout=reconnect_timeout
    )

    def consume() -> None:
        try:
            consumer.run(timeout=scaled(300))
        except BaseException as error:
            failure.append(error)

    runner = threading.Thread(target=consume, daemon=True)
    runner.start()
    try:
        wait_until(lambda: consumer.stats.streams_opened == 1, 30, "the first stream")
        time.sleep(0.5)
        relay.cut()  # break 1: the consumer reconnects at once
        wait_until(lambda: consumer.stats.streams_opened >= 2, 30, "the second stream")
        # The inbox stays idle (no delivery, so nothing arrives on the
        # stream) for longer than reconnect_timeout, then breaks again.
        time.sleep(reconnect_timeout + 1.5)
        relay.cut()
        wait_until(
            lambda: consumer.stats.streams_opened >= 3 or bool(failure), 30, "the third stream"
        )
        assert not failure, f"the consumer gave up after the second break: {failure}"
        first = send(server.address, agent, "after-two-breaks")
        wait_until(lambda: first in handled or bool(failure), 60, "the message handled")
        assert not failure, failure
        assert handled == [first]
        # The ack follows the handler's return.
        wait_until(lambda: consumer.stats.acked == 1, 60, "the message acked")
    finally:
        consumer.stop()
        runner.join(timeout=scaled(60))
        client.close()
    assert not runner.is_alive()


def test_ack_retried_within_the_extended_lease(server: LiveServer, relay: Relay) -> None:
    agent = "worker-extended-ack"
    visibility = 4.0
    message_id = send(server.address, agent, "long")
    handled: list[int] = []

    def handle(delivery: message_pb2.Delivery) -> None:
        handled.append(delivery.delivery_count)
        # Outlive the lease the delivery came with: only the extensions keep it.
        time.sleep(visibility + 1.5)
        # The ack that follows finds the connection cut and the relay
        # refusing for a moment: UNAVAILABLE, and the client does not retry.
        relay.cut(down_for=0.3)

    client = Client(relay.address, api_key=API_KEY, retry=ONCE, timeout=scaled(30))
    consumer = client.inbox(
        agent, handle, visibility_timeout=visibility, extend_every=0.5, retry=QUICK
    )
    try:
        consumer.run(max_messages=1, timeout=scaled(120))
    finally:
        client.close()
    assert handled == [1]
    assert consumer.stats.extensions >= 2
    assert consumer.stats.expired == 0, "the ack was abandoned though the lease was extended"
    assert consumer.stats.acked == 1
    # Acknowledged: nothing comes back after the visibility timeout.
    with Client(server.address, api_key=API_KEY, retry=QUICK, timeout=scaled(60)) as sk:
        wait = Duration(seconds=int(visibility) + 2)
        left = sk.messages.PullMessages(
            message_pb2.PullMessagesRequest(agent_id=agent, max_messages=1, wait_timeout=wait)
        )
    assert [d.message.message_id for d in left.deliveries] == [], message_id


def put_three_in_one_txn(sk: Client, board: str, n: int) -> int:
    ops = [
        blackboard_pb2.TxnOp(
            put_entry=blackboard_pb2.TxnPut(key=f"t/{n}/{k}", value=value(n * 10 + k))
        )
        for k in range(3)
    ]
    answer = sk.blackboard.Txn(blackboard_pb2.TxnRequest(board=board, success=ops))
    return int(answer.header.revision)


def value(n: int) -> blackboard_pb2.BlackboardValue:
    v = blackboard_pb2.BlackboardValue()
    v.json.update({"n": n})
    return v


def test_resume_revision_does_not_pass_a_revision_half_handed_out(server: LiveServer) -> None:
    board = "review-txn"
    with Client(server.address, api_key=API_KEY, retry=QUICK, timeout=scaled(30)) as sk:
        first = put_three_in_one_txn(sk, board, 1)
        second = put_three_in_one_txn(sk, board, 2)
        assert second > first
        checkpoints: list[tuple[int, int]] = []
        with sk.watch(board, start_revision=first, timeout=scaled(30)) as watch:
            for event in watch:
                checkpoints.append((event.revision, watch.resume_revision))
                if len(checkpoints) == 6:
                    break
        assert [rev for rev, _ in checkpoints] == [first] * 3 + [second] * 3
        # Inside a revision the resume point stays at it; after its last
        # event it moves past it.
        assert [resume for _, resume in checkpoints] == [
            first,
            first,
            first + 1,
            second,
            second,
            second + 1,
        ]
        # Stopping after the first event of `second`: a later Watch from
        # the checkpoint loses none of that revision.
        resumed = []
        with sk.watch(board, start_revision=checkpoints[3][1], timeout=scaled(30)) as watch:
            for event in watch:
                resumed.append(event.entry.key)
                if len(resumed) == 3:
                    break
        assert resumed == [f"t/2/{k}" for k in range(3)]

        # Leaving the loop half way through a revision: iterating the same
        # Watch again continues at that revision.
        again = sk.watch(board, start_revision=first, timeout=scaled(30))
        for _event in again:
            break
        assert again.resume_revision == first
        keys = []
        for event in again:
            keys.append(event.entry.key)
            if len(keys) == 6:
                break
        again.cancel()
        assert keys == [f"t/1/{k}" for k in range(3)] + [f"t/2/{k}" for k in range(3)]


def test_async_resume_revision_inside_a_revision(server: LiveServer) -> None:
    board = "review-txn-async"
    with Client(server.address, api_key=API_KEY, retry=QUICK, timeout=scaled(30)) as sk:
        first = put_three_in_one_txn(sk, board, 1)

    async def watch_it() -> list[int]:
        async with AsyncClient(server.address, api_key=API_KEY, timeout=scaled(30)) as ask:
            resumes: list[int] = []
            async with ask.watch(board, start_revision=first, timeout=scaled(30)) as watch:
                async for _event in watch:
                    resumes.append(watch.resume_revision)
                    if len(resumes) == 3:
                        break
            return resumes

    assert asyncio.run(watch_it()) == [first, first, first + 1]


def test_leaving_the_event_loop_closes_the_stream(server: LiveServer) -> None:
    board = "review-break"
    with Client(server.address, api_key=API_KEY, retry=QUICK, timeout=scaled(30)) as sk:
        revision = put_three_in_one_txn(sk, board, 1)
        watch = sk.watch(board, start_revision=revision)  # no `with`, no cancel()
        call = None
        for _event in watch:
            call = watch._call
            break
        assert call is not None
        # The stream ends now, not when the generator is garbage collected.
        wait_until(lambda: not call.is_active(), 10, "the stream to close")
