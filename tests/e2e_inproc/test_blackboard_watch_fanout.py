"""Watch fan-out through gRPC: many watchers of one board, with different
selectors and with or without previous values, while concurrent writers
commit bursts through the other replica. A commit reaches an idle watcher
straight from the hub's dispatch and a busy one through its queue; either
way every watcher gets each matching event exactly once, in revision order,
with the previous value only when it asked for it."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import grpc

from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.e2e_inproc.conftest import ALPHA, Deployment, aio_channel
from tests.harness.deadlines import scaled

BOARD = "fanout"
KEYS = [f"{group}/{i}" for group in ("a", "b") for i in range(6)]
WRITERS = 4
WRITES_PER_WRITER = 40
PUT, DELETE = pb.BLACKBOARD_EVENT_TYPE_PUT, pb.BLACKBOARD_EVENT_TYPE_DELETE


@dataclass(frozen=True)
class Seen:
    """One event as a watcher got it, or as the writers' replies say it was."""

    revision: int
    key: str
    type: int
    previous_revision: int  # 0: no previous entry


@dataclass
class Truth:
    """The board's events, from the writers' replies (revision -> event)."""

    events: dict[int, Seen] = field(default_factory=dict)
    last_revision: int = 0

    def ordered(self) -> list[Seen]:
        return [self.events[revision] for revision in sorted(self.events)]


@dataclass
class Watcher:
    selector: dict[str, str]
    prev_value: bool
    seen: list[Seen] = field(default_factory=list)

    def wants(self, key: str) -> bool:
        if "prefix" in self.selector:
            return key.startswith(self.selector["prefix"])
        if "pattern" in self.selector:
            return key.endswith(self.selector["pattern"].lstrip("*"))
        return True


async def write(stub: BlackboardServiceStub, rng: random.Random, truth: Truth) -> None:
    for _ in range(WRITES_PER_WRITER):
        key = rng.choice(KEYS)
        if rng.random() < 0.75:
            data = pb.BlackboardValue(payload=common_pb2.Payload(data=rng.randbytes(16)))
            request = pb.PutEntryRequest(board=BOARD, key=key, value=data, return_previous=True)
            reply = await stub.PutEntry(request, metadata=ALPHA)
            previous = reply.previous.mod_revision if reply.HasField("previous") else 0
            revision = reply.entry.mod_revision
            truth.events[revision] = Seen(revision, key, PUT, previous)
        else:
            removal = pb.DeleteEntryRequest(board=BOARD, key=key, return_previous=True)
            deleted = await stub.DeleteEntry(removal, metadata=ALPHA)
            revision = deleted.header.revision
            if deleted.deleted:
                truth.events[revision] = Seen(revision, key, DELETE, deleted.previous.mod_revision)
        truth.last_revision = max(truth.last_revision, revision)
        if rng.random() < 0.2:
            await asyncio.sleep(rng.uniform(0, 0.01))  # quiet gaps: watchers go idle


async def read(
    call: grpc.aio.UnaryStreamCall, watcher: Watcher, done: asyncio.Event, truth: Truth
) -> None:
    """Records the watcher's events until its resume revision passes the
    last write (progress notifications carry it past unmatched revisions)."""
    resume = 0
    for _ in range(100_000):  # bounded
        if done.is_set() and resume > truth.last_revision:
            return
        response = await asyncio.wait_for(call.read(), scaled(10))
        assert response is not grpc.aio.EOF, "the server ended a watch"
        resume = response.resume_revision or resume
        for event in response.events.events:
            previous = event.previous.mod_revision if event.HasField("previous") else 0
            watcher.seen.append(Seen(event.revision, event.entry.key, event.type, previous))
    raise AssertionError("bounded loop exhausted")


async def test_every_watcher_gets_each_matching_event_once_in_order(server: Deployment) -> None:
    selectors: list[dict[str, str]] = [{}, {"prefix": "a/"}, {"pattern": "*/3"}]
    watchers = [Watcher(selectors[i % 3], prev_value=i % 2 == 0) for i in range(24)]
    truth = Truth()
    writers_done = asyncio.Event()
    address_of_writes, address_of_watches = server.addresses[0], server.addresses[-1]
    async with (
        aio_channel(address_of_watches) as watching,
        aio_channel(address_of_writes) as writing,
    ):
        watch_stub, write_stub = BlackboardServiceStub(watching), BlackboardServiceStub(writing)
        calls = []
        for watcher in watchers:
            request = pb.WatchRequest(
                board=BOARD, prev_value=watcher.prev_value, **watcher.selector
            )
            request.progress_notify_interval.FromMilliseconds(50)
            call = watch_stub.Watch(request, metadata=ALPHA)
            started = await asyncio.wait_for(call.read(), scaled(10))
            assert started.HasField("started")
            calls.append(call)
        readers = [
            asyncio.create_task(read(call, watcher, writers_done, truth))
            for call, watcher in zip(calls, watchers, strict=True)
        ]
        await asyncio.gather(
            *(write(write_stub, random.Random(seed), truth) for seed in range(WRITERS))
        )
        writers_done.set()
        try:
            await asyncio.wait_for(asyncio.gather(*readers), scaled(60))
        finally:
            for call in calls:
                call.cancel()
    history = truth.ordered()
    assert len(history) > WRITERS * WRITES_PER_WRITER / 2
    for index, watcher in enumerate(watchers):
        expected = [
            event if watcher.prev_value else Seen(event.revision, event.key, event.type, 0)
            for event in history
            if watcher.wants(event.key)
        ]
        assert watcher.seen == expected, f"watcher {index} ({watcher.selector})"
