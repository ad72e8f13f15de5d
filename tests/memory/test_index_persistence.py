"""Indexes that survive restarts: a restart loads the saved index and reads
only the changes made since (not every vector); a damaged snapshot is
rebuilt from the store; recall on a user whose index is loading answers
(from an exact scan of the vectors read so far) or fails fast with
INDEX_LOADING, never stalls; MemoryApp saves at stop and loads at start."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import IndexConfig, MemoryConfig
from statekeeper.core.memory.faiss_index import FaissIndexFactory, VectorIndex
from statekeeper.core.memory.models import Episode, IndexState, VectorBatch
from statekeeper.core.memory.store import MemoryStore
from statekeeper.core.memory.vector_index import (
    IndexLoadingError,
    InProcessChangeFeed,
    VectorIndexes,
)
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.index_snapshots import FileSnapshotStore
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.memory.data import episodes_for, gaussian
from tests.memory.helpers import NO_JOBS
from tests.services import configured, create_database, drop_database, reachable

T = "t"
USER = "u1"
DIMENSION = 32
# Small enough to build in a moment; snapshots kept from the first vector.
CONFIG = IndexConfig(kind="hnsw", snapshot_min_vectors=1)


class Counting(MemoryStore):
    """Records what index loads read; `gate` holds load_vectors open."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.full_loads = 0
        self.keys_read: list[int] = []
        self.gate: asyncio.Event | None = None

    async def load_vectors(self, tenant: str, user_id: str) -> VectorBatch | None:
        self.full_loads += 1
        if self.gate is not None:
            await self.gate.wait()
        return await super().load_vectors(tenant, user_id)  # type: ignore[safe-super]

    async def get_episodes_by_keys(
        self, tenant: str, user_id: str, keys: Sequence[int], include_embedding: bool
    ) -> list[Episode]:
        if include_embedding:
            self.keys_read.extend(keys)
        return await super().get_episodes_by_keys(  # type: ignore[safe-super]
            tenant, user_id, keys, include_embedding
        )


class CountingEmbedded(Counting, EmbeddedMemoryStore):
    pass


class CountingPostgres(Counting, PostgresMemoryStore):
    pass


CountingStore = Counting


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[CountingStore]:
    storage = EmbeddedStorage(tmp_path / "db")
    await storage.start()
    yield CountingEmbedded(storage)
    await storage.close()


@pytest.fixture(params=["embedded", "postgres"])
async def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[CountingStore]:
    """The same behaviour on both backends (PostgreSQL skipped, with the
    reason, when its server is not running)."""
    if request.param == "embedded":
        storage = EmbeddedStorage(tmp_path / "db")
        await storage.start()
        yield CountingEmbedded(storage)
        await storage.close()
        return
    services = configured()
    await reachable(services)
    dsn = await create_database(services)
    durable = PostgresStorage(dsn, pool_size=4, migrate_on_start=True)
    await durable.start()
    store = CountingPostgres(durable)
    await store.start()
    yield store
    await store.close()
    await durable.close()
    await drop_database(services, dsn)


def indexes_on(
    store: CountingStore, directory: Path, config: IndexConfig = CONFIG
) -> VectorIndexes:
    return VectorIndexes(
        store,
        FaissIndexFactory(config),
        InProcessChangeFeed(),
        snapshots=FileSnapshotStore(directory),
        config=config,
    )


async def insert(store: CountingStore, count: int, seed: int) -> list[Episode]:
    vectors = gaussian(count, DIMENSION, seed)
    return await store.insert_episodes(T, episodes_for(USER, vectors, 0.0, f"s{seed}"))


async def exact_top(store: CountingStore, query: npt.NDArray[np.float32], k: int) -> list[int]:
    batch = await store.load_vectors(T, USER)
    assert batch is not None
    scores = batch.vectors @ query
    return [int(batch.keys[i]) for i in np.argsort(-scores, kind="stable")[:k]]


async def found(indexes: VectorIndexes, query: npt.NDArray[np.float32], k: int) -> list[int]:
    outcome = await indexes.search(T, USER, query, k, None)
    return [c.key for c in outcome.candidates]


async def test_a_restart_loads_the_snapshot_and_reads_only_the_tail(
    any_store: CountingStore, tmp_path: Path
) -> None:
    store = any_store
    first = await insert(store, 400, seed=1)
    before = indexes_on(store, tmp_path / "idx")
    await before.rebuild_all()
    assert await before.save_snapshots() == 1
    assert await before.save_snapshots() == 0  # unchanged since: nothing to save
    before.close()
    # While "down": episodes added and deleted behind the index's back (as
    # another replica or an import would).
    tail = await insert(store, 30, seed=2)
    gone = first[:10]
    await store.delete_episodes(T, [e.episode_id for e in gone])

    store.full_loads, store.keys_read = 0, []
    after = indexes_on(store, tmp_path / "idx")
    await after.rebuild_all()
    assert store.full_loads == 0  # the file, not every vector
    assert sorted(store.keys_read) == sorted(e.vector_key for e in tail)  # only the tail
    stats = after.stats(T, USER)
    assert stats is not None and stats.state == IndexState.READY
    assert stats.vector_count == 420 and stats.index_type.startswith("HNSW")
    queries = gaussian(10, DIMENSION, 3)
    gone_keys = {e.vector_key for e in gone}
    for query in queries:
        top = await found(after, query, 10)
        assert not gone_keys & set(top)
        assert len(set(top) & set(await exact_top(store, query, 10))) >= 9
    for episode in tail[:5]:  # the tail is searchable: each finds itself first
        assert episode.embedding is not None
        assert (await found(after, episode.embedding, 1)) == [episode.vector_key]


