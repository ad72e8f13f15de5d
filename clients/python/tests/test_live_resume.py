"""The Watch helper and the inbox consumer against a real server process that
the tests kill (SIGKILL) and restart on the same port and data dir, several
times, while writers keep writing: every event seen once, in order, none
missed; every message handled and acknowledged, nacked ones redelivered."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from live import API_KEY, LiveServer, production, scaled

from statekeeper_client import AsyncClient, Client, Nack, RetryPolicy, StatekeeperRpcError, errors
from statekeeper_client.v1 import blackboard_pb2, common_pb2, message_pb2

RESTARTS = 3
#: Quick reconnects, many attempts: the server is away for seconds.
PATIENT = RetryPolicy(max_attempts=1000, initial_backoff=0.05, max_backoff=0.5, jitter=0.1)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path / "data")
    live.start()
    try:
        yield live
    finally:
        live.stop()


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + scaled(timeout)
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def value(n: int) -> blackboard_pb2.BlackboardValue:
    v = blackboard_pb2.BlackboardValue()
    v.json.update({"n": n})
    return v


class Writer(threading.Thread):
    """Puts keys one after the other; remembers the revision of every put the
    server acknowledged (a put that failed may or may not have happened)."""

    def __init__(self, address: str, board: str) -> None:
        super().__init__(daemon=True)
        self.client = Client(address, api_key=API_KEY, timeout=scaled(30), retry=PATIENT)
        self.board = board
        self.acked: dict[int, str] = {}
        self.failures = 0
        self.halt = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.halt.is_set():
            key = f"k/{n % 17}"
            try:
                put = self.client.blackboard.PutEntry(
                    blackboard_pb2.PutEntryRequest(board=self.board, key=key, value=value(n))
                )
                self.acked[put.header.revision] = key
            except StatekeeperRpcError:
                self.failures += 1
            n += 1
            time.sleep(0.01)

    def finish(self) -> None:
        self.halt.set()
        self.join(timeout=scaled(60))
        self.client.close()


def test_watch_resumes_across_kill_and_restart(server: LiveServer) -> None:
    board = "resume-board"
    seen: list[blackboard_pb2.BlackboardEvent] = []
    reconnects: list[StatekeeperRpcError | None] = []
    failure: list[BaseException] = []
    watcher_client = Client(server.address, api_key=API_KEY, retry=PATIENT)
    watch = watcher_client.watch(
        board,
        prefix="k/",
        start_revision=1,
        progress_notify_interval=1.0,
        reconnect_timeout=scaled(120),
        on_reconnect=reconnects.append,
    )

    def consume() -> None:
        try:
            for event in watch:
                seen.append(event)
        except BaseException as error:  # reported by the test thread
            failure.append(error)

    watcher = threading.Thread(target=consume, daemon=True)
    writer = Writer(server.address, board)
    watcher.start()
    writer.start()
    try:
        for _ in range(RESTARTS):
            before = len(seen)
            wait_until(lambda b=before: len(seen) >= b + 20, 60, "events before the kill")
            server.kill()
            time.sleep(0.5)
            server.start()
            after = len(seen)
            wait_until(lambda a=after: len(seen) >= a + 20, 120, "events after the restart")
    finally:
        writer.finish()
    try:
        last = max(writer.acked)
        wait_until(
            lambda: bool(failure) or watch.resume_revision > last, 60, "the last acknowledged put"
        )
        assert not failure, failure
        revisions = [event.revision for event in seen]
        assert revisions == sorted(revisions), "events out of order"
        assert len(set(revisions)) == len(revisions), "an event was delivered twice"
        missed = sorted(set(writer.acked) - set(revisions))
        assert not missed, f"acknowledged puts never seen: {missed[:10]}"
        # Every put the server kept (acknowledged or not) was seen with its value.
        with Client(server.address, api_key=API_KEY, retry=PATIENT) as reader:
            listed = reader.blackboard.ListEntries(
                blackboard_pb2.ListEntriesRequest(board=board, prefix="k/")
            ).entries
        by_revision = {event.revision: event for event in seen}
        for entry in listed:
            assert entry.mod_revision in by_revision, f"{entry.key}@{entry.mod_revision} unseen"
            assert by_revision[entry.mod_revision].entry.value == entry.value
        assert watch.streams_opened >= RESTARTS + 1
        assert len(reconnects) >= RESTARTS
        assert all(
            error is None or error.code() == grpc.StatusCode.UNAVAILABLE for error in reconnects
        )
        assert watch.progress_revision > 0 or watch.streams_opened > 0
    finally:
        watch.cancel()
        watcher.join(timeout=scaled(30))
        watcher_client.close()


@pytest.mark.skipif(not production(), reason="replicas need the production tier")
def test_watch_resumes_on_the_other_replica(server: LiveServer, tmp_path: Path) -> None:
    """Two replicas of one deployment behind one target: the Watch helper and
    the writer go to whichever answers; each replica in turn is killed and
    restarted. Every acknowledged put is seen once, in order."""
    other = LiveServer(tmp_path / "replica-b", replica_of=server)
    other.start()
    target = f"ipv4:{server.address},{other.address}"
    board = "replicas-board"
    seen: list[int] = []
    failure: list[BaseException] = []
    watcher_client = Client(target, api_key=API_KEY, retry=PATIENT)
    watch = watcher_client.watch(board, start_revision=1, reconnect_timeout=scaled(120))

    def consume() -> None:
        try:
            seen.extend(event.revision for event in watch)
        except BaseException as error:
            failure.append(error)

    watcher = threading.Thread(target=consume, daemon=True)
    writer = Writer(target, board)
    watcher.start()
    writer.start()
    try:
        for replica in (server, other, server):
            before = len(seen)
            wait_until(lambda b=before: len(seen) >= b + 20, 60, "events before the kill")
            replica.kill()
            after = len(seen)
            # Served by the other replica while this one is down.
            wait_until(lambda a=after: len(seen) >= a + 20, 120, "events from the other replica")
            replica.start()
    finally:
        writer.finish()
    try:
        last = max(writer.acked)
        wait_until(lambda: bool(failure) or watch.resume_revision > last, 60, "the last put")
        assert not failure, failure
        assert seen == sorted(set(seen)), "events out of order or repeated"
        missed = sorted(set(writer.acked) - set(seen))
        assert not missed, f"acknowledged puts never seen: {missed[:10]}"
        assert watch.streams_opened >= 4
    finally:
        watch.cancel()
        watcher.join(timeout=scaled(30))
        watcher_client.close()
        other.stop()


def test_watch_relists_after_compaction(server: LiveServer) -> None:
    board = "compacted-board"
    with Client(server.address, api_key=API_KEY, retry=PATIENT) as sk:
        revisions = []
        for n in range(6):
            put = sk.blackboard.PutEntry(
                blackboard_pb2.PutEntryRequest(board=board, key=f"k/{n % 3}", value=value(n))
            )
            revisions.append(put.header.revision)
        sk.blackboard.CompactBlackboard(
            blackboard_pb2.CompactBlackboardRequest(revision=revisions[-1])
        )
        # Without on_compacted: the typed error, with the oldest revision kept.
        with pytest.raises(errors.RevisionCompactedError) as raised:
            next(iter(sk.watch(board, start_revision=revisions[0], timeout=scaled(30))))
        assert int(raised.value.error_metadata["oldest_revision"]) >= revisions[0]

        # With it: re-list then watch.
        resyncs: list[Any] = []
        watch = sk.watch(
            board, start_revision=revisions[0], on_compacted=resyncs.append, timeout=scaled(30)
        )
        responses = watch.responses()
        while not resyncs:  # the stream fails, then the listing comes
            next(responses)
        after = sk.blackboard.PutEntry(
            blackboard_pb2.PutEntryRequest(board=board, key="k/new", value=value(99))
        )
        response = next(responses)
        while response.WhichOneof("kind") != "events":
            response = next(responses)
        event = response.events.events[0]
        watch.cancel()
    assert len(resyncs) == 1 and watch.resync_count == 1
    listing = {entry.key: entry.mod_revision for entry in resyncs[0].entries}
    assert listing == {"k/0": revisions[3], "k/1": revisions[4], "k/2": revisions[5]}
    assert resyncs[0].revision >= revisions[-1]
    assert resyncs[0].oldest_revision >= revisions[0]
    assert (event.entry.key, event.revision) == ("k/new", after.header.revision)


def test_watch_slow_consumer_is_resumed_or_raised(tmp_path: Path) -> None:
    """A server whose watchers may lag 2 responses behind: a reader that stops
    reading while 40 large puts go by is cancelled with SLOW_CONSUMER."""
    live = LiveServer(tmp_path / "data", ("--limit", "blackboard.watch_buffer_responses=2"))
    live.start()
    big = blackboard_pb2.BlackboardValue(
        payload=common_pb2.Payload(content_type="application/octet-stream", data=b"x" * 200_000)
    )

    def lag_behind(sk: Client, board: str, **options: Any) -> tuple[list[int], list[int], Any]:
        watch = sk.watch(board, timeout=scaled(60), **options)
        responses = watch.responses()
        assert next(responses).WhichOneof("kind") == "started"
        puts = [
            sk.blackboard.PutEntry(
                blackboard_pb2.PutEntryRequest(board=board, key=f"k{n}", value=big)
            ).header.revision
            for n in range(40)
        ]
        time.sleep(scaled(1))
        seen: list[int] = []
        for response in responses:
            seen.extend(event.revision for event in response.events.events)
            if seen and seen[-1] >= puts[-1]:
                break
        watch.cancel()
        return puts, seen, watch

    try:
        with Client(live.address, api_key=API_KEY, retry=PATIENT) as sk:
            puts, seen, watch = lag_behind(sk, "slow-1")
            assert seen == puts, "a resumed slow watcher missed or repeated events"
            assert watch.slow_consumer_count >= 1 and watch.streams_opened >= 2
            with pytest.raises(errors.SlowConsumerError) as raised:
                lag_behind(sk, "slow-2", resume_slow_consumer=False)
            assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        live.stop()


def send_all(address: str, agent: str, count: int, tag: str = "job") -> list[str]:
    """Sends `count` messages, each with its own idempotency key; a send that
    fails is repeated with the same key (deduplicated by the server)."""
    ids: list[str] = []
    with Client(address, api_key=API_KEY, retry=PATIENT, timeout=scaled(30)) as sk:
        for n in range(count):
            request = message_pb2.SendMessageRequest(
                from_agent="producer",
                to_agent=agent,
                type="job",
                payload=common_pb2.Payload(content_type="text/plain", data=str(n).encode()),
                request_id=f"{tag}-{agent}-{n}",
            )
            for _ in range(20):
                try:
                    ids.append(sk.messages.SendMessage(request).message_id)
                    break
                except StatekeeperRpcError:
                    time.sleep(0.5)
            else:
                raise AssertionError(f"message {n} could not be sent")
    return ids


def inbox_empty(address: str, agent: str, wait: float) -> bool:
    with Client(address, api_key=API_KEY, retry=PATIENT, timeout=scaled(60)) as sk:
        pulled = sk.messages.PullMessages(
            message_pb2.PullMessagesRequest(
                agent_id=agent, max_messages=10, wait_timeout=_seconds(wait)
            )
        )
        dead = sk.messages.ListDeadLetters(message_pb2.ListDeadLettersRequest(agent_id=agent))
    return not pulled.deliveries and not dead.dead_letters


def _seconds(seconds: float) -> Any:
    from google.protobuf.duration_pb2 import Duration

    d = Duration()
    d.FromMilliseconds(int(seconds * 1000))
    return d


def test_inbox_consumer_across_kill_and_restart(server: LiveServer) -> None:
    agent = "worker-restart"
    count = 40
    handled: list[tuple[str, str, int]] = []
    done: set[str] = set()
    lock = threading.Lock()

    def handle(delivery: message_pb2.Delivery) -> Nack | None:
        message = delivery.message
        with lock:
            handled.append((message.message_id, delivery.receipt_handle, delivery.delivery_count))
        time.sleep(0.05)
        if int(message.payload.data) % 5 == 0 and delivery.delivery_count == 1:
            raise RuntimeError("first delivery of every fifth message fails")
        with lock:
            done.add(message.message_id)
        return None

    errors: list[BaseException] = []
    client = Client(server.address, api_key=API_KEY, retry=PATIENT, timeout=scaled(30))
    consumer = client.inbox(
        agent,
        handle,
        visibility_timeout=3.0,
        redelivery_backoff=RetryPolicy(initial_backoff=0.2, max_backoff=0.5, jitter=0),
        reconnect_timeout=scaled(120),
        on_error=lambda error, delivery: errors.append(error),
    )
    failure: list[BaseException] = []

    def consume() -> None:
        try:
            consumer.run(timeout=scaled(600))
        except BaseException as error:
            failure.append(error)

    sent: list[str] = []
    sender = threading.Thread(
        target=lambda: sent.extend(send_all(server.address, agent, count)), daemon=True
    )
    runner = threading.Thread(target=consume, daemon=True)
    runner.start()
    sender.start()
    try:
        for round_ in range(RESTARTS):
            before = len(handled)
            wait_until(lambda b=before: len(handled) > b, 120, f"handling before kill {round_}")
            server.kill()
            time.sleep(0.5)
            server.start()
        sender.join(timeout=scaled(300))
        assert len(sent) == count, "not every message was sent"
        wait_until(lambda: done >= set(sent) or bool(failure), 240, "every message handled")
        assert not failure, failure
    finally:
        consumer.stop()
        runner.join(timeout=scaled(60))
        client.close()
    assert not runner.is_alive()
    assert done == set(sent)
    handles = [h for _, h, _ in handled]
    assert len(handles) == len(set(handles)), "one delivery was handled twice"
    fifth = {mid for mid, _, _ in handled if mid in sent and sent.index(mid) % 5 == 0}
    assert len(fifth) == count // 5
    for message_id in fifth:
        counts = sorted(c for mid, _, c in handled if mid == message_id)
        assert counts[0] == 1 and counts[-1] >= 2, f"{message_id} not redelivered: {counts}"
    assert consumer.stats.failed >= count // 5 and len(errors) == consumer.stats.failed
    assert consumer.stats.nacked >= 1
    assert consumer.stats.streams_opened >= RESTARTS + 1
    assert consumer.stats.acked >= count - 3  # an ack lost to a kill is redelivered
    # Nothing left: every message acknowledged, none dead-lettered.
    assert inbox_empty(server.address, agent, wait=scaled(4))


def test_inbox_consumer_extends_the_lease_and_nacks(server: LiveServer) -> None:
    agent = "worker-lease"
    [slow_id] = send_all(server.address, agent, 1)
    visibility = 2.0
    seen_by_rival: list[str] = []

    def handle(delivery: message_pb2.Delivery) -> Nack | None:
        if delivery.message.message_id != slow_id:
            return Nack(dead_letter=True, reason="poison")
        # Longer than three visibility timeouts: only extensions keep it.
        time.sleep(visibility * 3)
        return None

    with Client(server.address, api_key=API_KEY, retry=PATIENT) as sk:
        consumer = sk.inbox(agent, handle, visibility_timeout=visibility)
        runner = threading.Thread(target=lambda: consumer.run(max_messages=1), daemon=True)
        runner.start()
        wait_until(lambda: consumer.stats.handled == 1, 60, "the slow delivery")
        # A rival receiver polls the same inbox while the slow handler runs.
        while runner.is_alive():
            pulled = sk.messages.PullMessages(
                message_pb2.PullMessagesRequest(
                    agent_id=agent, max_messages=1, visibility_timeout=_seconds(30)
                )
            )
            seen_by_rival.extend(d.message.message_id for d in pulled.deliveries)
            time.sleep(0.2)
        runner.join(timeout=scaled(60))
        assert slow_id not in seen_by_rival, "the lease of a running handler lapsed"
        assert consumer.stats.extensions >= 2
        assert consumer.stats.acked == 1
        # A message the handler refuses goes to the dead letters.
        [poison_id] = send_all(server.address, agent, 1, tag="poison")
        consumer.run(max_messages=1, timeout=scaled(60))
        dead = sk.messages.ListDeadLetters(message_pb2.ListDeadLettersRequest(agent_id=agent))
    assert consumer.stats.nacked == 1 and consumer.stats.handled == 2
    assert [d.message.message_id for d in dead.dead_letters] == [poison_id]


async def test_async_inbox_consumer_and_watch_across_restarts(server: LiveServer) -> None:
    agent, board = "worker-async", "async-board"
    count = 15
    done: list[str] = []
    third: list[int] = []

    async def handle(delivery: message_pb2.Delivery) -> None:
        if int(delivery.message.payload.data) == 3:
            third.append(delivery.delivery_count)
            # Its first handler run fails, whichever delivery that is: a
            # delivery whose lease lapsed during a restart is not handled, so
            # the first run may be of delivery 2.
            if len(third) == 1:
                raise RuntimeError("fail once")
        await asyncio.sleep(0.01)
        done.append(delivery.message.message_id)

    async with AsyncClient(server.address, api_key=API_KEY, retry=PATIENT) as sk:
        consumer = sk.inbox(
            agent,
            handle,
            visibility_timeout=3.0,
            redelivery_backoff=RetryPolicy(initial_backoff=0.2, max_backoff=0.5, jitter=0),
            reconnect_timeout=scaled(120),
        )
        watch = sk.watch(board, start_revision=1, reconnect_timeout=scaled(120))
        seen: list[int] = []

        async def watching() -> None:
            async for event in watch:
                seen.append(event.revision)

        consuming = asyncio.ensure_future(consumer.run(timeout=scaled(600)))
        watcher = asyncio.ensure_future(watching())
        acked: list[int] = []
        sent = await asyncio.to_thread(send_all, server.address, agent, count)
        for round_ in range(RESTARTS):
            put = await sk.blackboard.PutEntry(
                blackboard_pb2.PutEntryRequest(board=board, key=f"k{round_}", value=value(round_))
            )
            acked.append(put.header.revision)
            await asyncio.to_thread(server.kill)
            await asyncio.sleep(0.3)
            await asyncio.to_thread(server.start)
        deadline = time.monotonic() + scaled(240)
        while (set(done) != set(sent) or len(seen) < RESTARTS) and time.monotonic() < deadline:
            assert not consuming.done(), consuming
            await asyncio.sleep(0.1)
        consumer.stop()
        watch.cancel()
        await asyncio.wait_for(consuming, scaled(60))
        watcher.cancel()
    assert set(done) == set(sent)
    assert seen == acked
    assert consumer.stats.failed == 1 and len(third) >= 2 and third[-1] > third[0]
    # The nack is settled, unless a kill took it (then the lease ran out).
    assert consumer.stats.nacked + consumer.stats.expired >= 1
