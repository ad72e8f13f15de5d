"""Recall's conversational ranking (core/memory/recall.py), on a real
embedded store: with no embedder (LEXICAL, deterministic), the turn after a
question gains more from it than the turn after a statement, and a calendar
day or month named in the query favours the episodes of that period; with
the default embedder (HYBRID), a neighbour the filter excludes is not made
a candidate.

Each LEXICAL pair below ties on every other part of the score, and the tie
would go to the newer episode (the one the feature must NOT favour), so the
tests fail if the feature is gone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from statekeeper.core.memory.episodes import EpisodeDraft, RecallQuery
from statekeeper.core.memory.models import EpisodeFilter, Ranking
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from tests.memory.helpers import memory_app

T = "tenant-ranking"
USER = "ana"


def _at(year: int, month: int, day: int) -> float:
    return datetime(year, month, day, 12, tzinfo=UTC).timestamp()


async def _record(app: MemoryApp, session: str, text: str, occur_time: float) -> str:
    outcome = await app.domain.episodes.record(
        T,
        EpisodeDraft(
            user_id=USER,
            session_id=session,
            user_message=text,
            occur_time=occur_time,
            near_duplicate_threshold=1.0,
        ),
    )
    return outcome.episode.episode_id


async def _ranked(app: MemoryApp, question: str) -> list[str]:
    outcome = await app.domain.episodes.recall(T, RecallQuery(USER, query_text=question))
    assert outcome.ranking == Ranking.LEXICAL
    return [r.episode.episode_id for r in outcome.results]


async def test_the_turn_after_a_question_gains_more_than_the_turn_after_a_statement(
    tmp_path: Path,
) -> None:
    async with memory_app(tmp_path) as (app, _):
        # Same terms, so the same BM25: "would", "you", "i", "will", "a" are
        # stop words.
        await _record(app, "asked", "Would you adopt a pet?", _at(2024, 1, 1))
        answer = await _record(app, "asked", "Yes, a cat named Miso is our pet.", _at(2024, 1, 1))
        await _record(app, "told", "I will adopt a pet.", _at(2024, 2, 1))
        other = await _record(app, "told", "Yes, a dog named Rexo is our pet.", _at(2024, 2, 1))
        ranked = await _ranked(app, "adopt pet")
        assert ranked.index(answer) < ranked.index(other)


async def test_a_month_named_in_the_query_favours_what_occurred_then(tmp_path: Path) -> None:
    async with memory_app(tmp_path) as (app, _):
        january = await _record(app, "s1", "We went hiking by the lake.", _at(2023, 1, 14))
        march = await _record(app, "s2", "We went hiking by the river.", _at(2023, 3, 11))
        assert (await _ranked(app, "Where did we go hiking?"))[:2] == [march, january]
        assert (await _ranked(app, "Where did we go hiking in January 2023?"))[:2] == [
            january,
            march,
        ]
        assert (await _ranked(app, "Where did we go hiking on 14 January, 2023?"))[0] == january
        # A named period that holds neither changes nothing.
        assert (await _ranked(app, "Where did we go hiking in June 2023?"))[:2] == [march, january]


async def test_a_neighbour_outside_the_filter_is_not_made_a_candidate(tmp_path: Path) -> None:
    """HYBRID makes the neighbours of its best candidates candidates too;
    never one the query's filter excludes."""
    endpoints = ModelEndpoints(embedder_kind="multilingual")
    async with memory_app(tmp_path, endpoints=endpoints) as (app, _):
        question = await _record(app, "s", "Would you adopt a pet?", _at(2024, 1, 1))
        answer = await _record(app, "s", "Yes, a cat named Miso.", _at(2024, 3, 1))
        recall = app.domain.episodes.recall
        unfiltered = await recall(T, RecallQuery(USER, query_text="adopt a pet"))
        assert unfiltered.ranking == Ranking.HYBRID
        assert {r.episode.episode_id for r in unfiltered.results} == {question, answer}
        january = EpisodeFilter(end_time=_at(2024, 2, 1))
        filtered = await recall(
            T, RecallQuery(USER, query_text="adopt a pet", episode_filter=january)
        )
        assert [r.episode.episode_id for r in filtered.results] == [question]
