"""A recorded run in the style of etcd's robustness tests: writers put,
delete and run multi-key transactions through two replicas while three
watchers (all keys, a prefix, a glob) are disconnected 50 times in all and
resume from their last `resume_revision`, alternating replicas. The
recording is then checked with etcd's watch validators against the history
the writers were told by the server."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field

import grpc
import pytest
import redis.asyncio as redis_asyncio

from statekeeper.core.blackboard.keys import compile_glob
from statekeeper.core.blackboard.models import BlackboardLimits
from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.e2e_inproc.conftest import ALPHA, Deployment, aio_channel
from tests.e2e_inproc.watch_validators import (
    ClientReport,
    WatchEvent,
    WatchOperation,
    WatchResponseRecord,
    validate_all,
)
from tests.harness.deadlines import scaled

BOARD = "robust"
WRITERS = 4
MAX_WRITES_PER_WRITER = 2000  # bound; writers stop once the watchers are done
DISCONNECTS = (17, 17, 16)  # per watcher: 50 in all
MIN_EVENTS = 100
KEYS = [f"k/{i}" for i in range(20)]
PUT, DELETE = pb.BLACKBOARD_EVENT_TYPE_PUT, pb.BLACKBOARD_EVENT_TYPE_DELETE


@dataclass
class Truth:
    """Every event of the board, from the writers' replies."""

    board: str = BOARD
    events: dict[int, list[WatchEvent]] = field(default_factory=dict)
    last_revision: int = 0

    def record(self, revision: int, changes: list[tuple[int, str]]) -> None:
        self.last_revision = max(self.last_revision, revision)
        if changes:
            self.events[revision] = [WatchEvent(revision, key, kind) for kind, key in changes]

    def history(self) -> list[WatchEvent]:
        return [event for revision in sorted(self.events) for event in self.events[revision]]


def value(rng: random.Random) -> pb.BlackboardValue:
    return pb.BlackboardValue(payload=common_pb2.Payload(data=rng.randbytes(8)))


async def write_once(stub: BlackboardServiceStub, rng: random.Random, truth: Truth) -> None:
    roll = rng.random()
    if roll < 0.45:
        key = rng.choice(KEYS)
        reply = await stub.PutEntry(
            pb.PutEntryRequest(board=truth.board, key=key, value=value(rng)), metadata=ALPHA
        )
        truth.record(reply.header.revision, [(PUT, key)])
    elif roll < 0.70:
        await write_txn(stub, rng, truth)
    elif roll < 0.85:
        key = rng.choice(KEYS)
        request = pb.DeleteEntryRequest(board=truth.board, key=key)
        deleted = await stub.DeleteEntry(request, metadata=ALPHA)
        if deleted.deleted:
            truth.record(deleted.header.revision, [(DELETE, key)])
    elif roll < 0.95:
        key = f"other/{rng.randrange(5)}"
        reply = await stub.PutEntry(
            pb.PutEntryRequest(board=truth.board, key=key, value=value(rng)), metadata=ALPHA
        )
        truth.record(reply.header.revision, [(PUT, key)])
    else:
        reply = await stub.PutEntry(
            pb.PutEntryRequest(board="noise", key="n", value=value(rng)), metadata=ALPHA
        )
        truth.record(reply.header.revision, [])


async def write_txn(stub: BlackboardServiceStub, rng: random.Random, truth: Truth) -> None:
    keys = rng.sample(KEYS, rng.randint(2, 4))
    ops = []
    for key in keys:
        if rng.random() < 0.7:
            ops.append(pb.TxnOp(put_entry=pb.TxnPut(key=key, value=value(rng))))
        else:
            ops.append(pb.TxnOp(delete_entry=pb.TxnDelete(key=key)))
    reply = await stub.Txn(pb.TxnRequest(board=truth.board, success=ops), metadata=ALPHA)
    changes = []
    for key, result in zip(keys, reply.results, strict=True):
        if result.HasField("put_entry"):
            changes.append((PUT, key))
        elif result.delete_entry.deleted:
            changes.append((DELETE, key))
    if changes:
        truth.record(reply.header.revision, changes)


