"""Watch in process: snapshot, filters, previous values, progress bookmarks,
slow consumers, feed repair, shutdown and limits."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from statekeeper.core.blackboard.models import (
    BlackboardLimits,
    EventType,
    RevisionBatch,
    SlowConsumerError,
    Value,
)
from statekeeper.core.blackboard.service import Blackboard, PutOp, WatchRequest
from statekeeper.core.blackboard.watch import WatchMessage, WatchMessageKind
from statekeeper.core.errors import LimitExceededError, StorageUnavailableError
from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore, InProcessEventFeed
from statekeeper.storage.embedded.sessions import EmbeddedStorage

T = "tenant-a"
LIMITS = BlackboardLimits(
    expiry_sweep_interval_seconds=3600,
    compaction_interval_seconds=3600,
    min_progress_interval_seconds=0.01,
    feed_check_interval_seconds=0.05,
)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedBlackboardStore]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    blackboard_store = EmbeddedBlackboardStore(storage)
    await blackboard_store.start()
    yield blackboard_store
    await storage.close()


async def running(store: EmbeddedBlackboardStore, **limits: object) -> Blackboard:
    board = Blackboard(store, dataclasses.replace(LIMITS, **limits))  # type: ignore[arg-type]
    await board.start()
    return board


@pytest.fixture
async def board(store: EmbeddedBlackboardStore) -> AsyncIterator[Blackboard]:
    blackboard = await running(store)
    yield blackboard
    await blackboard.stop()


def v(text: str) -> Value:
    return Value.payload(text.encode())


async def collect(
    stream: AsyncIterator[WatchMessage], count: int, timeout: float = 5
) -> list[WatchMessage]:
    async def take() -> list[WatchMessage]:
        taken = []
        async for message in stream:
            taken.append(message)
            if len(taken) == count:
                break
        return taken

    return await asyncio.wait_for(take(), timeout)


def events_of(messages: Sequence[WatchMessage]) -> list[tuple[EventType, str, int]]:
    return [(e.type, e.key, e.revision) for m in messages for e in m.events]


async def test_snapshot_then_events_from_the_next_revision(board: Blackboard) -> None:
    await board.put(T, "b", PutOp("a", v("1")))
    await board.put(T, "b", PutOp("b", v("2")))
    await board.put(T, "b", PutOp("skip", v("3")))
    stream = board.watch(T, WatchRequest("b", pattern="[ab]", initial_snapshot=True))
    started, begin, chunk, end = await collect(stream, 4)
    assert started.kind == WatchMessageKind.STARTED and started.revision == 4
    assert begin.revision == 3 and begin.resume_revision == 0
    assert [e.key for e in chunk.entries] == ["a", "b"]
    assert end.kind == WatchMessageKind.SNAPSHOT_END and end.entry_count == 2
    assert end.resume_revision == 4
    await board.put(T, "b", PutOp("a", v("4")))
    (events,) = await collect(stream, 1)
    assert events_of([events]) == [(EventType.PUT, "a", 4)] and events.resume_revision == 5


async def test_filters_by_pattern_and_event_type_and_previous_values(board: Blackboard) -> None:
    await board.put(T, "b", PutOp("k/1", v("old")))
    deletes = board.watch(
        T,
        WatchRequest(
            "b", prefix="k/", start_revision=1, prev_value=True,
            event_types=frozenset({EventType.DELETE}),
        ),
    )  # fmt: skip
    plain = board.watch(T, WatchRequest("b", prefix="k/", start_revision=1))
    await board.put(T, "b", PutOp("other", v("x")))
    await board.delete(T, "b", "k/1")
    _, only_delete = await collect(deletes, 2)
    (event,) = only_delete.events
    assert (event.type, event.key, event.revision) == (EventType.DELETE, "k/1", 3)
    assert event.previous is not None and event.previous.value == v("old")
    # Catching up, several revisions travel in one response.
    _, replay = await collect(plain, 2)
    assert events_of([replay]) == [(EventType.PUT, "k/1", 1), (EventType.DELETE, "k/1", 3)]
    assert all(e.previous is None for e in replay.events)


async def test_progress_is_a_bookmark_at_the_current_revision(board: Blackboard) -> None:
    stream = board.watch(T, WatchRequest("quiet", progress_interval_seconds=0.02))
    (started,) = await collect(stream, 1)
    await board.put(T, "elsewhere", PutOp("k", v("1")))
    await board.put(T, "elsewhere", PutOp("k", v("2")))
    for _ in range(20):
        (progress,) = await collect(stream, 1)
        assert progress.kind == WatchMessageKind.PROGRESS
        if progress.revision == 2:
            break
    assert progress.revision == 2 and progress.resume_revision == 3
    assert started.revision == 1


async def test_a_future_start_revision_waits_for_it(board: Blackboard) -> None:
    stream = board.watch(T, WatchRequest("b", start_revision=3))
    (started,) = await collect(stream, 1)
    for text in "123":
        await board.put(T, "b", PutOp("k", v(text)))
    (events,) = await collect(stream, 1)
    assert started.revision == 3 and events_of([events]) == [(EventType.PUT, "k", 3)]


async def test_a_subscriber_that_falls_behind_is_cancelled_with_its_resume_point(
    store: EmbeddedBlackboardStore,
) -> None:
    board = await running(store, watch_buffer_responses=2)
    stream = board.watch(T, WatchRequest("b"))
    (started,) = await collect(stream, 1)
    for index in range(5):  # the stream is not read meanwhile
        await board.put(T, "b", PutOp(f"k{index}", v("x")))
    await asyncio.sleep(0.05)
    with pytest.raises(SlowConsumerError) as slow:
        await collect(stream, 1)
    assert slow.value.metadata["resume_revision"] == str(started.revision)
    assert board.hub.watcher_count(T) == 0
    await board.stop()


async def test_the_hub_repairs_a_feed_that_loses_batches(store: EmbeddedBlackboardStore) -> None:
    """A production feed can lose a publish (a replica crashes between commit
    and publish) and reorder; watchers must still see every revision once."""
    feed: InProcessEventFeed = store.feed
    original = feed.deliver
    delivered = 0

    def lossy(batches: Sequence[RevisionBatch]) -> None:
        nonlocal delivered
        kept = []
        for batch in batches:
            delivered += 1
            if delivered % 3 != 0:  # every third batch is lost
                kept.append(batch)
        original(list(reversed(kept)))  # and the rest arrive out of order

    feed.deliver = lossy  # type: ignore[method-assign]
    board = await running(store)
    stream = board.watch(T, WatchRequest("b"))
    await collect(stream, 1)
    for index in range(9):
        await board.put(T, "b", PutOp(f"k{index}", v("x")))
    seen: list[int] = []
    while len(seen) < 9:
        (message,) = await collect(stream, 1)
        seen.extend(e.revision for e in message.events)
    assert seen == list(range(1, 10))
    await board.stop()


async def test_shutdown_ends_open_watches_as_unavailable(store: EmbeddedBlackboardStore) -> None:
    board = await running(store)
    stream = board.watch(T, WatchRequest("b"))
    await collect(stream, 1)
    pending = asyncio.ensure_future(collect(stream, 1))
    await asyncio.sleep(0.01)
    await board.stop()
    with pytest.raises(StorageUnavailableError):
        await pending


async def test_open_watches_are_limited_per_tenant(store: EmbeddedBlackboardStore) -> None:
    board = await running(store, max_watches_per_tenant=1)
    first = board.watch(T, WatchRequest("b"))
    await collect(first, 1)
    with pytest.raises(LimitExceededError):
        await collect(board.watch(T, WatchRequest("c")), 1)
    await collect(board.watch("tenant-b", WatchRequest("b")), 1)
    await board.stop()


async def test_events_of_one_transaction_stay_in_one_response(
    store: EmbeddedBlackboardStore,
) -> None:
    board = await running(store, max_events_per_response=2)
    await board.txn(T, "b", [], [PutOp(f"k{i}", v("x")) for i in range(3)], [])
    await board.put(T, "b", PutOp("after", v("y")))
    stream = board.watch(T, WatchRequest("b", start_revision=1))
    _, first, second = await collect(stream, 3)
    assert [e.revision for e in first.events] == [1, 1, 1]
    assert [e.revision for e in second.events] == [2]
    await board.stop()


async def test_a_watcher_cancelled_while_the_hub_starts_does_not_break_others(
    store: EmbeddedBlackboardStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = await running(store)
    release = asyncio.Event()
    original = store.header
    calls = 0

    async def slow_first_header(tenant: str) -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            await release.wait()
        return await original(tenant)

    monkeypatch.setattr(store, "header", slow_first_header)
    first = asyncio.ensure_future(collect(board.watch(T, WatchRequest("b")), 1))
    await asyncio.sleep(0.01)
    second = asyncio.ensure_future(collect(board.watch(T, WatchRequest("b")), 1))
    await asyncio.sleep(0.01)
    first.cancel()  # the initializing watcher goes away
    (started,) = await asyncio.wait_for(second, 2)
    assert started.kind == WatchMessageKind.STARTED
    release.set()
    await board.stop()
