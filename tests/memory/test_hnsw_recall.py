"""HNSW against exact search on 100,000 x 384: recall@10 >= 0.95 with the
default parameters (M=24, efConstruction=32, efSearch=256). Building the
graph costs about 24 CPU-seconds (about 15 s wall on 2 idle cores); it is the
slowest memory test, hence the `slow` mark."""

from __future__ import annotations

import time

import numpy as np
import pytest

from statekeeper.core.memory_config import IndexConfig
from statekeeper.core.vector_index import FaissIndexFactory, FlatIndex
from tests.memory.data import embedding_like

COUNT = 100_000
DIMENSION = 384
QUERIES = 200


@pytest.mark.slow
def test_hnsw_recall_at_10_against_exact() -> None:
    vectors = embedding_like(COUNT, DIMENSION, seed=11)
    keys = np.arange(1, COUNT + 1, dtype=np.int64)
    rng = np.random.default_rng(12)
    queries = vectors[rng.choice(COUNT, QUERIES, replace=False)]
    queries = queries + 0.05 * rng.standard_normal(queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    exact = FlatIndex(DIMENSION)
    exact.add(keys, vectors)
    hnsw = FaissIndexFactory(IndexConfig(kind="auto")).create(DIMENSION, COUNT)
    assert hnsw.description == "HNSW24"  # auto picks HNSW at this size
    started = time.monotonic()
    hnsw.add(keys, vectors)
    build_seconds = time.monotonic() - started

    hits = 0
    for query in queries:
        truth = {key for key, _ in exact.search(query, 10, None)}
        hits += len(truth & {key for key, _ in hnsw.search(query, 10, None)})
    recall = hits / (10 * QUERIES)
    print(f"HNSW24 recall@10={recall:.3f} build={build_seconds:.1f}s on {COUNT}x{DIMENSION}")
    assert recall >= 0.95

    # Deleting is a tombstone: never returned, counted until a rebuild.
    doomed = [key for key, _ in hnsw.search(queries[0], 5, None)]
    hnsw.remove(doomed)
    assert hnsw.tombstone_count == 5 and hnsw.live_count == COUNT - 5
    assert not set(doomed) & {key for key, _ in hnsw.search(queries[0], 10, None)}