async def pacer(gate: asyncio.Event, stop: asyncio.Event) -> None:
    """Bursts of writes with quiet gaps longer than the progress interval,
    so that progress bookmarks fall between events, not only at the end."""
    while not stop.is_set():
        gate.set()
        await asyncio.sleep(0.08)
        gate.clear()
        await asyncio.sleep(0.05)
    gate.set()


async def writer(
    index: int, address: str, truth: Truth, stop: asyncio.Event, gate: asyncio.Event
) -> int:
    rng = random.Random(1000 + index)
    writes = 0
    async with aio_channel(address) as channel:
        stub = BlackboardServiceStub(channel)
        while writes < MAX_WRITES_PER_WRITER and not stop.is_set():
            await gate.wait()
            await write_once(stub, rng, truth)
            writes += 1
            await asyncio.sleep(rng.uniform(0, 0.004))
    return writes


@dataclass
class Watcher:
    client_id: int
    selector: dict[str, str]
    disconnects: int
    board: str = BOARD
    report: ClientReport = field(init=False)

    def __post_init__(self) -> None:
        self.report = ClientReport(self.client_id)

    def matches(self, key: str) -> bool:
        if "prefix" in self.selector:
            return key.startswith(self.selector["prefix"])
        if "pattern" in self.selector:
            return compile_glob("pattern", self.selector["pattern"], BlackboardLimits()).matches(
                key
            )
        return True


async def watch_once(
    watcher: Watcher, address: str, start: int, rng: random.Random, close_channel: bool
) -> int:
    """One watch, cut after a few responses or a short while; returns the
    revision to resume from."""
    operation = WatchOperation(start, watcher.matches)
    watcher.report.watches.append(operation)
    request = pb.WatchRequest(board=watcher.board, start_revision=start, **watcher.selector)
    request.progress_notify_interval.FromMilliseconds(20)
    resume = start
    channel = aio_channel(address)
    call = BlackboardServiceStub(channel).Watch(request, metadata=ALPHA)
    cut_after = time.monotonic() + rng.uniform(0.02, 0.12)
    budget = rng.randint(1, 12)
    try:
        for _ in range(10_000):
            response = await asyncio.wait_for(call.read(), scaled(10))
            assert response is not grpc.aio.EOF, "the server ended a watch"
            resume = record(operation, response, resume)
            if response.HasField("events"):
                budget -= 1
            if budget <= 0 or time.monotonic() > cut_after:
                break
    finally:
        # The forced disconnect: cancel the call, or drop the whole connection.
        call.cancel()
        if close_channel:
            await channel.close()
        else:
            await channel.close(grace=None)
    return resume


def record(operation: WatchOperation, response: pb.WatchResponse, resume: int) -> int:
    kind = response.WhichOneof("kind")
    if kind == "events":
        events = [WatchEvent(e.revision, e.entry.key, e.type) for e in response.events.events]
        operation.responses.append(WatchResponseRecord(events, None, response.resume_revision))
    elif kind == "progress":
        operation.responses.append(
            WatchResponseRecord([], response.progress.revision, response.resume_revision)
        )
    return response.resume_revision or resume


async def run_watcher(
    watcher: Watcher, addresses: list[str], truth: Truth, writers_done: asyncio.Event
) -> None:
    rng = random.Random(watcher.client_id)
    resume = 1
    for cycle in range(10_000):
        address = addresses[cycle % len(addresses)]
        resume = await watch_once(watcher, address, resume, rng, close_channel=cycle % 2 == 1)
        finished_cuts = cycle + 1 >= watcher.disconnects
        if finished_cuts and writers_done.is_set() and resume > truth.last_revision:
            return
        if finished_cuts and writers_done.is_set() and cycle > watcher.disconnects + 200:
            raise AssertionError(f"watcher {watcher.client_id} never caught up")
    raise AssertionError("bounded loop exhausted")


