"""Vector indexes per (tenant, user): derived state over the durable store.

`VectorIndex` is the small interface the domain needs from a vector library;
`FaissIndexFactory` makes FAISS ones: exact inner product over unit vectors
(`IndexFlatIP`, cosine similarity) by default, HNSW for large users.
HNSW cannot remove ids, so deletions there become tombstones, excluded from
every search with an id selector, until the next rebuild drops them.

`VectorIndexes` keeps one index per user, built from the store on first use
or at startup (`rebuild_all`), and applies `VectorChange`s from a
`ChangeFeed`: every replica subscribes, so an episode recorded on one replica
is searchable on all of them. The store is the source of truth: an index can
always be thrown away and rebuilt, and a rebuild never loses a change that
arrives while it runs (changes are queued and replayed onto the new index).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from statekeeper.core.errors import FailedPreconditionError
from statekeeper.core.memory_config import IndexConfig
from statekeeper.core.memory_models import IndexState, Vector, VectorBatch
from statekeeper.storage.memory_store import EpisodeStore

log = logging.getLogger(__name__)

Clock = Callable[[], float]
# Searches over fewer floats than this run on the event loop; bigger ones in a
# worker thread so a large exact search does not stall other calls.
_INLINE_SEARCH_FLOATS = 4_000_000
# One query is searched on one OpenMP thread: splitting it costs more than it
# gains, and on a busy 2-core box spinning OpenMP teams made single searches
# 3-10x slower (bench/memory.py). Bulk adds (HNSW graph building) use all
# cores. OpenMP's thread count is per calling thread, so each call sets it.
_PARALLEL_ADD_MIN = 1000
_ALL_CORES = os.cpu_count() or 1


class VectorIndex(Protocol):
    """One user's vectors. Keys are the store's vector keys; vectors are unit
    length, so scores are cosine similarities."""

    @property
    def description(self) -> str:
        """FAISS-style description, e.g. "Flat" or "HNSW32"."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def live_count(self) -> int: ...

    @property
    def tombstone_count(self) -> int: ...

    @property
    def search_floats(self) -> int:
        """About how many floats one search reads: what decides whether it
        runs on the event loop or in a worker thread."""
        ...

    def contains(self, key: int) -> bool: ...

    def add(self, keys: npt.NDArray[np.int64], vectors: Vector) -> None:
        """Adds vectors whose keys are not in the index (callers filter)."""
        ...

    def remove(self, keys: Sequence[int]) -> None:
        """Removes these keys; unknown keys are ignored."""
        ...

    def search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        """Up to k (key, similarity) pairs, best first, among `allowed` keys
        if given."""
        ...


class IndexFactory(Protocol):
    def create(self, dimension: int, expected_size: int) -> VectorIndex: ...

    def wants_rebuild(self, index: VectorIndex) -> bool:
        """True if the index should be rebuilt (type outgrown, tombstones)."""
        ...


# ----- FAISS -------------------------------------------------------------------


def _faiss() -> Any:
    """FAISS, imported on first use so that the domain imports without it."""
    import faiss

    return faiss


