"""Batched exact search (a batch record's duplicate check) on real FAISS
indexes: each row's answer is the one-query search's, also across blocks of
queries, after removals, and for k above the number of vectors."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from statekeeper.core.memory.faiss_index import ExactScan, FlatIndex
from statekeeper.core.memory.models import VectorBatch

DIMENSION = 8


def unit_rows(count: int, seed: int) -> npt.NDArray[np.float32]:
    rows = np.random.default_rng(seed).standard_normal((count, DIMENSION)).astype(np.float32)
    normed: npt.NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return normed


def same_answers(many: list[list[tuple[int, float]]], one: list[list[tuple[int, float]]]) -> None:
    assert [[key for key, _ in row] for row in many] == [[key for key, _ in row] for row in one]
    for row_many, row_one in zip(many, one, strict=True):
        for (_, got), (_, want) in zip(row_many, row_one, strict=True):
            assert got == pytest.approx(want, abs=1e-5)


@pytest.mark.parametrize("k", [1, 3])
def test_flat_search_many_answers_each_query_as_search(k: int) -> None:
    # 40,000 vectors: the 300 queries are scored in blocks of 100.
    vectors = unit_rows(40_000, seed=1)
    keys = np.arange(5, 40_005, dtype=np.int64) * 7
    index = FlatIndex(DIMENSION)
    index.add(keys, vectors)
    index.remove([int(keys[0]), int(keys[17]), int(keys[-1])])
    queries = unit_rows(300, seed=2)
    queries[:3] = vectors[[0, 17, 18]]  # two removed, one stored: found first
    many = index.search_many(queries, k)
    same_answers(many, [index.search(query, k, None) for query in queries])
    assert many[2][0][0] == int(keys[18])
    removed = {int(keys[0]), int(keys[17]), int(keys[-1])}
    assert not removed & {key for row in many for key, _ in row}


def test_search_many_on_few_or_no_vectors() -> None:
    index = FlatIndex(DIMENSION)
    queries = unit_rows(4, seed=3)
    assert index.search_many(queries, 1) == [[], [], [], []]
    index.add(np.array([11, 12], dtype=np.int64), unit_rows(2, seed=4))
    many = index.search_many(queries, 5)  # k above the vector count: both, best first
    assert all(len(row) == 2 and row[0][1] >= row[1][1] for row in many)
    same_answers(many, [index.search(query, 5, None) for query in queries])


def test_loading_exact_scan_answers_as_the_index_will() -> None:
    vectors = unit_rows(500, seed=5)
    keys = np.arange(1, 501, dtype=np.int64)
    batch = VectorBatch(
        keys=keys,
        vectors=vectors,
        importance=np.zeros(500, dtype=np.float32),
        occur_time=np.zeros(500, dtype=np.float64),
    )
    scan = ExactScan(batch)
    index = FlatIndex(DIMENSION)
    index.add(keys, vectors)
    queries = unit_rows(50, seed=6)
    same_answers(scan.search_many(queries, 4), index.search_many(queries, 4))
    same_answers(scan.search_many(queries, 4), [scan.search(q, 4, None) for q in queries])