async def recorded_run(addresses: list[str], board: str) -> tuple[Truth, list[Watcher]]:
    """Writers and cut watchers of `board` over `addresses` until every
    watcher has been cut its share of times and has caught up with the last
    write."""
    truth = Truth(board)
    watchers = [
        Watcher(0, {}, DISCONNECTS[0], board),
        Watcher(1, {"prefix": "k/"}, DISCONNECTS[1], board),
        Watcher(2, {"pattern": "k/1*"}, DISCONNECTS[2], board),
    ]
    stop_writing, writers_done, gate = asyncio.Event(), asyncio.Event(), asyncio.Event()
    pacing = asyncio.create_task(pacer(gate, stop_writing))
    writer_tasks = [
        asyncio.create_task(writer(i, addresses[i % 2], truth, stop_writing, gate))
        for i in range(WRITERS)
    ]

    async def watchers_until_cut() -> None:
        # Writers run until every watcher has been cut its share of times and
        # the history is long enough to be worth validating (on a busy
        # machine that takes longer, never fewer events).
        while (
            any(len(w.report.watches) < w.disconnects for w in watchers)
            or len(truth.history()) <= MIN_EVENTS
            or not any(len(events) > 1 for events in truth.events.values())
            or bookmarks_before_last_write(watchers, truth) == 0
        ):
            await asyncio.sleep(0.01)
        stop_writing.set()
        await asyncio.gather(pacing, *writer_tasks)
        writers_done.set()

    await asyncio.wait_for(
        asyncio.gather(
            watchers_until_cut(),
            *(run_watcher(w, addresses, truth, writers_done) for w in watchers),
        ),
        scaled(120),
    )
    return truth, watchers


def bookmarks_before_last_write(watchers: list[Watcher], truth: Truth) -> int:
    """Progress notifications the watchers got for a revision before the last write."""
    return sum(
        1
        for watcher in watchers
        for watch in watcher.report.watches
        for response in watch.responses
        if response.progress_revision is not None
        and response.progress_revision < truth.last_revision
    )


def check_run(truth: Truth, watchers: list[Watcher]) -> str:
    """Runs the validators; returns a summary of the run."""
    history = truth.history()
    reports = [w.report for w in watchers]
    cuts = sum(len(report.watches) for report in reports) - len(reports)
    assert cuts >= 50
    validate_all(history, reports)
    for watcher in watchers:
        expected = [e for e in history if watcher.matches(e.key)]
        assert list(watcher.report.events()) == expected, "a watcher missed events"
    multi = sum(1 for events in truth.events.values() if len(events) > 1)
    bookmarks = bookmarks_before_last_write(watchers, truth)
    return (
        f"{len(history)} events, {multi} multi-key revisions, {cuts} disconnects,"
        f" {bookmarks} progress bookmarks before the last write"
    )


async def test_watchers_survive_50_disconnects_without_a_gap(server: Deployment) -> None:
    truth, watchers = await recorded_run(server.addresses, BOARD)
    print(f"\nwatch run: {check_run(truth, watchers)}")


async def test_no_gap_while_redis_drops_connections_and_stream_entries(
    server: Deployment,
) -> None:
    """Production only: the same run while Redis keeps failing under the
    replicas (all their Redis connections killed, all their feed streams
    deleted, in turns): watch hubs repair from PostgreSQL, and the
    validators still hold."""
    settings = server.processes[0]
    if not settings.redis_url:
        pytest.skip("the embedded backend has no Redis")
    client = redis_asyncio.from_url(settings.redis_url)
    rounds = {"kills": 0, "killed": 0, "deletions": 0}

    async def chaos() -> None:
        for turn in range(100_000):  # bounded; cancelled when the run ends
            await asyncio.sleep(0.15)
            if turn % 2:
                # Only the replicas' own connections (named after their prefix).
                for info in await client.client_list():
                    if info.get("name", "").startswith(f"{settings.redis_prefix}:"):
                        rounds["killed"] += await client.client_kill_filter(_id=info["id"])
                rounds["kills"] += 1
            else:
                async for key in client.scan_iter(match=f"{settings.redis_prefix}:*:bb:feed"):
                    await client.delete(key)
                rounds["deletions"] += 1

    disturbing = asyncio.create_task(chaos())
    try:
        truth, watchers = await recorded_run(server.addresses, f"{BOARD}-faults")
    finally:
        disturbing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await disturbing
        await client.aclose()
    summary = check_run(truth, watchers)
    assert rounds["kills"] >= 3 and rounds["killed"] >= 3 and rounds["deletions"] >= 3
    print(f"\nwatch run under Redis faults ({rounds}): {summary}")
