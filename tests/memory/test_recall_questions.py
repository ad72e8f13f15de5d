"""Which turns ask something, for recall's neighbour gains
(core/memory/recall.py): the turn after one that asks gains more. An
assistant reply's stock offer ("Anything else I can help with?") is not a
question of the episode, the user's question is, and a "?" inside a URL
asks nothing. On a real embedded store with no embedder (LEXICAL,
deterministic); each pair ties on every other part of the score except
recency, which favours the episode the assertion puts second, so the tests
fail if the distinction is gone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from statekeeper.core.memory.episodes import EpisodeDraft, RecallQuery
from statekeeper.core.memory.models import Ranking
from statekeeper.core.memory.recall import asks_something
from statekeeper.memory_app import MemoryApp
from tests.memory.helpers import memory_app

T = "tenant-questions"
USER = "ana"
JANUARY = datetime(2024, 1, 1, 12, tzinfo=UTC).timestamp()
FEBRUARY = datetime(2024, 2, 1, 12, tzinfo=UTC).timestamp()


async def _record(
    app: MemoryApp, session: str, user: str, assistant: str, occur_time: float
) -> str:
    draft = EpisodeDraft(
        user_id=USER,
        session_id=session,
        user_message=user,
        assistant_response=assistant,
        occur_time=occur_time,
        near_duplicate_threshold=1.0,
    )
    return (await app.domain.episodes.record(T, draft)).episode.episode_id


async def _ranked(app: MemoryApp, question: str) -> list[str]:
    outcome = await app.domain.episodes.recall(T, RecallQuery(USER, query_text=question))
    assert outcome.ranking == Ranking.LEXICAL
    return [r.episode.episode_id for r in outcome.results]


async def test_a_stock_offer_in_the_reply_does_not_lift_the_next_turn(tmp_path: Path) -> None:
    async with memory_app(tmp_path) as (app, _):
        offer = "Anything else I can help with"
        await _record(app, "offer", "I will adopt a pet.", offer + "?", JANUARY)
        after_offer = await _record(app, "offer", "Yes, a cat named Miso is our pet.", "", JANUARY)
        await _record(app, "plain", "I will adopt a pet.", offer + ".", FEBRUARY)
        after_plain = await _record(app, "plain", "Yes, a dog named Rexo is our pet.", "", FEBRUARY)
        ranked = await _ranked(app, "adopt pet")
        assert ranked.index(after_plain) < ranked.index(after_offer)


async def test_the_users_question_lifts_the_next_turn_whatever_the_reply(tmp_path: Path) -> None:
    async with memory_app(tmp_path) as (app, _):
        await _record(app, "asked", "Would you adopt a pet?", "Sure.", JANUARY)
        answer = await _record(app, "asked", "Yes, a cat named Miso is our pet.", "", JANUARY)
        await _record(app, "told", "I will adopt a pet.", "Sure.", FEBRUARY)
        other = await _record(app, "told", "Yes, a dog named Rexo is our pet.", "", FEBRUARY)
        ranked = await _ranked(app, "adopt pet")
        assert ranked.index(answer) < ranked.index(other)


@pytest.mark.parametrize(
    ("user", "assistant", "asks"),
    [
        ("Would you adopt a pet?", "", True),
        ("", "Would you adopt a pet?", True),  # a turn recorded as the response alone
        ("Caroline: Where did you go? I missed you.", "", True),
        ("她家的猫叫什么名字？我忘了。", "", True),  # noqa: RUF001 (full-width, no space)
        ("I adopted a pet.", "Lovely! Anything else I can help with?", False),
        ("Look: https://example.com/search?q=cats", "", False),
        ("I adopted a pet.", "", False),
    ],
)
def test_which_episodes_ask_something(user: str, assistant: str, asks: bool) -> None:
    assert asks_something(user, assistant) is asks
