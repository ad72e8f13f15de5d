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
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from statekeeper.core.errors import FailedPreconditionError, StatekeeperError
from statekeeper.core.memory.config import IndexConfig
from statekeeper.core.memory.faiss_index import (
    TUNING_SAMPLE,
    ExactScan,
    IndexFactory,
    SnapshotError,
    VectorIndex,
)
from statekeeper.core.memory.models import IndexState, Vector, VectorBatch
from statekeeper.core.memory.store import EpisodeStore

log = logging.getLogger(__name__)

_T = TypeVar("_T")


async def _read_in_thread(user_index: _UserIndex, work: Callable[..., _T], *args: Any) -> _T:
    """Runs `work(*args)` in a worker thread as a reader of `user_index`.

    FAISS releases the GIL while it searches or serializes, so no change may
    be applied to the index until the thread is done. The reader is released
    by the thread's own completion, never by the awaiting task: a cancelled
    call (a client deadline, shutdown) must not let a change run while the
    thread still reads the index."""
    user_index.readers += 1
    future = asyncio.get_running_loop().run_in_executor(None, functools.partial(work, *args))

    def finished(done: asyncio.Future[_T]) -> None:
        if not done.cancelled():
            done.exception()  # retrieved: a failure after a cancelled wait is not logged twice
        user_index.release_reader()

    future.add_done_callback(finished)
    return await asyncio.shield(future)


Clock = Callable[[], float]
# Searches over fewer floats than this run on the event loop; bigger ones in a
# worker thread so a large exact search does not stall other calls.
_INLINE_SEARCH_FLOATS = 4_000_000
# Loading: vectors added per FAISS call while building (progress is logged
# between calls), keys read per store call when catching a snapshot up, how
# often progress is logged, and which loads are slow enough to log.
_BUILD_CHUNK = 20_000
_TAIL_CHUNK = 2_000
_PROGRESS_SECONDS = 5.0
_SLOW_LOAD_SECONDS = 1.0
# A recall waiting for a loading index re-checks at least this often.
_POLL_SECONDS = 0.1


class IndexLoadingError(StatekeeperError):
    """The user's index is still loading after the bounded wait."""

    code = "UNAVAILABLE"
    reason = "INDEX_LOADING"


# ----- FAISS -------------------------------------------------------------------


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


# ----- snapshots -----------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """One user's index as saved: the FAISS payload and what it covers.
    `max_key` is the highest vector key the index had seen (keys are never
    reused); the keys themselves are inside the payload."""

    tenant: str
    user_id: str
    payload: npt.NDArray[np.uint8]
    description: str
    dimension: int
    vector_count: int
    max_key: int
    embedding_model: str
    saved_at: float
    search_breadth: int = 0


class SnapshotStore(Protocol):
    """Where snapshots live (storage/index_snapshots.py: files). Blocking
    calls: VectorIndexes runs them in worker threads."""

    def save(self, snapshot: Snapshot) -> int:
        """Replaces the user's snapshot atomically; returns bytes written."""
        ...

    def load(self, tenant: str, user_id: str) -> Snapshot | None:
        """The user's snapshot, None if there is none; SnapshotError if it
        cannot be trusted (bad checksum, truncated, another user's)."""
        ...

    def discard(self, tenant: str, user_id: str) -> None:
        """Deletes the user's snapshot if there is one."""
        ...


# ----- per-user indexes ----------------------------------------------------------


@dataclass
class _UserIndex:
    """One user's index and the ranking data of its keys."""

    index: VectorIndex
    importance: dict[int, float] = field(default_factory=dict)
    occur_time: dict[int, float] = field(default_factory=dict)
    embedding_model: str = ""
    # Searches and snapshot writes running in worker threads; FAISS must not
    # be changed under them, so changes wait in `deferred` until the last one
    # finishes.
    readers: int = 0
    deferred: list[VectorChange] = field(default_factory=list)
    cached_ceiling: tuple[float, float] | None = None
    # Bumped by every applied change: a snapshot is due when it differs
    # from the version last saved (-1: never saved).
    version: int = 0
    saved_version: int = -1

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
        self.version += 1
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
    # While a first load builds the index: an exact scan over the vectors
    # already read, so recall answers instead of waiting for the build.
    interim: _UserIndex | None = None
    # Set whenever `current` or `interim` becomes available or a load ends.
    progress: asyncio.Event = field(default_factory=asyncio.Event)
    loader: asyncio.Task[None] | None = None
    failure: Exception | None = None

    @property
    def loaded(self) -> bool:
        return self.current is not None or self.last_rebuild_time is not None


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
class LoadingState:
    """What health and operators read: how many indexes are loading now,
    and whether the startup load of every index has finished."""

    loading: int
    loaded: int
    startup_done: bool


