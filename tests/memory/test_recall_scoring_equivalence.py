"""Recall's fast scoring paths give exactly what the plain formulas give.

Recall ranks hundreds of candidates per query, so `_combined_scores` computes
the documented formula (`combine`) in one loop and `bm25_scores` counts
terms with list.count instead of a Counter per candidate. Ranking must not
move by a single float: these tests compare both against the reference
forms, value for value and order for order, on random and edge inputs."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

import pytest

from statekeeper.core.memory import lexical
from statekeeper.core.memory.episodes import Weights
from statekeeper.core.memory.lexical import LexicalCandidate, LexicalMatches
from statekeeper.core.memory.recall import _combined_scores, _rank_order, combine

NOW = 1_700_000_000.0
EDGE_SIMILARITIES = [-1.0, -0.0, 0.0, 0.3, 1.0, 1.0000001, 2.0, math.nan]
EDGE_AGES = [-3600.0, -0.0, 0.0, 1.0, 86_400.0, 1e9, math.nan]


def _parts(rng: random.Random, count: int) -> list[tuple[int, float, float, float]]:
    parts = []
    for key in range(count):
        similarity = rng.choice(EDGE_SIMILARITIES) if key % 5 == 0 else rng.uniform(-0.2, 1.1)
        age = rng.choice(EDGE_AGES) if key % 7 == 0 else rng.uniform(0, 1e7)
        importance = rng.choice([0.0, 0.5, 1.0, rng.random()])
        parts.append((key, similarity, importance, NOW - age))
    # Ties on the combined score: the newest, then the lowest key, first.
    parts += [(count + 1, 0.5, 0.5, NOW - 10.0), (count, 0.5, 0.5, NOW - 10.0)]
    return parts


def _same_float(left: float, right: float) -> bool:
    return (math.isnan(left) and math.isnan(right)) or (
        left == right and math.copysign(1.0, left) == math.copysign(1.0, right)
    )


@pytest.mark.parametrize(
    "weights",
    [
        Weights(1.0, 0.0, 0.0, 86_400.0),
        Weights(0.7, 0.2, 0.1, 7 * 86_400.0),
        Weights(0.25, 2.0, 0.5, 3600.0),
    ],
)
def test_combined_scores_equal_combine_float_for_float(weights: Weights) -> None:
    parts = _parts(random.Random(7), 500)
    fast = _combined_scores(parts, NOW, weights)
    assert [s.key for s in fast] == [p[0] for p in parts]
    for scored, (_, similarity, importance, occur_time) in zip(fast, parts, strict=True):
        reference = combine(similarity, importance, occur_time, NOW, weights)
        assert _same_float(scored.score.similarity, reference.similarity)
        assert _same_float(scored.score.recency, reference.recency)
        assert _same_float(scored.score.importance, reference.importance)
        assert _same_float(scored.combined, reference.combined)


def test_rank_order_is_the_documented_order() -> None:
    weights = Weights(0.7, 0.2, 0.1, 86_400.0)
    parts = [p for p in _parts(random.Random(11), 300) if not math.isnan(p[1] + p[3])]
    ranked = sorted(_combined_scores(parts, NOW, weights), key=_rank_order)
    reference = sorted(
        parts,
        key=lambda p: (-combine(p[1], p[2], p[3], NOW, weights).combined, -p[3], p[0]),
    )
    assert [s.key for s in ranked] == [p[0] for p in reference]
    tie = [s.key for s in ranked if s.key in (300, 301)]
    assert tie == [300, 301]


def _bm25_reference(
    query: Sequence[str], matches: LexicalMatches, k1: float, b: float
) -> list[float]:
    """bm25_scores as first written (a Counter per candidate)."""
    documents = [Counter(c.terms.split()) for c in matches.candidates]
    if not documents:
        return []
    lengths = [sum(doc.values()) for doc in documents]
    average = (sum(lengths) / len(lengths)) or 1.0
    count = max(matches.document_count, len(documents))
    idf = {}
    for term in query:
        frequency = min(max(matches.document_frequency.get(term, 0), 1), count)
        idf[term] = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
    scores = []
    for doc, length in zip(documents, lengths, strict=True):
        norm = k1 * (1 - b + b * length / average)
        score = 0.0
        for term in query:
            tf = doc.get(term, 0)
            if tf:
                score += idf[term] * tf * (k1 + 1) / (tf + norm)
        scores.append(score)
    return scores


def test_bm25_scores_equal_the_counter_form() -> None:
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(40)] + ["猫", "团子", "hike"]
    candidates = [
        LexicalCandidate(
            key, " ".join(rng.choices(vocabulary, k=rng.randint(0, 30))), rng.random(), NOW
        )
        for key in range(300)
    ]
    frequency = {term: rng.randint(0, 400) for term in vocabulary}
    matches = LexicalMatches(candidates, 1000, frequency)
    queries = [
        rng.sample(vocabulary, 6),
        ["w1", "w1", "absent"],  # a repeated term counts twice in both forms
        [],
    ]
    for query in queries:
        for k1, b in ((lexical.BM25_K1, lexical.BM25_B), (1.2, 0.75), (0.0, 0.0)):
            fast = lexical.bm25_scores(query, matches, k1, b)
            assert fast == _bm25_reference(query, matches, k1, b)
    assert any(lexical.bm25_scores(queries[0], matches))  # the data did match
    assert lexical.bm25_scores(["w1"], LexicalMatches([], 0)) == []
