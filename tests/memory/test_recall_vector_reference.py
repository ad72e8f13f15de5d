"""Vector Recall through gRPC equals a straightforward reference, on both
backends: every stored episode scored with the documented formula
(`combine`) from an exact FAISS similarity (the kernel the server's flat
index uses, so the same floats), filtered as the request says, sorted by
combined score then newest, cut at min_score and top_k. Ids, order and
every score part must be the same floats, whatever the weights, filters and
top_k; a second round answers from warm caches and must not differ."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np
import pytest

from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.episodes import Weights
from statekeeper.core.memory.models import unit_vector
from statekeeper.core.memory.recall import combine
from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc
from tests.harness.memory import auth, memory_app, postgres_memory_app, quiet_config, serving
from tests.memory.data import gaussian
from tests.services import configured, fresh_database, reachable

NOW = 1_700_000_000.0
DIMENSION = 24
EPISODES = 240
USER = "u1"
DAY = 86_400.0
CONFIG = quiet_config()


def clock() -> float:
    return NOW


@pytest.fixture(params=["embedded", "postgres"])
async def memory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[memory_pb2_grpc.MemoryServiceStub]:
    if request.param == "embedded":
        async with memory_app(tmp_path, CONFIG, clock=clock) as (app, _), serving(app) as stub:
            yield stub
    else:
        services = configured()
        await reachable(services)
        async with (
            fresh_database(services) as dsn,
            postgres_memory_app(dsn, CONFIG, clock) as (app, _, _),
            serving(app) as stub,
        ):
            yield stub


@dataclass(frozen=True)
class Stored:
    episode_id: str
    user_message: str
    session_id: str
    topic: str
    importance: float
    occur_time: float
    vector: np.ndarray


async def record(memory: memory_pb2_grpc.MemoryServiceStub) -> list[Stored]:
    """EPISODES episodes of USER: random vectors (a few repeated, for equal
    similarities), spread importance and distinct occurrence times (no two
    equal: the reference cannot see the store's keys, the last tie-break)."""
    vectors = gaussian(EPISODES, DIMENSION, seed=12)
    vectors[EPISODES // 2 : EPISODES // 2 + 6] = vectors[:6]  # same vectors, other times
    rng = np.random.default_rng(5)
    requests = [
        pb.RecordEpisodeRequest(
            user_id=USER,
            session_id=f"s{row % 3}",
            user_message=f"message {row}",
            assistant_response=f"answer {row}",
            summary=f"summary {row}",
            embedding=vectors[row].tolist(),
            importance=float(np.float32(rng.uniform(0.0, 1.0))),
            metadata={"topic": "cats" if row % 4 == 0 else "dogs"},
            occur_time={"seconds": int(NOW - 7 * DAY + row * 1_877)},
            near_duplicate_threshold=1.0,
        )
        for row in range(EPISODES)
    ]
    for start in range(0, EPISODES, 100):
        batch = pb.RecordEpisodesRequest(episodes=requests[start : start + 100])
        reply = await memory.RecordEpisodes(batch, metadata=auth())
        assert reply.created_count == len(batch.episodes)
    listed: list[pb.Episode] = []
    token = ""
    while True:
        page = await memory.ListEpisodes(
            pb.ListEpisodesRequest(
                user_id=USER, page_size=100, page_token=token, include_embedding=True
            ),
            metadata=auth(),
        )
        listed.extend(page.episodes)
        token = page.next_page_token
        if not token:
            break
    assert len(listed) == EPISODES
    return [
        Stored(
            e.id,
            e.user_message,
            e.session_id,
            e.metadata["topic"],
            e.importance,
            e.occur_time.seconds + e.occur_time.nanos / 1e9,
            np.asarray(e.embedding, dtype=np.float32),
        )
        for e in listed
    ]


@dataclass(frozen=True)
class Case:
    weights: pb.RecallWeights
    resolved: Weights
    top_k: int = 10
    min_score: float = 0.0
    episode_filter: pb.EpisodeFilter | None = None


DEFAULTS = CONFIG.recall
CASES = [
    Case(pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0), Weights(1, 0, 0, 30 * DAY)),
    Case(
        pb.RecallWeights(),
        Weights(
            DEFAULTS.similarity_weight,
            DEFAULTS.recency_weight,
            DEFAULTS.importance_weight,
            DEFAULTS.recency_half_life_seconds,
        ),
        top_k=25,
    ),
    Case(
        pb.RecallWeights(
            similarity=0.5, recency=2.0, importance=0.25, recency_half_life={"seconds": 86_400}
        ),
        Weights(0.5, 2.0, 0.25, DAY),
        top_k=40,
        min_score=0.15,
    ),
    Case(
        pb.RecallWeights(similarity=0.2, recency=0.0, importance=1.0),
        # The request's weights are float32: 0.2 arrives as 0.2f.
        Weights(float(np.float32(0.2)), 0.0, 1.0, 30 * DAY),
        top_k=1,
    ),
    Case(
        pb.RecallWeights(similarity=1.0, recency=0.5, importance=0.0),
        Weights(1.0, 0.5, 0.0, 30 * DAY),
        top_k=12,
        episode_filter=pb.EpisodeFilter(
            session_id="s1",
            metadata={"topic": "dogs"},
            start_time={"seconds": int(NOW - 6 * DAY)},
        ),
    ),
]


def admitted(stored: Stored, episode_filter: pb.EpisodeFilter | None) -> bool:
    if episode_filter is None:
        return True
    start = episode_filter.start_time.seconds
    return (
        stored.session_id == episode_filter.session_id
        and stored.topic == episode_filter.metadata["topic"]
        and stored.occur_time >= start
    )


def reference(stored: list[Stored], query: np.ndarray, case: Case) -> list[tuple[str, tuple]]:
    """(episode id, score parts as float32) of the expected results, in order."""
    pool = [s for s in stored if admitted(s, case.episode_filter)]
    matrix = np.stack([s.vector for s in pool])
    similarities, rows = faiss.knn(
        query.reshape(1, -1), matrix, len(pool), metric=faiss.METRIC_INNER_PRODUCT
    )
    scored = []
    for row, similarity in zip(rows[0].tolist(), similarities[0].tolist(), strict=True):
        episode = pool[row]
        score = combine(similarity, episode.importance, episode.occur_time, NOW, case.resolved)
        scored.append((score, episode))
    scored.sort(key=lambda pair: (-pair[0].combined, -pair[1].occur_time))
    kept = [(s, e) for s, e in scored if s.combined >= case.min_score][: case.top_k]
    return [
        (
            e.episode_id,
            tuple(
                float(np.float32(v)) for v in (s.similarity, s.recency, s.importance, s.combined)
            ),
        )
        for s, e in kept
    ]


async def test_vector_recall_equals_the_reference(
    memory: memory_pb2_grpc.MemoryServiceStub,
) -> None:
    stored = await record(memory)
    queries = [stored[0].vector, stored[EPISODES // 2].vector]  # equal similarities
    queries += list(gaussian(4, DIMENSION, seed=99) * 3.0)  # not unit: the server scales it
    for _ in range(2):  # a second round: warm caches must answer the same
        for case in CASES:
            for query in queries:
                reply = await memory.Recall(
                    pb.RecallRequest(
                        user_id=USER,
                        query_vector=pb.QueryVector(values=query.tolist()),
                        top_k=case.top_k,
                        min_score=case.min_score,
                        weights=case.weights,
                        filter=case.episode_filter,
                    ),
                    metadata=auth(),
                )
                expected = reference(stored, unit_vector(query), case)
                got = [
                    (
                        r.episode.id,
                        (r.score.similarity, r.score.recency, r.score.importance, r.score.combined),
                    )
                    for r in reply.results
                ]
                assert got == expected
                assert expected, f"a case that recalls nothing proves little: {case}"
                assert reply.ranking == pb.RECALL_RANKING_VECTOR
                by_id = {s.episode_id: s for s in stored}
                for result in reply.results:
                    episode, source = result.episode, by_id[result.episode.id]
                    assert episode.session_id == source.session_id
                    assert episode.user_message == source.user_message
                    assert dict(episode.metadata) == {"topic": source.topic}
                    assert not episode.embedding  # not asked for


def test_config_is_the_default() -> None:
    # The reference resolves unset weights from MemoryConfig's defaults.
    assert MemoryConfig().recall == DEFAULTS