@dataclass(slots=True)
class Candidate:
    """One search hit with what ranking needs. Read-only by convention, not
    frozen: a recall builds hundreds, and a frozen dataclass costs about
    seven times as much to construct."""

    key: int
    similarity: float
    importance: float
    occur_time: float


@dataclass(frozen=True)
class SearchOutcome:
    candidates: list[Candidate]
    index_type: str
    exhausted: bool  # every allowed vector was returned


@dataclass(frozen=True)
class SearchColumns:
    """A search's candidates as columns, most similar first: keys, and per
    key its similarity (as the index returned it), importance and
    occur_time (0.0 where the index has none, as in Candidate)."""

    keys: list[int]
    similarity: npt.NDArray[np.float64]
    importance: npt.NDArray[np.float64]
    occur_time: npt.NDArray[np.float64]
    index_type: str
    exhausted: bool  # every allowed vector was returned

    @staticmethod
    def empty() -> SearchColumns:
        none = np.zeros(0, dtype=np.float64)
        return SearchColumns([], none, none, none, "", exhausted=True)


class VectorIndexes:
    """Every user's index in this process, kept in sync through the feed,
    saved to `snapshots` (if given) so that a restart loads them instead of
    rebuilding them."""

    def __init__(
        self,
        store: EpisodeStore,
        factory: IndexFactory,
        feed: ChangeFeed,
        clock: Clock = time.time,
        snapshots: SnapshotStore | None = None,
        config: IndexConfig | None = None,
    ) -> None:
        self._store = store
        self._factory = factory
        self._feed = feed
        self._clock = clock
        self._snapshots = snapshots
        self._config = config or IndexConfig()
        self._slots: dict[tuple[str, str], _Slot] = {}
        self._startup_done = False
        self._unsubscribe = feed.subscribe(self._on_change)

    def close(self) -> None:
        self._unsubscribe()
        for slot in self._slots.values():
            if slot.loader is not None:
                slot.loader.cancel()

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

    def forget(self, tenant: str, user_id: str) -> None:
        """Drops the user's index from this process and deletes its snapshot
        (EraseUser): a later load reads the store, which has nothing left."""
        slot = self._slots.pop((tenant, user_id), None)
        if slot is not None and slot.loader is not None:
            slot.loader.cancel()
        if self._snapshots is not None:
            self._snapshots.discard(tenant, user_id)

    def forget_keys(self, tenant: str, keys: Sequence[int]) -> None:
        """`forget` every user of the tenant whose index here holds one of
        `keys` (another replica erased them, naming only the keys)."""
        wanted = set(keys)
        for (slot_tenant, user_id), slot in list(self._slots.items()):
            if slot_tenant != tenant:
                continue
            held = [slot.current, slot.interim]
            if any(u is not None and any(u.index.contains(k) for k in wanted) for u in held):
                self.forget(tenant, user_id)

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
        ef_search: int = 0,
    ) -> SearchOutcome:
        """The k most similar vectors (among `allowed` keys if given). On a
        user whose index is loading, answers from an exact scan of the
        vectors read so far, or waits (bounded) for one."""
        found = await self._hits(tenant, user_id, query, k, allowed, ef_search)
        if found is None:
            return SearchOutcome([], "", exhausted=True)
        user_index, hits, exhausted = found
        # Bound once: a recall ranks dozens of hits, each looked up here.
        importance, occur_time, contains = (
            user_index.importance,
            user_index.occur_time,
            user_index.index.contains,
        )
        candidates = [
            Candidate(key, similarity, importance.get(key, 0.0), occur_time.get(key, 0.0))
            for key, similarity in hits
            if contains(key)
        ]
        return SearchOutcome(candidates, user_index.index.description, exhausted)

    async def search_columns(
        self,
        tenant: str,
        user_id: str,
        query: Vector,
        k: int,
        allowed: npt.NDArray[np.int64] | None,
    ) -> SearchColumns:
        """`search`, its candidates as columns: what a vector recall ranks
        with array arithmetic instead of an object per candidate."""
        found = await self._hits(tenant, user_id, query, k, allowed, 0)
        if found is None:
            return SearchColumns.empty()
        user_index, hits, exhausted = found
        contains = user_index.index.contains
        keys = [key for key, _ in hits]
        if not all(map(contains, keys)):  # never for the FAISS indexes: kept exact
            hits = [(key, similarity) for key, similarity in hits if contains(key)]
            keys = [key for key, _ in hits]
        importance, occur_time = user_index.importance.get, user_index.occur_time.get
        return SearchColumns(
            keys=keys,
            similarity=np.fromiter((s for _, s in hits), np.float64, len(hits)),
            importance=np.fromiter(map(importance, keys, repeat(0.0)), np.float64, len(keys)),
            occur_time=np.fromiter(map(occur_time, keys, repeat(0.0)), np.float64, len(keys)),
            index_type=user_index.index.description,
            exhausted=exhausted,
        )

    async def _hits(
        self,
        tenant: str,
        user_id: str,
        query: Vector,
        k: int,
        allowed: npt.NDArray[np.int64] | None,
        ef_search: int,
    ) -> tuple[_UserIndex, list[tuple[int, float]], bool] | None:
        """The user's index, its hits (key, similarity) and whether they are
        every allowed vector; None if the user has no vectors."""
        user_index = await self._loaded(tenant, user_id)
        if user_index is None:
            return None
        index = user_index.index
        if index.search_floats < _INLINE_SEARCH_FLOATS:
            hits = index.search(query, k, allowed, ef_search)
        else:
            # FAISS releases the GIL while it searches; changes arriving
            # meanwhile are deferred (see _UserIndex.apply).
            hits = await _read_in_thread(user_index, index.search, query, k, allowed, ef_search)
        population = index.live_count if allowed is None else len(allowed)
        return user_index, hits, len(hits) >= population

    async def search_many(
        self, tenant: str, user_id: str, queries: Vector, k: int
    ) -> list[list[Candidate]]:
        """`search` without a filter for every row of `queries` at once."""
        user_index = await self._loaded(tenant, user_id)
        if user_index is None:
            return [[] for _ in queries]
        index = user_index.index
        hits = await _read_in_thread(user_index, index.search_many, queries, k)
        return [
            [
                Candidate(
                    key,
                    similarity,
                    user_index.importance.get(key, 0.0),
                    user_index.occur_time.get(key, 0.0),
                )
                for key, similarity in row
                if index.contains(key)
            ]
            for row in hits
        ]

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
        shown = slot.current or slot.interim
        if shown is None:
            if slot.building:
                return IndexStats(user_id, IndexState.BUILDING)
            return IndexStats(user_id, IndexState.ABSENT)
        index = shown.index
        return IndexStats(
            user_id=user_id,
            state=IndexState.BUILDING if slot.building else IndexState.READY,
            index_type=index.description,
            dimension=index.dimension,
            vector_count=index.live_count,
            tombstone_count=index.tombstone_count,
            last_rebuild_time=slot.last_rebuild_time,
            embedding_model=shown.embedding_model,
        )

    def index_of(self, tenant: str, user_id: str) -> VectorIndex | None:
        """The user's loaded index itself (benchmarks, diagnostics), or None."""
        slot = self._slots.get((tenant, user_id))
        return None if slot is None or slot.current is None else slot.current.index

    def loading_state(self) -> LoadingState:
        # Called from the metrics thread too: list() copies the values in one
        # step under the GIL, so the loop inserting a slot cannot break it.
        slots = list(self._slots.values())
        loading = sum(1 for slot in slots if slot.building and not slot.loaded)
        loaded = sum(1 for slot in slots if slot.loaded)
        return LoadingState(loading, loaded, self._startup_done)

    async def load_stats(self, tenant: str, user_id: str) -> IndexStats:
        """Stats once the index is loaded; BUILDING if it is still loading
        after the bounded wait."""
        with contextlib.suppress(IndexLoadingError):
            await self._loaded(tenant, user_id, interim_ok=False)
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
        await self._build(tenant, user_id, slot, from_snapshot=False)
        return await self.load_stats(tenant, user_id)

    async def rebuild_all(self) -> int:
        """Loads the index of every user with vectors (server startup): from
        its snapshot plus the changes since, or from the store. Logs
        progress; returns how many were loaded."""
        owners = await self._store.index_owners()
        started = time.monotonic()
        log.info(
            "loading vector indexes; recall on a user not loaded yet answers from an exact"
            " scan or waits for its index",
            extra={"indexes": len(owners), "snapshots": self._snapshots is not None},
        )
        last_report = started
        for done, (tenant, user_id) in enumerate(owners, start=1):
            slot = self._slots.setdefault((tenant, user_id), _Slot())
            await self._load_first(tenant, user_id, slot)
            now = time.monotonic()
            if done == len(owners) or now - last_report >= _PROGRESS_SECONDS:
                last_report = now
                log.info(
                    "vector index load progress",
                    extra={
                        "loaded": done,
                        "indexes": len(owners),
                        "elapsed_s": round(now - started, 2),
                    },
                )
        self._startup_done = True
        log.info("vector indexes loaded", extra={"indexes": len(owners)})
        return len(owners)

    async def maintain(self) -> int:
        """Rebuilds the indexes that want it (too many tombstones, or their
        size calls for another type); returns how many were rebuilt."""
        rebuilt = 0
        for (tenant, user_id), slot in list(self._slots.items()):
            current = slot.current
            if current is None or slot.building or not self._factory.wants_rebuild(current.index):
                continue
            await self._build(tenant, user_id, slot, from_snapshot=False)
            rebuilt += 1
        return rebuilt

    async def save_snapshots(self) -> int:
        """Saves every index changed since its last snapshot that is big
        enough to be worth it (`snapshot_min_vectors`); returns how many
        were saved. Periodic, and at shutdown."""
        if self._snapshots is None:
            return 0
        saved = 0
        for (tenant, user_id), slot in list(self._slots.items()):
            current = slot.current
            if current is None or slot.building or current.version == current.saved_version:
                continue
            if current.index.live_count < self._config.snapshot_min_vectors:
                continue
            try:
                await self._save(tenant, user_id, current, self._snapshots)
            except OSError as exc:  # a full disk must not stop the server
                log.error(
                    "could not save a vector index snapshot",
                    extra={"tenant": tenant, "user_id": user_id, "error": str(exc)},
                )
                continue
            saved += 1
        return saved

    async def _save(
        self, tenant: str, user_id: str, current: _UserIndex, snapshots: SnapshotStore
    ) -> None:
        version = current.version
        index = current.index
        started = time.monotonic()

        def write() -> int:
            keys = index.live_keys()
            return snapshots.save(
                Snapshot(
                    tenant=tenant,
                    user_id=user_id,
                    payload=index.serialize(),
                    description=index.description,
                    dimension=index.dimension,
                    vector_count=index.live_count,
                    max_key=int(keys.max()) if len(keys) else 0,
                    embedding_model=current.embedding_model,
                    saved_at=self._clock(),
                    search_breadth=index.search_breadth,
                )
            )

        # No change may touch FAISS while it is written (see _read_in_thread).
        written = await _read_in_thread(current, write)
        current.saved_version = version
        log.info(
            "saved vector index snapshot",
            extra={
                "tenant": tenant,
                "user_id": user_id,
                "vectors": index.live_count,
                "bytes": written,
                "seconds": round(time.monotonic() - started, 2),
            },
        )

    async def _loaded(
        self, tenant: str, user_id: str, interim_ok: bool = True
    ) -> _UserIndex | None:
        """The user's index, loading it first if needed. While it loads: the
        interim exact scan as soon as there is one (if `interim_ok`), waiting
        at most `load_wait_seconds` (IndexLoadingError after that)."""
        slot = self._slots.get((tenant, user_id))
        if slot is not None and slot.current is not None and slot.loader is None:
            return slot.current  # loaded: every search of a recall comes here
        if slot is None:
            slot = self._slots.setdefault((tenant, user_id), _Slot())
        deadline = time.monotonic() + self._config.load_wait_seconds
        while True:
            available = slot.current or (slot.interim if interim_ok else None)
            if slot.loaded and slot.loader is not None:
                # Loaded; let the loader release the user's lock first (it is
                # past its last await but for that).
                await asyncio.shield(slot.loader)
            if available is not None or (slot.loaded and not slot.building):
                return available
            if slot.loader is None and not slot.building:
                if slot.failure is not None:
                    failure, slot.failure = slot.failure, None
                    raise failure  # e.g. the store is unavailable; the next call retries
                slot.loader = asyncio.create_task(
                    self._load_on_demand(tenant, user_id, slot), name="vector-index-load"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise IndexLoadingError(
                    f"the vector index of {user_id!r} is still loading; retry shortly",
                    user_id=user_id,
                )
            slot.progress.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(slot.progress.wait(), min(remaining, _POLL_SECONDS))

    async def _load_on_demand(self, tenant: str, user_id: str, slot: _Slot) -> None:
        """A first load started by a call; its failure is handed to the
        waiting callers (see _loaded)."""
        try:
            await self._load_first(tenant, user_id, slot)
        except Exception as exc:
            slot.failure = exc
        finally:
            slot.loader = None
            slot.progress.set()

    async def _load_first(self, tenant: str, user_id: str, slot: _Slot) -> None:
        async with slot.lock:
            if not slot.loaded:  # a concurrent first load may have won
                await self._build_locked(tenant, user_id, slot, from_snapshot=True)

    async def _build(self, tenant: str, user_id: str, slot: _Slot, from_snapshot: bool) -> None:
        async with slot.lock:  # one build per user at a time
            await self._build_locked(tenant, user_id, slot, from_snapshot)

    async def _build_locked(
        self, tenant: str, user_id: str, slot: _Slot, from_snapshot: bool
    ) -> None:
        slot.building = True
        slot.pending = []
        started = time.monotonic()
        source = "store"
        try:
            fresh = None
            if from_snapshot and self._snapshots is not None:
                fresh = await self._from_snapshot(tenant, user_id, self._snapshots)
                source = "snapshot"
            if fresh is None:
                source = "store"
                fresh = await self._from_store(tenant, user_id, slot)
            for change in slot.pending:
                if fresh is None:
                    fresh = self._index_from_changes([change])
                else:
                    fresh.apply(change)
            slot.current = fresh
            slot.last_rebuild_time = self._clock()
            if source == "snapshot" and fresh is not None:
                # The file matches unless a tail was applied (then version > 0).
                fresh.saved_version = 0
        finally:
            slot.building = False
            slot.pending = []
            slot.interim = None
            slot.progress.set()
        elapsed = time.monotonic() - started
        if fresh is not None and elapsed >= _SLOW_LOAD_SECONDS:
            log.info(
                "vector index loaded",
                extra={
                    "tenant": tenant,
                    "user_id": user_id,
                    "source": source,
                    "vectors": fresh.index.live_count,
                    "index_type": fresh.index.description,
                    "seconds": round(elapsed, 2),
                },
            )

    async def _from_store(self, tenant: str, user_id: str, slot: _Slot) -> _UserIndex | None:
        batch = await self._store.load_vectors(tenant, user_id)
        if batch is None:
            return None
        if slot.current is None:  # a first load: searches use an exact scan meanwhile
            slot.interim = _UserIndex(ExactScan(batch), *_ranking(batch.keys, batch))
            slot.interim.embedding_model = batch.embedding_model
            slot.progress.set()
        return await asyncio.to_thread(self._index_from, batch, f"{tenant}/{user_id}")

    async def _from_snapshot(
        self, tenant: str, user_id: str, snapshots: SnapshotStore
    ) -> _UserIndex | None:
        """The snapshot brought up to date with the store, or None (no
        snapshot, unusable, or too far behind: the caller rebuilds).

        Catching up diffs the snapshot's keys against the store's current
        key manifest (keys, importance, occur_time; no vectors): keys the
        store no longer has are removed, keys it gained are read with their
        vectors and added, ranking data comes from the manifest. That is
        exact whatever happened meanwhile (deletes, consolidation, imports,
        changes made by other replicas) and reads vectors only for the
        tail."""
        try:
            snapshot = await asyncio.to_thread(snapshots.load, tenant, user_id)
            if snapshot is None:
                return None
            index = await asyncio.to_thread(
                self._factory.restore, snapshot.payload, snapshot.search_breadth
            )
        except SnapshotError as exc:
            log.warning(
                "vector index snapshot unusable; rebuilding from the store",
                extra={"tenant": tenant, "user_id": user_id, "error": str(exc)},
            )
            await asyncio.to_thread(snapshots.discard, tenant, user_id)
            return None
        del snapshot  # the payload can be large; the index holds its own copy
        manifest = await self._store.vector_manifest(tenant, user_id)
        if manifest is None or manifest.dimension != index.dimension:
            return None
        present = index.live_keys()
        added = np.setdiff1d(manifest.keys, present, assume_unique=True)
        removed = np.setdiff1d(present, manifest.keys, assume_unique=True)
        if len(added) > self._config.snapshot_max_tail_fraction * len(manifest.keys):
            log.info(
                "vector index snapshot too far behind the store; rebuilding",
                extra={"tenant": tenant, "user_id": user_id, "missing": len(added)},
            )
            return None
        await self._add_tail(tenant, user_id, index, added)
        index.remove(removed.tolist())
        user_index = _UserIndex(index, *_ranking(manifest.keys, manifest))
        user_index.embedding_model = manifest.embedding_model
        user_index.version = 1 if len(added) or len(removed) else 0  # due for a new snapshot?
        log.info(
            "vector index loaded from snapshot",
            extra={
                "tenant": tenant,
                "user_id": user_id,
                "vectors": index.live_count,
                "tail_added": len(added),
                "tail_removed": len(removed),
            },
        )
        return user_index

    async def _add_tail(
        self, tenant: str, user_id: str, index: VectorIndex, keys: npt.NDArray[np.int64]
    ) -> None:
        for start in range(0, len(keys), _TAIL_CHUNK):
            chunk = [int(k) for k in keys[start : start + _TAIL_CHUNK]]
            episodes = await self._store.get_episodes_by_keys(tenant, user_id, chunk, True)
            rows = [e for e in episodes if e.embedding is not None]
            if rows:
                await asyncio.to_thread(
                    index.add,
                    np.fromiter((e.vector_key for e in rows), np.int64, len(rows)),
                    np.vstack([e.embedding for e in rows if e.embedding is not None]),
                )

    def _index_from(self, batch: VectorBatch, name: str) -> _UserIndex:
        """Builds in chunks so that a long build logs its progress."""
        index = self._factory.create(batch.dimension, len(batch))
        started = last_report = time.monotonic()
        for start in range(0, len(batch), _BUILD_CHUNK):
            end = start + _BUILD_CHUNK
            index.add(batch.keys[start:end], batch.vectors[start:end])
            now = time.monotonic()
            if now - last_report >= _PROGRESS_SECONDS and end < len(batch):
                last_report = now
                log.info(
                    "building vector index",
                    extra={
                        "index": name,
                        "added": end,
                        "vectors": len(batch),
                        "elapsed_s": round(now - started, 1),
                    },
                )
        rows = np.random.default_rng(0).choice(len(batch), min(TUNING_SAMPLE, len(batch)), False)
        index.tune(batch.vectors[np.sort(rows)])
        user_index = _UserIndex(index, *_ranking(batch.keys, batch))
        user_index.embedding_model = batch.embedding_model
        return user_index

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


class _Ranked(Protocol):
    @property
    def importance(self) -> npt.NDArray[np.float32]: ...

    @property
    def occur_time(self) -> npt.NDArray[np.float64]: ...


def _ranking(
    keys: npt.NDArray[np.int64], source: _Ranked
) -> tuple[dict[int, float], dict[int, float]]:
    as_ints = keys.tolist()
    return (
        dict(zip(as_ints, source.importance.tolist(), strict=True)),
        dict(zip(as_ints, source.occur_time.tolist(), strict=True)),
    )
