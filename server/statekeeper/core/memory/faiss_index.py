"""FAISS indexes of one user's vectors (flat and HNSW, with the HNSW search breadth tuned
by measurement) and the exact scan used while an index loads or when a filter admits few
vectors. VectorIndexes (core/memory/vector_index.py) keeps one per user."""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, overload

import numpy as np
import numpy.typing as npt
import threadpoolctl  # type: ignore[import-untyped]

from statekeeper.core.memory.config import IndexConfig
from statekeeper.core.memory.models import Vector, VectorBatch

log = logging.getLogger(__name__)

# One query is searched on one OpenMP thread: splitting it costs more than it
# gains, and on a busy 2-core box spinning OpenMP teams made single searches
# 3-10x slower (bench/memory.py). Bulk adds (HNSW graph building) use all
# cores. OpenMP's thread count is per calling thread, so each call sets it.
_PARALLEL_ADD_MIN = 1000


# efSearch of an HNSW index before it is tuned (and the old fixed value).
_UNTUNED_EF = 256


# Vectors of a fresh HNSW index used to tune its search breadth.
TUNING_SAMPLE = 100


_ALL_CORES = os.cpu_count() or 1
# OpenMP's thread count is per calling thread; what this module last set in
# each thread, so a search skips the call when it is already 1 (every FAISS
# call releases and retakes the GIL, which costs most on a busy server).
_omp_setting = threading.local()


def _omp_threads(faiss: Any, count: int) -> None:
    """faiss.omp_set_num_threads(count) for the calling thread, unless this
    module already set that count in it."""
    if getattr(_omp_setting, "count", None) != count:
        faiss.omp_set_num_threads(count)
        _omp_setting.count = count


# Scores of a batched exact search held at once (queries x stored vectors):
# the queries are split into blocks of about this many floats (16 MB).
_SCORE_BLOCK_FLOATS = 4_000_000

_BLAS = threadpoolctl.ThreadpoolController()


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

    def live_keys(self) -> npt.NDArray[np.int64]:
        """Every live key, in no particular order."""
        ...

    def add(self, keys: npt.NDArray[np.int64], vectors: Vector) -> None:
        """Adds vectors whose keys are not in the index (callers filter)."""
        ...

    def remove(self, keys: Sequence[int]) -> None:
        """Removes these keys; unknown keys are ignored."""
        ...

    def search(
        self,
        query: Vector,
        k: int,
        allowed: npt.NDArray[np.int64] | None,
        ef_search: int = 0,
    ) -> list[tuple[int, float]]:
        """Up to k (key, similarity) pairs, best first, among `allowed` keys
        if given. Returns min(k, matching live vectors) pairs: an
        approximate search that finds fewer falls back to an exact one.
        `ef_search` > 0 overrides the index's search breadth (HNSW)."""
        ...

    def search_many(self, queries: Vector, k: int) -> list[list[tuple[int, float]]]:
        """`search` (unfiltered) for each row of `queries`, in one call where
        the index can batch them (a batch record's duplicate check)."""
        ...

    def serialize(self) -> npt.NDArray[np.uint8]:
        """The index as bytes (a snapshot payload; see IndexFactory.restore)."""
        ...

    @property
    def search_breadth(self) -> int:
        """How wide a search looks (HNSW efSearch); 0 for an exact scan."""
        ...

    def tune(self, sample: Vector) -> None:
        """Called once after a build with some of the index's own vectors:
        an approximate index measures how wide it must search."""
        ...


class IndexFactory(Protocol):
    def create(self, dimension: int, expected_size: int) -> VectorIndex: ...

    def restore(self, payload: npt.NDArray[np.uint8], search_breadth: int) -> VectorIndex:
        """An index from `VectorIndex.serialize` bytes; raises SnapshotError
        if they do not hold one."""
        ...

    def wants_rebuild(self, index: VectorIndex) -> bool:
        """True if the index should be rebuilt (type outgrown, tombstones)."""
        ...


class SnapshotError(Exception):
    """A snapshot cannot be used (corrupt, truncated, foreign): the index is
    rebuilt from the store instead."""