async def test_a_damaged_snapshot_is_rebuilt_from_the_store(
    any_store: CountingStore, tmp_path: Path
) -> None:
    store = any_store
    await insert(store, 300, seed=4)
    before = indexes_on(store, tmp_path / "idx")
    await before.rebuild_all()
    await before.save_snapshots()
    before.close()
    path = FileSnapshotStore(tmp_path / "idx").path_for(T, USER)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the FAISS payload
    path.write_bytes(bytes(data))
    stray = path.with_suffix(".12345.tmp")  # a save cut short by a crash
    stray.write_bytes(b"partial")

    store.full_loads = 0
    after = indexes_on(store, tmp_path / "idx")
    await after.rebuild_all()
    assert store.full_loads == 1  # rebuilt from the store
    assert not path.exists()  # the damaged file is gone
    assert not stray.exists()
    query = gaussian(1, DIMENSION, 5)[0]
    assert len(set(await found(after, query, 10)) & set(await exact_top(store, query, 10))) >= 9
    assert await after.save_snapshots() == 1  # and a good one replaces it


class HeldIndex:
    """Wraps a real index; `add` waits for `release` (a slow graph build)."""

    def __init__(self, inner: VectorIndex, release: threading.Event) -> None:
        self.inner = inner
        self.release = release

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def add(self, keys: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        self.release.wait(timeout=30)
        self.inner.add(keys, vectors)


async def test_recall_during_a_slow_build_answers_from_an_exact_scan(
    store: CountingStore, tmp_path: Path
) -> None:
    await insert(store, 200, seed=6)
    release = threading.Event()
    factory = FaissIndexFactory(CONFIG)
    slow = dataclasses.replace(CONFIG, load_wait_seconds=5.0)
    indexes = indexes_on(store, tmp_path / "idx", slow)
    create = factory.create
    indexes._factory.create = lambda d, n: HeldIndex(create(d, n), release)  # type: ignore[method-assign, assignment, return-value]
    loading = asyncio.create_task(indexes.rebuild_all())
    try:
        query = gaussian(1, DIMENSION, 7)[0]
        started = time.monotonic()
        top = await found(indexes, query, 10)
        assert time.monotonic() - started < 5.0  # answered, not after the build
        assert top == await exact_top(store, query, 10)  # exact, from the stored vectors
        stats = indexes.stats(T, USER)
        assert stats is not None
        assert stats.state == IndexState.BUILDING and stats.vector_count == 200
        assert indexes.loading_state().loading == 1
        assert not loading.done()
    finally:
        release.set()
    await loading
    stats = await indexes.load_stats(T, USER)
    assert stats.state == IndexState.READY and stats.index_type.startswith("HNSW")
    assert indexes.loading_state().startup_done


async def test_recall_waits_a_bounded_time_then_fails_with_index_loading(
    store: CountingStore, tmp_path: Path
) -> None:
    await insert(store, 50, seed=8)
    indexes = indexes_on(
        store, tmp_path / "idx", dataclasses.replace(CONFIG, load_wait_seconds=0.3)
    )
    store.gate = asyncio.Event()  # the store read itself hangs
    query = gaussian(1, DIMENSION, 9)[0]
    started = time.monotonic()
    with pytest.raises(IndexLoadingError) as failure:
        await found(indexes, query, 5)
    assert failure.value.code == "UNAVAILABLE" and failure.value.reason == "INDEX_LOADING"
    assert time.monotonic() - started < 3.0
    store.gate.set()
    assert len(await found(indexes, query, 5)) == 5  # the load went on and finished


async def test_memory_app_saves_at_stop_and_loads_at_start(tmp_path: Path) -> None:
    config = dataclasses.replace(MemoryConfig(), index=CONFIG, **NO_JOBS)  # type: ignore[arg-type]
    vectors = gaussian(200, DIMENSION, 10)
    for round_ in range(2):
        storage = EmbeddedStorage(tmp_path / "db")
        await storage.start()
        counter = TokenCounter()
        sessions = SessionManager(
            storage.sessions, counter, ExtractiveSummarizer(counter), Limits()
        )
        app = MemoryApp(
            storage,
            sessions,
            counter,
            None,
            Limits(),
            config,
            ModelEndpoints(embedder_kind="none"),
            index_dir=tmp_path / "indexes",
        )
        await app.start(wait_for_indexes=True)
        try:
            if round_ == 0:
                await app.store.insert_episodes(T, episodes_for(USER, vectors, 0.0, "a"))
                await app.indexes.rebuild(T, USER)
                snapshot = FileSnapshotStore(tmp_path / "indexes").path_for(T, USER)
                assert not snapshot.exists()
            else:
                stats = app.indexes.stats(T, USER)
                assert stats is not None and stats.vector_count == 200
                assert app.index_loading().startup_done
        finally:
            await app.stop()
            await storage.close()
        assert snapshot.exists()  # written at stop