class _FaissIndex:
    """Common part: an IndexIDMap over a FAISS index, with the key set."""

    def __init__(self, inner: object, dimension: int, description: str) -> None:
        faiss = _faiss()
        self._faiss = faiss
        self._index = faiss.IndexIDMap2(inner) if description == "Flat" else faiss.IndexIDMap(inner)
        self._dimension = dimension
        self._description = description
        self._live: set[int] = set()
        self._tombstones: set[int] = set()

    @property
    def description(self) -> str:
        return self._description

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def live_count(self) -> int:
        return len(self._live)

    @property
    def tombstone_count(self) -> int:
        return len(self._tombstones)

    def contains(self, key: int) -> bool:
        return key in self._live

    def add(self, keys: npt.NDArray[np.int64], vectors: Vector) -> None:
        if len(keys) == 0:
            return
        self._faiss.omp_set_num_threads(_ALL_CORES if len(keys) >= _PARALLEL_ADD_MIN else 1)
        self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), keys)
        self._live.update(int(k) for k in keys)

    def search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        k = min(k, len(self._live) if allowed is None else len(allowed))
        if k <= 0:
            return []
        params = self._search_params(allowed)
        self._faiss.omp_set_num_threads(1)
        scores, ids = self._index.search(query.reshape(1, -1), k, params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def _selector(self, allowed: npt.NDArray[np.int64] | None) -> Any:
        faiss = self._faiss
        excluded = None
        if self._tombstones:
            dead = np.fromiter(self._tombstones, np.int64, len(self._tombstones))
            excluded = faiss.IDSelectorNot(faiss.IDSelectorBatch(dead))
        if allowed is None:
            return excluded
        selected = faiss.IDSelectorBatch(np.ascontiguousarray(allowed, dtype=np.int64))
        return selected if excluded is None else faiss.IDSelectorAnd(selected, excluded)

    def _search_params(self, allowed: npt.NDArray[np.int64] | None) -> Any:
        selector = self._selector(allowed)
        if selector is None:
            return None
        params = self._faiss.SearchParameters()
        params.sel = selector
        # The selector must outlive the search; FAISS keeps a raw pointer.
        params._keepalive = selector
        return params


class FlatIndex(_FaissIndex):
    """Exact search: every live vector is compared. Removal is real."""

    def __init__(self, dimension: int) -> None:
        super().__init__(_faiss().IndexFlatIP(dimension), dimension, "Flat")

    @property
    def search_floats(self) -> int:
        return self.live_count * self.dimension

    def remove(self, keys: Sequence[int]) -> None:
        present = [k for k in keys if k in self._live]
        if present:
            self._index.remove_ids(np.asarray(present, dtype=np.int64))
            self._live.difference_update(present)


class HnswIndex(_FaissIndex):
    """Approximate search on an HNSW graph. Removal leaves a tombstone."""

    def __init__(self, dimension: int, config: IndexConfig) -> None:
        faiss = _faiss()
        inner = faiss.IndexHNSWFlat(dimension, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = config.hnsw_ef_construction
        inner.hnsw.efSearch = config.hnsw_ef_search
        self._ef_search = config.hnsw_ef_search
        self._m = config.hnsw_m
        super().__init__(inner, dimension, f"HNSW{config.hnsw_m}")

    @property
    def search_floats(self) -> int:
        # A search visits about efSearch nodes with up to 2*M neighbours each.
        return min(self.live_count, self._ef_search * 2 * self._m) * self.dimension

    def remove(self, keys: Sequence[int]) -> None:
        present = [k for k in keys if k in self._live]
        self._live.difference_update(present)
        self._tombstones.update(present)

    def _search_params(self, allowed: npt.NDArray[np.int64] | None) -> Any:
        params = self._faiss.SearchParametersHNSW()
        params.efSearch = max(self._ef_search, 1)
        selector = self._selector(allowed)
        if selector is not None:
            params.sel = selector
            params._keepalive = selector
        return params


class FaissIndexFactory:
    def __init__(self, config: IndexConfig) -> None:
        if config.kind not in ("auto", "flat", "hnsw"):
            raise ValueError(f"index kind must be auto, flat or hnsw, not {config.kind!r}")
        self._config = config

    def create(self, dimension: int, expected_size: int) -> VectorIndex:
        if self._use_hnsw(expected_size):
            return HnswIndex(dimension, self._config)
        return FlatIndex(dimension)

    def wants_rebuild(self, index: VectorIndex) -> bool:
        total = index.live_count + index.tombstone_count
        if total and index.tombstone_count / total > self._config.tombstone_rebuild_ratio:
            return True
        is_hnsw = index.description.startswith("HNSW")
        return is_hnsw != self._use_hnsw(index.live_count)

    def _use_hnsw(self, size: int) -> bool:
        kind = self._config.kind
        return kind == "hnsw" or (kind == "auto" and size >= self._config.hnsw_min_vectors)


# ----- change feed ---------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class IndexEntry:
    """A vector to add (or, with `vector` None, new ranking data for a key
    already indexed)."""

    key: int
    importance: float
    occur_time: float
    vector: Vector | None = None


@dataclass(frozen=True, eq=False)
class VectorChange:
    tenant: str
    user_id: str
    upserts: tuple[IndexEntry, ...] = ()
    removed: tuple[int, ...] = ()
    embedding_model: str = ""


ChangeHandler = Callable[[VectorChange], None]


class ChangeFeed(Protocol):
    """Carries index changes to every replica, the publisher's included."""

    def subscribe(self, handler: ChangeHandler) -> Callable[[], None]:
        """Registers a handler; returns a function that unregisters it."""
        ...

    async def publish(self, change: VectorChange) -> None: ...


class InProcessChangeFeed:
    """The embedded feed: every subscriber in this process sees each change
    at once, in publish order."""

    def __init__(self) -> None:
        self._handlers: list[ChangeHandler] = []

    def subscribe(self, handler: ChangeHandler) -> Callable[[], None]:
        self._handlers.append(handler)
        return lambda: self._handlers.remove(handler)

    async def publish(self, change: VectorChange) -> None:
        for handler in list(self._handlers):
            try:
                handler(change)
            except Exception:  # one broken replica must not stop the others
                log.exception("vector change handler failed")


# ----- per-user indexes ----------------------------------------------------------


@dataclass
class _UserIndex:
    """One user's index and the ranking data of its keys."""

    index: VectorIndex
    importance: dict[int, float] = field(default_factory=dict)
    occur_time: dict[int, float] = field(default_factory=dict)
    embedding_model: str = ""
    # Searches running in worker threads; FAISS must not be changed under
    # them, so changes wait in `deferred` until the last one finishes.
    readers: int = 0
    deferred: list[VectorChange] = field(default_factory=list)
    cached_ceiling: tuple[float, float] | None = None

    def apply(self, change: VectorChange) -> None:
        if self.readers:
            self.deferred.append(change)
        else:
            self._apply_now(change)

    def release_reader(self) -> None:
        self.readers -= 1
        if self.readers == 0:
            deferred, self.deferred = self.deferred, []
            for change in deferred:
                self._apply_now(change)

    def ceiling(self) -> tuple[float, float]:
        """(max importance, max occur_time), cached until a change."""
        if self.cached_ceiling is None:
            self.cached_ceiling = (max(self.importance.values()), max(self.occur_time.values()))
        return self.cached_ceiling

    def _apply_now(self, change: VectorChange) -> None:
        self.cached_ceiling = None
        fresh = [
            e for e in change.upserts if e.vector is not None and not self.index.contains(e.key)
        ]
        if fresh:
            keys = np.fromiter((e.key for e in fresh), np.int64, len(fresh))
            self.index.add(keys, np.vstack([e.vector for e in fresh if e.vector is not None]))
        for entry in change.upserts:
            if self.index.contains(entry.key):
                self.importance[entry.key] = entry.importance
                self.occur_time[entry.key] = entry.occur_time
        if change.removed:
            self.index.remove(change.removed)
            for key in change.removed:
                self.importance.pop(key, None)
                self.occur_time.pop(key, None)
        if change.embedding_model:
            self.embedding_model = change.embedding_model


@dataclass
class _Slot:
    current: _UserIndex | None = None
    building: bool = False
    pending: list[VectorChange] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_rebuild_time: float | None = None


@dataclass(frozen=True)
class IndexStats:
    user_id: str
    state: IndexState
    index_type: str = ""
    dimension: int = 0
    vector_count: int = 0
    tombstone_count: int = 0
    last_rebuild_time: float | None = None
    embedding_model: str = ""


@dataclass(frozen=True)
class Candidate:
    key: int
    similarity: float
    importance: float
    occur_time: float


@dataclass(frozen=True)
class SearchOutcome:
    candidates: list[Candidate]
    index_type: str
    exhausted: bool  # every allowed vector was returned


class VectorIndexes:
    """Every user's index in this process, kept in sync through the feed."""

    def __init__(
        self,
        store: EpisodeStore,
        factory: IndexFactory,
        feed: ChangeFeed,
        clock: Clock = time.time,
    ) -> None:
        self._store = store
        self._factory = factory
        self._feed = feed
        self._clock = clock
        self._slots: dict[tuple[str, str], _Slot] = {}
        self._unsubscribe = feed.subscribe(self._on_change)

    def close(self) -> None:
        self._unsubscribe()

    @property
    def feed(self) -> ChangeFeed:
        return self._feed

    def _on_change(self, change: VectorChange) -> None:
        slot = self._slots.get((change.tenant, change.user_id))
        if slot is None:
            return  # never loaded here: a later load reads the store, which has it
        if slot.current is not None:
            slot.current.apply(change)
        elif not slot.building and slot.last_rebuild_time is not None:
            # Loaded while the user had no vectors: these are the first.
            slot.current = self._index_from_changes([change])
        if slot.building:
            slot.pending.append(change)

    async def dimension(self, tenant: str, user_id: str) -> int:
        """The dimension of the user's vectors; 0 if the user has none."""
        user_index = await self._loaded(tenant, user_id)
        return 0 if user_index is None else user_index.index.dimension

    async def search(
        self,
        tenant: str,
        user_id: str,
        query: Vector,
        k: int,
        allowed: npt.NDArray[np.int64] | None,
    ) -> SearchOutcome:
        user_index = await self._loaded(tenant, user_id)
        if user_index is None:
            return SearchOutcome([], "", exhausted=True)
        index = user_index.index
        if index.search_floats < _INLINE_SEARCH_FLOATS:
            hits = index.search(query, k, allowed)
        else:
            # FAISS releases the GIL while it searches; changes arriving
            # meanwhile are deferred (see _UserIndex.apply).
            user_index.readers += 1
            try:
                hits = await asyncio.to_thread(index.search, query, k, allowed)
            finally:
                user_index.release_reader()
        population = index.live_count if allowed is None else len(allowed)
        candidates = [
            Candidate(
                key,
                similarity,
                user_index.importance.get(key, 0.0),
                user_index.occur_time.get(key, 0.0),
            )
            for key, similarity in hits
            if index.contains(key)
        ]
        return SearchOutcome(candidates, index.description, exhausted=len(hits) >= population)

    def ranking_ceiling(self, tenant: str, user_id: str) -> tuple[float, float]:
        """(highest importance, newest occur_time) over the user's indexed
        episodes: what bounds the score of an episode a search did not return."""
        slot = self._slots.get((tenant, user_id))
        if slot is None or slot.current is None or not slot.current.importance:
            return 1.0, float("inf")
        return slot.current.ceiling()

    def stats(self, tenant: str, user_id: str) -> IndexStats | None:
        """Stats of a loaded index, None if this replica has not loaded it."""
        slot = self._slots.get((tenant, user_id))
        if slot is None:
            return None
        if slot.current is None:
            if slot.building:
                return IndexStats(user_id, IndexState.BUILDING)
            return IndexStats(user_id, IndexState.ABSENT)
        index = slot.current.index
        return IndexStats(
            user_id=user_id,
            state=IndexState.BUILDING if slot.building else IndexState.READY,
            index_type=index.description,
            dimension=index.dimension,
            vector_count=index.live_count,
            tombstone_count=index.tombstone_count,
            last_rebuild_time=slot.last_rebuild_time,
            embedding_model=slot.current.embedding_model,
        )

    async def load_stats(self, tenant: str, user_id: str) -> IndexStats:
        await self._loaded(tenant, user_id)
        stats = self.stats(tenant, user_id)
        return stats if stats is not None else IndexStats(user_id, IndexState.ABSENT)

    async def rebuild(self, tenant: str, user_id: str) -> IndexStats:
        """Rebuilds from the store and swaps the new index in; searches keep
        using the old one meanwhile. FAILED_PRECONDITION if one is running."""
        slot = self._slots.setdefault((tenant, user_id), _Slot())
        if slot.building or slot.lock.locked():
            raise FailedPreconditionError(
                f"a rebuild of {user_id!r}'s index is running", condition="RUN_IN_PROGRESS"
            )
        await self._build(tenant, user_id, slot)
        return await self.load_stats(tenant, user_id)

    async def rebuild_all(self) -> int:
        """Builds the index of every user with vectors (server startup),
        logging progress; returns how many were built."""
        owners = await self._store.index_owners()
        started = time.monotonic()
        log.info("rebuilding vector indexes", extra={"indexes": len(owners)})
        for done, (tenant, user_id) in enumerate(owners, start=1):
            slot = self._slots.setdefault((tenant, user_id), _Slot())
            if slot.last_rebuild_time is None:  # not loaded on demand meanwhile
                await self._build(tenant, user_id, slot)
            if done % 100 == 0 or done == len(owners):
                log.info(
                    "vector index rebuild progress",
                    extra={
                        "built": done,
                        "indexes": len(owners),
                        "elapsed_s": round(time.monotonic() - started, 2),
                    },
                )
        return len(owners)

    async def maintain(self) -> int:
        """Rebuilds the indexes that want it (too many tombstones, or their
        size calls for another type); returns how many were rebuilt."""
        rebuilt = 0
        for (tenant, user_id), slot in list(self._slots.items()):
            current = slot.current
            if current is None or slot.building or not self._factory.wants_rebuild(current.index):
                continue
            await self._build(tenant, user_id, slot)
            rebuilt += 1
        return rebuilt

    async def _loaded(self, tenant: str, user_id: str) -> _UserIndex | None:
        slot = self._slots.setdefault((tenant, user_id), _Slot())
        if slot.current is None and slot.last_rebuild_time is None:
            async with slot.lock:
                if slot.current is None and slot.last_rebuild_time is None:
                    await self._build_locked(tenant, user_id, slot)
        return slot.current

    async def _build(self, tenant: str, user_id: str, slot: _Slot) -> None:
        async with slot.lock:  # one build per user at a time
            await self._build_locked(tenant, user_id, slot)

    async def _build_locked(self, tenant: str, user_id: str, slot: _Slot) -> None:
        slot.building = True
        slot.pending = []
        try:
            batch = await self._store.load_vectors(tenant, user_id)
            fresh = None if batch is None else await asyncio.to_thread(self._index_from, batch)
            if fresh is not None:
                for change in slot.pending:
                    fresh.apply(change)
            elif slot.pending:
                fresh = self._index_from_changes(slot.pending)
            slot.current = fresh
            slot.last_rebuild_time = self._clock()
        finally:
            slot.building = False
            slot.pending = []

    def _index_from(self, batch: VectorBatch) -> _UserIndex:
        index = self._factory.create(batch.dimension, len(batch))
        index.add(batch.keys, batch.vectors)
        keys = [int(k) for k in batch.keys]
        return _UserIndex(
            index=index,
            importance=dict(zip(keys, batch.importance.tolist(), strict=True)),
            occur_time=dict(zip(keys, batch.occur_time.tolist(), strict=True)),
            embedding_model=batch.embedding_model,
        )

    def _index_from_changes(self, changes: list[VectorChange]) -> _UserIndex | None:
        """The first vectors of a user arrived while the store had none."""
        first = next((e.vector for c in changes for e in c.upserts if e.vector is not None), None)
        if first is None:
            return None
        user_index = _UserIndex(self._factory.create(int(first.shape[0]), 1))
        for change in changes:
            user_index.apply(change)
        return user_index

    async def publish(self, change: VectorChange) -> None:
        await self._feed.publish(change)