def _faiss() -> Any:
    """FAISS, imported on first use so that the domain imports without it."""
    import faiss

    return faiss


class _FaissIndex:
    """Common part: an IndexIDMap over a FAISS index, with the key set."""

    def __init__(self, wrapped: Any, dimension: int, description: str) -> None:
        self._faiss = _faiss()
        self._index = wrapped
        self._dimension = dimension
        self._description = description
        self._live: set[int] = set(self._stored_ids().tolist())
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

    def live_keys(self) -> npt.NDArray[np.int64]:
        return np.fromiter(self._live, np.int64, len(self._live))

    def add(self, keys: npt.NDArray[np.int64], vectors: Vector) -> None:
        if len(keys) == 0:
            return
        if self._tombstones:
            # A key removed and added again (an archived episode restored):
            # its vector is still in the graph, and a key's vector never
            # changes (keys are never reused), so it only comes back to life.
            back = np.isin(keys, np.fromiter(self._tombstones, np.int64, len(self._tombstones)))
            if back.any():
                revived = [int(k) for k in keys[back]]
                self._tombstones.difference_update(revived)
                self._live.update(revived)
                keys, vectors = keys[~back], vectors[~back]
                if len(keys) == 0:
                    return
        _omp_threads(self._faiss, _ALL_CORES if len(keys) >= _PARALLEL_ADD_MIN else 1)
        self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), keys)
        self._live.update(int(k) for k in keys)

    def serialize(self) -> npt.NDArray[np.uint8]:
        payload: npt.NDArray[np.uint8] = self._faiss.serialize_index(self._index)
        return payload

    def search(
        self,
        query: Vector,
        k: int,
        allowed: npt.NDArray[np.int64] | None,
        ef_search: int = 0,
    ) -> list[tuple[int, float]]:
        k = min(k, len(self._live) if allowed is None else len(allowed))
        if k <= 0:
            return []
        _omp_threads(self._faiss, 1)
        return self._search(query.reshape(1, -1), k, allowed, ef_search)

    def search_many(self, queries: Vector, k: int) -> list[list[tuple[int, float]]]:
        return [self.search(query, k, None) for query in queries]

    def _search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None, ef_search: int
    ) -> list[tuple[int, float]]:
        selector = self._selector(allowed)
        if selector is None:  # no parameters to build (each FAISS object costs a call)
            scores, ids = self._index.search(query, k)
        else:
            params = self._params(self._faiss.SearchParameters(), selector)
            scores, ids = self._index.search(query, k, params=params)
        return _pairs(ids[0], scores[0])

    def _stored_ids(self) -> npt.NDArray[np.int64]:
        """Every id in the FAISS index, tombstoned ones included (a view)."""
        id_map = self._index.id_map
        if id_map.size() == 0:
            return np.zeros(0, dtype=np.int64)
        ids: npt.NDArray[np.int64] = self._faiss.rev_swig_ptr(id_map.data(), id_map.size())
        return ids

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

    @staticmethod
    def _params(params: Any, selector: Any) -> Any:
        if selector is not None:
            params.sel = selector
            # The selector must outlive the search; FAISS keeps a raw pointer.
            params._keepalive = selector
        return params


class FlatIndex(_FaissIndex):
    """Exact search: every live vector is compared (a filter is applied
    during the scan, so filtered searches are exact too). Removal is real."""

    def __init__(self, dimension: int, wrapped: Any = None) -> None:
        if wrapped is None:
            faiss = _faiss()
            wrapped = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
        super().__init__(wrapped, dimension, "Flat")

    @property
    def search_floats(self) -> int:
        return self.live_count * self.dimension

    @property
    def search_breadth(self) -> int:
        return 0

    def tune(self, sample: Vector) -> None:
        return None  # exact: nothing to measure

    def search_many(self, queries: Vector, k: int) -> list[list[tuple[int, float]]]:
        # One scan for every query: a matrix product of the queries with the
        # stored vectors (read in place), not FAISS's batched search, which
        # took 4-10x as long for a batch record's 1,000 queries here.
        if self._tombstones:  # never for a flat index (removal is real); kept exact
            return super().search_many(queries, k)
        flat = self._faiss.downcast_index(self._index.index)
        count = int(flat.ntotal)
        if count == 0:
            return [[] for _ in queries]
        stored = self._faiss.rev_swig_ptr(flat.get_xb(), count * self.dimension)
        return exact_search_many(
            queries, stored.reshape(count, self.dimension), self._stored_ids(), k
        )

    def remove(self, keys: Sequence[int]) -> None:
        present = [k for k in keys if k in self._live]
        if present:
            self._index.remove_ids(np.asarray(present, dtype=np.int64))
            self._live.difference_update(present)


