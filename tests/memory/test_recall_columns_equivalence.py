"""The vector recall ranks its candidates with array arithmetic
(`_RankedColumns`); it must give what the per-candidate ranking (`_ranked`,
itself pinned to the documented formula) gives: the same candidates in the
same order with the same floats, sign of zero included, with or without a
min_importance filter and whatever the weights (a zero recency weight skips
the recency of candidates that are not returned)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.episodes import RecallQuery, Weights
from statekeeper.core.memory.models import EpisodeFilter
from statekeeper.core.memory.recall import EpisodicRecall, _RankedColumns, _Scored
from statekeeper.core.memory.vector_index import SearchColumns

NOW = 1_700_000_000.0
RATE = MemoryConfig().decay_rate_per_day
EDGE_SIMILARITIES = [-1.0, -0.0, 0.0, 0.3, 1.0, 1.0000001, 2.0]
EDGE_AGES = [-3600.0, -0.0, 0.0, 1.0, 86_400.0, 1e9]


def columns(seed: int, count: int) -> SearchColumns:
    rng = random.Random(seed)
    keys, similarity, importance, occur_time = [], [], [], []
    for key in range(1, count + 1):
        similarity.append(rng.choice(EDGE_SIMILARITIES) if key % 5 == 0 else rng.uniform(-0.2, 1.1))
        age = rng.choice(EDGE_AGES) if key % 7 == 0 else rng.uniform(0, 1e7)
        importance.append(rng.choice([0.0, 0.5, 1.0, rng.random()]))
        occur_time.append(NOW - age)
        keys.append(key * 7 % (count + 3) + 1)  # keys not in similarity order
    # Ties: equal scores (the newest first), equal scores and times (lowest key first).
    for key in (10_001, 10_000, 10_002):
        keys.append(key)
        similarity.append(0.5)
        importance.append(0.5)
        occur_time.append(NOW - 10.0 if key != 10_002 else NOW - 5.0)
    return SearchColumns(
        keys=keys,
        similarity=np.asarray(similarity, dtype=np.float64),
        importance=np.asarray(importance, dtype=np.float64),
        occur_time=np.asarray(occur_time, dtype=np.float64),
        index_type="Flat",
        exhausted=False,
    )


def reference(found: SearchColumns, weights: Weights, minimum: float) -> list[_Scored]:
    recall = EpisodicRecall.__new__(EpisodicRecall)
    recall._config = MemoryConfig()
    query = RecallQuery(user_id="u", episode_filter=EpisodeFilter(min_importance=minimum))
    parts = zip(
        found.keys,
        found.similarity.tolist(),
        found.importance.tolist(),
        found.occur_time.tolist(),
        strict=True,
    )
    return recall._ranked(parts, query, weights, NOW)


def same(left: _Scored, right: _Scored) -> bool:
    return all(
        a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
        for a, b in zip(left, right, strict=True)
    )


@pytest.mark.parametrize(
    "weights",
    [
        Weights(1.0, 0.0, 0.0, 86_400.0),
        Weights(1.0, -0.0, 0.0, 86_400.0),
        Weights(0.6, 0.2, 0.2, 30 * 86_400.0),
        Weights(0.25, 2.0, 0.5, 3600.0),
        Weights(0.2, 0.0, 1.0, 86_400.0),
        Weights(0.0, 1.0, 0.0, 1.0),
    ],
)
@pytest.mark.parametrize("minimum", [0.0, 0.3])
def test_columns_rank_as_the_per_candidate_ranking(weights: Weights, minimum: float) -> None:
    for seed in range(5):
        found = columns(seed, 300)
        expected = reference(found, weights, minimum)
        ranked = _RankedColumns(found, NOW, weights, minimum, RATE)
        assert len(ranked) == len(expected)
        if minimum:
            assert len(expected) < len(found.keys)  # the filter did filter
        got = ranked.best(len(ranked))
        assert [s.key for s in got] == [s.key for s in expected]
        assert all(same(g, e) for g, e in zip(got, expected, strict=True))
        assert ranked.best(10) == got[:10]
        for rank in (0, 9, len(got) - 1):
            assert ranked.combined_at(rank) == expected[rank].combined
        for min_score in (0.0, 0.4, 0.9, 2.0):
            assert ranked.qualified(min_score) == sum(s.combined >= min_score for s in expected)


def test_no_candidates() -> None:
    ranked = _RankedColumns(SearchColumns.empty(), NOW, Weights(1, 0, 0, 1.0), 0.0, RATE)
    assert len(ranked) == 0 and ranked.best(10) == [] and ranked.qualified(0.0) == 0
