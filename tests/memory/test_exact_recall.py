"""Exact recall at scale: 20,000 vectors of dimension 384 across 50 users
(plus a second tenant with the same user ids). Every tested query's top 10
through gRPC equals numpy brute force over that user's vectors, and no
result ever crosses a user or tenant boundary."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from statekeeper.core.tenancy import Authenticator
from statekeeper_client.v1 import memory_pb2 as pb
from tests.memory.data import episodes_for, gaussian, unit_rows
from tests.memory.helpers import API_KEYS, auth, memory_app, served_memory

USERS = 50
PER_USER = 400  # 50 x 400 = 20,000
DIMENSION = 384
QUERIES_PER_USER = 4
ALPHA = "alpha"
BETA = "beta"
ONLY_SIMILARITY = pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0)


async def test_top10_equals_brute_force_and_never_crosses_boundaries(tmp_path: Path) -> None:
    assert Authenticator(API_KEYS).authenticate("key-alpha").tenant == ALPHA
    vectors = {f"u{n:02d}": gaussian(PER_USER, DIMENSION, seed=n) for n in range(USERS)}
    started = time.time() - 86_400
    # Bulk import through the store, then a fresh start rebuilds every index
    # from it (the startup path); beta gets decoys under the same user ids.
    async with memory_app(tmp_path) as (app, _):
        for user_id, matrix in vectors.items():
            await app.store.insert_episodes(
                ALPHA, episodes_for(user_id, matrix[:-20], started, "a")
            )
        for n in range(10):
            decoys = gaussian(50, DIMENSION, seed=1000 + n)
            await app.store.insert_episodes(BETA, episodes_for(f"u{n:02d}", decoys, started, "b"))
    async with served_memory(tmp_path) as served:
        ids: dict[str, list[str]] = {
            u: [f"a-{u}-{r}" for r in range(PER_USER - 20)] for u in vectors
        }
        # The last 20 of each user arrive through RecordEpisode: the incremental path.
        for user_id, matrix in vectors.items():
            for row in range(PER_USER - 20, PER_USER):
                reply = await served.memory.RecordEpisode(
                    pb.RecordEpisodeRequest(
                        user_id=user_id,
                        user_message=f"live {user_id} {row}",
                        embedding=matrix[row].tolist(),
                        near_duplicate_threshold=1.0,
                    ),
                    metadata=auth(),
                )
                ids[user_id].append(reply.episode.id)
        rng = np.random.default_rng(7)
        checked = 0
        for user_id, matrix in vectors.items():
            queries = unit_rows(
                rng.standard_normal((QUERIES_PER_USER, DIMENSION)).astype(np.float32)
            )
            expected_rows = np.argsort(-(matrix @ queries.T), axis=0, kind="stable")[:10].T
            for query, rows in zip(queries, expected_rows, strict=True):
                reply = await served.memory.Recall(
                    pb.RecallRequest(
                        user_id=user_id,
                        query_vector=pb.QueryVector(values=query.tolist()),
                        top_k=10,
                        weights=ONLY_SIMILARITY,
                    ),
                    metadata=auth(),
                )
                got = [r.episode.id for r in reply.results]
                assert got == [ids[user_id][r] for r in rows]
                assert all(r.episode.user_id == user_id for r in reply.results)
                similarity = matrix[rows] @ query
                assert [r.score.similarity for r in reply.results] == pytest.approx(
                    np.clip(similarity, 0, 1).tolist(), abs=1e-5
                )
                checked += 1
        assert checked == USERS * QUERIES_PER_USER
        # Beta's u00 holds only beta's decoys, never alpha's episodes.
        beta = await served.memory.Recall(
            pb.RecallRequest(
                user_id="u00",
                query_vector=pb.QueryVector(values=vectors["u00"][0].tolist()),
                top_k=50,
            ),
            metadata=auth("key-beta"),
        )
        assert len(beta.results) == 50
        assert all(r.episode.id.startswith("b-u00-") for r in beta.results)


async def test_default_weighting_is_exact_too(tmp_path: Path) -> None:
    """With recency and importance in the score, top 10 still equals brute
    force of the documented formula (the search widens until proven)."""
    matrix = gaussian(2000, 64, seed=3)
    now = time.time()
    ages = np.random.default_rng(4).uniform(0, 90 * 86_400, len(matrix))
    importance = np.random.default_rng(5).uniform(0, 1, len(matrix)).astype(np.float32)
    async with memory_app(tmp_path) as (app, _):
        stored = [
            episode.evolve(occur_time=now - age, importance=float(weight))
            for episode, age, weight in zip(
                episodes_for("u1", matrix, 0.0, "w"), ages, importance, strict=True
            )
        ]
        await app.store.insert_episodes(ALPHA, stored)
    async with served_memory(tmp_path) as served:
        for seed in range(5):
            query = unit_rows(
                np.random.default_rng(50 + seed).standard_normal((1, 64)).astype(np.float32)
            )[0]
            reply = await served.memory.Recall(
                pb.RecallRequest(
                    user_id="u1", query_vector=pb.QueryVector(values=query.tolist()), top_k=10
                ),
                metadata=auth(),
            )
            similarity = np.clip(matrix @ query, 0, 1)
            recency = 0.5 ** (ages / (30 * 86_400))
            combined = (0.6 * similarity + 0.2 * recency + 0.2 * importance) / 1.0
            expected = [f"w-u1-{row}" for row in np.argsort(-combined, kind="stable")[:10]]
            assert [r.episode.id for r in reply.results] == expected