class HnswIndex(_FaissIndex):
    """Approximate search on an HNSW graph. Removal leaves a tombstone.

    Search breadth: `hnsw_ef_search` if configured, else measured once per
    build (`tune`): the smallest efSearch whose recall@10 against an exact
    scan reaches `hnsw_target_recall` on a sample of the index's own vectors,
    or an exact scan of the graph's stored vectors (breadth 0) when no
    efSearch up to `hnsw_max_ef_search` reaches it or the exact scan is
    cheaper. Easy data (real embeddings) gets a narrow, fast search; hard
    data (isotropic random vectors) a wide or exact one, never a bad answer.

    Filtered searches: a filter admitting at most `exact_filter_max_vectors`
    is answered by an exact scan of the admitted vectors (the graph walk
    would mostly visit excluded nodes); a wider filter widens efSearch by
    live / admitted. Any search that finds fewer than k matches falls back
    to the exact scan, so a caller always gets min(k, matches)."""

    def __init__(
        self, dimension: int, config: IndexConfig, wrapped: Any = None, breadth: int = -1
    ) -> None:
        faiss = _faiss()
        if wrapped is None:
            inner = faiss.IndexHNSWFlat(dimension, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = config.hnsw_ef_construction
            wrapped = faiss.IndexIDMap(inner)
        self._graph = faiss.downcast_index(wrapped.index)
        self._m = int(self._graph.hnsw.nb_neighbors(1))
        self._config = config
        # The configured breadth wins; else the tuned one (from a snapshot),
        # else the old fixed default until `tune` runs.
        if config.hnsw_ef_search:
            self._ef = config.hnsw_ef_search
        else:
            self._ef = breadth if breadth >= 0 else _UNTUNED_EF
        super().__init__(wrapped, dimension, f"HNSW{self._m}")

    @property
    def search_floats(self) -> int:
        if self._ef == 0:
            return self.live_count * self.dimension
        # A search visits about efSearch nodes with up to 2*M neighbours each.
        return min(self.live_count, self._ef * 2 * self._m) * self.dimension

    @property
    def search_breadth(self) -> int:
        return self._ef

    def remove(self, keys: Sequence[int]) -> None:
        present = [k for k in keys if k in self._live]
        self._live.difference_update(present)
        self._tombstones.update(present)

    def tune(self, sample: Vector) -> None:
        if self._config.hnsw_ef_search:
            self._ef = self._config.hnsw_ef_search  # configured: nothing to measure
            return
        self._ef = measure_breadth(self, sample, self._config)

    def graph_search(self, queries: Vector, k: int, ef: int) -> npt.NDArray[np.int64]:
        """Keys of a plain graph search (no filter, no fallback), one row per
        query: what tuning and benchmarks compare with the exact scan."""
        params = self._faiss.SearchParametersHNSW()
        params.efSearch = max(ef, k)
        _, ids = self._index.search(np.ascontiguousarray(queries), k, params=params)
        keys: npt.NDArray[np.int64] = ids
        return keys

    @overload
    def exact_search(self, queries: Vector, k: int) -> npt.NDArray[np.int64]: ...

    @overload
    def exact_search(
        self, queries: Vector, k: int, with_scores: Literal[True]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]: ...

    def exact_search(
        self, queries: Vector, k: int, with_scores: bool = False
    ) -> npt.NDArray[np.int64] | tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Keys (and similarities) of an exact scan, one row per query (see
        graph_search). Tombstones are not excluded: for measuring only."""
        scores, positions = self._graph.storage.search(np.ascontiguousarray(queries), k)
        ids = self._stored_ids()
        keys: npt.NDArray[np.int64] = np.where(positions >= 0, ids[positions], -1)
        return (keys, scores) if with_scores else keys

    def _search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None, ef_search: int
    ) -> list[tuple[int, float]]:
        ef = ef_search or self._ef
        if ef == 0 or (
            allowed is not None and len(allowed) <= self._config.exact_filter_max_vectors
        ):
            return self._exact(query, k, allowed)
        ef = max(ef, k)
        if allowed is not None:  # only ~admitted/live of the visited nodes can be results
            widened = ef * self.live_count // max(len(allowed), 1)
            ef = max(ef, min(widened, self._config.hnsw_max_ef_search))
        params = self._faiss.SearchParametersHNSW()
        params.efSearch = ef
        selected = self._params(params, self._selector(allowed))
        scores, ids = self._index.search(query, k, params=selected)
        hits = _pairs(ids[0], scores[0])
        return hits if len(hits) >= k else self._exact(query, k, allowed)

    def _exact(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        """Brute force over the graph's stored vectors, admitted ones only:
        the selector is translated from keys to storage positions, so only
        admitted vectors are compared."""
        faiss = self._faiss
        selector = self._selector(allowed)
        params = None
        if selector is not None:
            translated = faiss.IDSelectorTranslated(self._index.id_map, selector)
            params = self._params(faiss.SearchParameters(), translated)
            params._keepalive_inner = selector
        scores, positions = self._graph.storage.search(query, k, params=params)
        ids = self._stored_ids()
        return [
            (int(ids[p]), float(s)) for p, s in zip(positions[0], scores[0], strict=True) if p >= 0
        ]


def measure_breadth(index: HnswIndex, sample: Vector, config: IndexConfig) -> int:
    """The efSearch `index` needs (see HnswIndex): recall@10 of graph
    searches against an exact scan for efSearch 32, 64, ... up to the
    maximum; 0 (exact scan) if none reaches the target, or if the exact scan
    is faster and preferred. Per-query times are measured on one thread, as
    searches run.

    The queries are new points near the data, not the sample itself (a
    stored vector is found too easily: the graph links it to its
    neighbours): each is moved away from its sample vector until it is as
    far from it as that vector's nearest neighbour."""
    faiss = _faiss()
    _omp_threads(faiss, _ALL_CORES)
    queries = _near_points(index, sample)
    truth = index.exact_search(queries, 10)
    _omp_threads(faiss, 1)
    exact_seconds = _seconds_per_query(lambda q: index.exact_search(q, 10), queries[:16])
    ef = 32
    recall = graph_seconds = 0.0
    while ef <= config.hnsw_max_ef_search:
        recall = _recall(index.graph_search(queries, 10, ef), truth)
        if recall >= config.hnsw_target_recall:
            # Timed one query per call, as searches run (and as the exact
            # scan was): a batch amortises what a single search pays.
            graph_seconds = _seconds_per_query(
                functools.partial(index.graph_search, k=10, ef=ef), queries[:16]
            )
            cheaper = graph_seconds < exact_seconds or not config.hnsw_prefer_exact_scan
            chosen = ef if cheaper else 0
            _log_breadth(index, chosen, recall, graph_seconds, exact_seconds)
            return chosen
        ef *= 2
    _log_breadth(index, 0, recall, graph_seconds, exact_seconds)
    return 0


def _near_points(index: HnswIndex, sample: Vector) -> Vector:
    """For each sample vector v with nearest-neighbour similarity s, a unit
    vector q with q.v = s, in a random direction."""
    _, similarities = index.exact_search(sample, 2, with_scores=True)
    nearest = np.clip(similarities[:, 1:2], -1.0, 1.0).astype(np.float32)
    noise = np.random.default_rng(0).standard_normal(sample.shape).astype(np.float32)
    noise -= np.sum(noise * sample, axis=1, keepdims=True) * sample  # orthogonal to v
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    points: Vector = nearest * sample + np.sqrt(1.0 - nearest**2) * noise
    return np.ascontiguousarray(points, dtype=np.float32)


def _seconds_per_query(search: Callable[[Vector], object], queries: Vector) -> float:
    """Median seconds of one search per call: robust to the scheduler
    pausing the process on a busy box."""
    samples = []
    for row in range(len(queries)):
        started = time.perf_counter()
        search(queries[row : row + 1])
        samples.append(time.perf_counter() - started)
    return float(np.median(samples)) if samples else 0.0


def _recall(found: npt.NDArray[np.int64], truth: npt.NDArray[np.int64]) -> float:
    """Share of each exact top 10 that `found` has."""
    hits = sum(
        len({int(k) for k in t if k >= 0} & {int(k) for k in f if k >= 0})
        for f, t in zip(found, truth, strict=True)
    )
    return hits / (10 * len(truth))


def _log_breadth(
    index: HnswIndex, ef: int, recall: float, graph_seconds: float, exact_seconds: float
) -> None:
    log.info(
        "tuned HNSW search breadth",
        extra={
            "vectors": index.live_count,
            "ef_search": ef or "exact scan",
            "recall_at_10": round(recall, 3),
            "graph_ms": round(graph_seconds * 1e3, 2),
            "exact_ms": round(exact_seconds * 1e3, 2),
        },
    )


class FaissIndexFactory:
    def __init__(self, config: IndexConfig) -> None:
        if config.kind not in ("auto", "flat", "hnsw"):
            raise ValueError(f"index kind must be auto, flat or hnsw, not {config.kind!r}")
        self._config = config

    def create(self, dimension: int, expected_size: int) -> VectorIndex:
        if self._use_hnsw(expected_size):
            return HnswIndex(dimension, self._config)
        return FlatIndex(dimension)

    def restore(self, payload: npt.NDArray[np.uint8], search_breadth: int) -> VectorIndex:
        faiss = _faiss()
        try:
            # deserialize_index returns the owning proxy of the right type;
            # a downcast of it would not own it (and FAISS would free it).
            wrapped = faiss.deserialize_index(np.ascontiguousarray(payload))
            inner = faiss.downcast_index(wrapped.index)
        except (RuntimeError, AttributeError) as exc:
            raise SnapshotError(f"not a FAISS index: {exc}") from exc
        if isinstance(wrapped, faiss.IndexIDMap2) and isinstance(inner, faiss.IndexFlatIP):
            return FlatIndex(inner.d, wrapped)
        hnsw = isinstance(wrapped, faiss.IndexIDMap) and isinstance(inner, faiss.IndexHNSWFlat)
        if hnsw and inner.metric_type == faiss.METRIC_INNER_PRODUCT:
            return HnswIndex(inner.d, self._config, wrapped, search_breadth)
        raise SnapshotError(f"unexpected FAISS index type {type(inner).__name__}")

    def wants_rebuild(self, index: VectorIndex) -> bool:
        total = index.live_count + index.tombstone_count
        if total and index.tombstone_count / total > self._config.tombstone_rebuild_ratio:
            return True
        return index.description != self._description_for(index.live_count)

    def _description_for(self, size: int) -> str:
        return f"HNSW{self._config.hnsw_m}" if self._use_hnsw(size) else "Flat"

    def _use_hnsw(self, size: int) -> bool:
        kind = self._config.kind
        return kind == "hnsw" or (kind == "auto" and size >= self._config.hnsw_min_vectors)


def exact_search_many(
    queries: Vector, stored: Vector, keys: npt.NDArray[np.int64], k: int
) -> list[list[tuple[int, float]]]:
    """Up to k (key, inner product) pairs of `stored` for each row of
    `queries`, best first: one matrix
    product per block of queries, on one BLAS thread (on a busy 2-core box
    BLAS threads wait for each other longer than the product takes)."""
    k = min(k, len(stored))
    if k <= 0:
        return [[] for _ in queries]
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    block = max(1, _SCORE_BLOCK_FLOATS // len(stored))
    found: list[list[tuple[int, float]]] = []
    with _BLAS.limit(limits=1, user_api="blas"):
        for start in range(0, len(queries), block):
            scores = queries[start : start + block] @ stored.T
            best = _best_columns(scores, k)
            best_scores = np.take_along_axis(scores, best, axis=1)
            found.extend(
                list(zip(keys[row].tolist(), row_scores.tolist(), strict=True))
                for row, row_scores in zip(best, best_scores, strict=True)
            )
    return found


def _best_columns(scores: Vector, k: int) -> npt.NDArray[np.intp]:
    """Column positions of each row's k highest scores, highest first."""
    if k == 1:
        best: npt.NDArray[np.intp] = np.argmax(scores, axis=1).reshape(-1, 1)
        return best
    if k < scores.shape[1]:
        candidates = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        candidates.sort(axis=1)  # equal scores: the earlier stored row first
    else:
        candidates = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    order = np.argsort(-np.take_along_axis(scores, candidates, axis=1), axis=1, kind="stable")
    ranked: npt.NDArray[np.intp] = np.take_along_axis(candidates, order, axis=1)
    return ranked


def _pairs(ids: npt.NDArray[np.int64], scores: npt.NDArray[np.float32]) -> list[tuple[int, float]]:
    # tolist() converts in C (the same Python ints and floats as int() and
    # float() of each numpy scalar, without building the scalars).
    return [(i, s) for i, s in zip(ids.tolist(), scores.tolist(), strict=True) if i >= 0]


class ExactScan:
    """A read-only exact index over a batch just read from the store: what
    answers searches while the user's real index is being built."""

    def __init__(self, batch: VectorBatch) -> None:
        self._keys = batch.keys
        self._vectors = np.ascontiguousarray(batch.vectors, dtype=np.float32)
        self._members = set(batch.keys.tolist())

    @property
    def description(self) -> str:
        return "Flat"

    @property
    def dimension(self) -> int:
        return int(self._vectors.shape[1])

    @property
    def live_count(self) -> int:
        return len(self._keys)

    @property
    def tombstone_count(self) -> int:
        return 0

    @property
    def search_floats(self) -> int:
        return int(self._vectors.size)

    def contains(self, key: int) -> bool:
        return key in self._members

    def live_keys(self) -> npt.NDArray[np.int64]:
        return self._keys

    def add(self, keys: npt.NDArray[np.int64], vectors: Vector) -> None:
        raise TypeError("an exact scan over a loading batch is read-only")

    def remove(self, keys: Sequence[int]) -> None:
        raise TypeError("an exact scan over a loading batch is read-only")

    def search_many(self, queries: Vector, k: int) -> list[list[tuple[int, float]]]:
        return exact_search_many(queries, self._vectors, self._keys, k)

    def serialize(self) -> npt.NDArray[np.uint8]:
        raise TypeError("an exact scan over a loading batch is not saved")

    @property
    def search_breadth(self) -> int:
        return 0

    def tune(self, sample: Vector) -> None:
        return None

    def search(
        self,
        query: Vector,
        k: int,
        allowed: npt.NDArray[np.int64] | None,
        ef_search: int = 0,
    ) -> list[tuple[int, float]]:
        rows = np.arange(len(self._keys))
        if allowed is not None:
            rows = rows[np.isin(self._keys, allowed)]
        k = min(k, len(rows))
        if k <= 0:
            return []
        faiss = _faiss()
        _omp_threads(faiss, 1)
        # FAISS's own kernel, so similarities are bit-identical to what the
        # real index will return for the same vectors.
        base = self._vectors if allowed is None else self._vectors[rows]
        scores, best = faiss.knn(
            np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32),
            base,
            k,
            metric=faiss.METRIC_INNER_PRODUCT,
        )
        return [
            (int(self._keys[rows[i]]), float(score))
            for i, score in zip(best[0], scores[0], strict=True)
            if i >= 0
        ]
