"""VectorIndexes: lazy loads, rebuilds that lose no concurrent change, type
selection by size, tombstone upkeep, the change feed between replicas."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from statekeeper.core.errors import FailedPreconditionError
from statekeeper.core.memory.config import IndexConfig
from statekeeper.core.memory.faiss_index import FaissIndexFactory
from statekeeper.core.memory.models import IndexState, VectorBatch
from statekeeper.core.memory.vector_index import (
    IndexEntry,
    InProcessChangeFeed,
    VectorChange,
    VectorIndexes,
    _read_in_thread,
    _UserIndex,
)
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.memory.data import episodes_for, gaussian

T = "t"


class SlowStore(EmbeddedMemoryStore):
    """Holds `load_vectors` open until released, to race changes with it."""

    gate: asyncio.Event | None = None

    async def load_vectors(self, tenant: str, user_id: str) -> VectorBatch | None:
        loaded = await super().load_vectors(tenant, user_id)
        if self.gate is not None:
            await self.gate.wait()
        return loaded


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SlowStore]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    yield SlowStore(storage)
    await storage.close()


def indexes_for(store: SlowStore, **config: object) -> VectorIndexes:
    factory = FaissIndexFactory(IndexConfig(**config))  # type: ignore[arg-type]
    return VectorIndexes(store, factory, InProcessChangeFeed())


async def add(store: SlowStore, indexes: VectorIndexes, count: int, seed: int) -> list[int]:
    stored = await store.insert_episodes(
        T, episodes_for("u1", gaussian(count, 16, seed), 0.0, f"s{seed}")
    )
    entries = tuple(
        IndexEntry(e.vector_key, e.importance, e.occur_time, e.embedding) for e in stored
    )
    await indexes.publish(VectorChange(T, "u1", upserts=entries))
    return [e.vector_key for e in stored]


async def test_changes_during_a_rebuild_are_not_lost(store: SlowStore) -> None:
    indexes = indexes_for(store)
    await add(store, indexes, 10, seed=1)
    assert (await indexes.load_stats(T, "u1")).vector_count == 10
    store.gate = asyncio.Event()
    rebuild = asyncio.create_task(indexes.rebuild(T, "u1"))
    await asyncio.sleep(0.05)  # the rebuild has read the store and waits
    late = await add(store, indexes, 5, seed=2)
    removed = late[0]
    await indexes.publish(VectorChange(T, "u1", removed=(removed,)))
    with pytest.raises(FailedPreconditionError):
        await indexes.rebuild(T, "u1")  # one rebuild at a time
    store.gate.set()
    stats = await rebuild
    assert stats.state == IndexState.READY and stats.vector_count == 14
    found = await indexes.search(T, "u1", gaussian(1, 16, 2)[0], 20, None)
    assert removed not in {c.key for c in found.candidates}


async def test_auto_switches_to_hnsw_when_the_user_grows(store: SlowStore) -> None:
    indexes = indexes_for(store, kind="auto", hnsw_min_vectors=50)
    await add(store, indexes, 10, seed=3)
    assert (await indexes.load_stats(T, "u1")).index_type == "Flat"
    await add(store, indexes, 45, seed=4)
    assert await indexes.maintain() == 1
    assert (await indexes.load_stats(T, "u1")).index_type == f"HNSW{IndexConfig().hnsw_m}"
    assert await indexes.maintain() == 0


async def test_tombstones_trigger_a_rebuild(store: SlowStore) -> None:
    indexes = indexes_for(store, kind="hnsw", tombstone_rebuild_ratio=0.2)
    keys = await add(store, indexes, 20, seed=5)
    await indexes.load_stats(T, "u1")
    await store.delete_episodes(T, [f"s5-u1-{row}" for row in range(5)])
    await indexes.publish(VectorChange(T, "u1", removed=tuple(keys[:5])))
    assert (await indexes.load_stats(T, "u1")).tombstone_count == 5
    assert await indexes.maintain() == 1
    stats = await indexes.load_stats(T, "u1")
    assert stats.tombstone_count == 0 and stats.vector_count == 15


async def test_feed_reaches_a_loaded_replica_and_skips_unloaded_ones(store: SlowStore) -> None:
    feed = InProcessChangeFeed()
    factory = FaissIndexFactory(IndexConfig())
    one = VectorIndexes(store, factory, feed)
    two = VectorIndexes(store, factory, feed)
    assert (await two.load_stats(T, "u1")).state == IndexState.ABSENT  # loaded, empty
    await add(store, one, 3, seed=6)
    assert (await two.load_stats(T, "u1")).vector_count == 3  # arrived by the feed
    three = VectorIndexes(store, factory, feed)  # loads from the store on first use
    assert (await three.load_stats(T, "u1")).vector_count == 3
    assert one.stats(T, "u1") is None  # never loaded there: the feed skips it
    two.close()
    await add(store, one, 2, seed=7)
    assert (await three.load_stats(T, "u1")).vector_count == 5
    assert two.stats(T, "u1").vector_count == 3  # type: ignore[union-attr]  # unsubscribed


async def test_a_cancelled_reader_holds_changes_back_until_its_thread_is_done() -> None:
    """FAISS runs without the GIL: a search or snapshot write whose caller
    was cancelled (deadline, shutdown) still reads the index in its thread,
    so a change arriving meanwhile must wait for the thread, not the caller."""
    index = FaissIndexFactory(IndexConfig(kind="flat")).create(4, 10)
    user = _UserIndex(index)
    release = threading.Event()
    started = threading.Event()

    def slow_read() -> int:
        started.set()
        release.wait(timeout=30)
        return index.live_count

    reader = asyncio.ensure_future(_read_in_thread(user, slow_read))
    while not started.is_set():
        await asyncio.sleep(0.01)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    vector = np.ones(4, dtype=np.float32) / 2
    user.apply(VectorChange("t", "u", (IndexEntry(1, 0.5, 0.0, vector),)))
    assert user.readers == 1 and index.live_count == 0  # deferred: the thread still reads
    release.set()
    for _ in range(3000):
        if user.readers == 0:
            break
        await asyncio.sleep(0.01)
    assert user.readers == 0 and index.live_count == 1  # applied once the thread finished
