"""The turn after a question gains more when the question holds a term of
the query (core/memory/recall.py, asks_about): "What got you into pottery?"
is answered by the next turn, "Nice pottery! How are you?" is answered too,
but about something else. Parsing first, then on a real embedded store with
no embedder (LEXICAL, deterministic), where the pair is built so that the
rule it replaced (one share after any question) ranks it the other way."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from statekeeper.core.memory import lexical
from statekeeper.core.memory.episodes import EpisodeDraft, RecallQuery
from statekeeper.core.memory.models import Ranking
from statekeeper.core.memory.recall import (
    _MAX_QUESTIONS,
    _QUESTION_SCAN_CHARS,
    asks_about,
    questions_asked,
)
from statekeeper.memory_app import MemoryApp
from tests.memory.helpers import memory_app

T = "tenant-topics"
USER = "mel"
JANUARY = datetime(2024, 1, 1, 12, tzinfo=UTC).timestamp()
FEBRUARY = datetime(2024, 2, 1, 12, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("user", "assistant", "questions"),
    [
        ("Wow, great! What got you into running?", "", ["What got you into running?"]),
        ("Where? When? I missed it.", "", ["Where?", "When?"]),
        ("Dr. Lee, is it serious? Tell me.", "", ["Lee, is it serious?"]),
        ("太好了！你家的猫叫什么？", "", ["你家的猫叫什么?"]),  # noqa: RUF001 (full-width)
        ("", "Would you adopt a pet?", ["Would you adopt a pet?"]),
        ("I adopted a pet.", "Anything else I can help with?", []),
        ("Look: https://example.com/search?q=cats", "", []),
        # The speaker tag is no part of the question: a query naming
        # Caroline does not make "How are you?" a question on its topic.
        ("Caroline: How are you?", "", ["How are you?"]),
    ],
)
def test_questions_asked(user: str, assistant: str, questions: list[str]) -> None:
    assert questions_asked(user, assistant) == questions


def test_a_hostile_text_yields_a_bounded_number_of_questions() -> None:
    """64 KiB of question marks (within the text limit) gives the first few
    questions only, and none past the characters read: recall reads the
    questions of 50 candidates on the event loop."""
    assert questions_asked("cats " + "?" * 65_000, "") == ["cats ?"] + ["?"] * (_MAX_QUESTIONS - 1)
    late = "a" * _QUESTION_SCAN_CHARS + " What got you into pottery?"
    assert questions_asked(late, "") == []
    assert not asks_about(questions_asked(late, ""), {"pottery"})


@pytest.mark.parametrize(
    ("query", "questions", "about"),
    [
        ("Why did Caroline start pottery?", ["What got you into pottery?"], True),
        ("Why did Caroline start pottery?", ["How are you?"], False),
        ("Why did Caroline start pottery?", ["How are you?", "Do you still do pottery?"], True),
        ("王芳家的猫叫什么名字？", ["你家的猫叫什么?"], True),  # noqa: RUF001
    ],
)
def test_asks_about(query: str, questions: list[str], about: bool) -> None:
    assert asks_about(questions, set(lexical.query_terms(query))) is about


async def _record(app: MemoryApp, session: str, text: str, occur_time: float) -> str:
    draft = EpisodeDraft(
        user_id=USER,
        session_id=session,
        user_message=text,
        occur_time=occur_time,
        near_duplicate_threshold=1.0,
    )
    return (await app.domain.episodes.record(T, draft)).episode.episode_id


async def test_the_answer_to_a_question_on_the_querys_topic_gains_more(tmp_path: Path) -> None:
    async with memory_app(tmp_path) as (app, _):
        await _record(app, "topic", "Melanie: What got you into pottery? Nice!", JANUARY)
        on_topic = await _record(app, "topic", "Caroline: My aunt taught me.", JANUARY)
        # A shorter turn holding "pottery" as often: a higher BM25 than the
        # question above, but its question asks about something else. Its
        # answer is as good a match on its own, and newer (ties go to it).
        await _record(app, "other", "Melanie: Nice pottery! How are you?", FEBRUARY)
        off_topic = await _record(app, "other", "Caroline: My aunt showed me.", FEBRUARY)
        outcome = await app.domain.episodes.recall(T, RecallQuery(USER, query_text="pottery aunt"))
        assert outcome.ranking == Ranking.LEXICAL
        ranked = [r.episode.episode_id for r in outcome.results]
        assert ranked.index(on_topic) < ranked.index(off_topic)
