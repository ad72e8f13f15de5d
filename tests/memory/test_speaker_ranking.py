"""A query that names a speaker favours what that speaker said
(core/memory/recall.py, _favour_named_speakers), on a real embedded store.

In a transcript every turn is tagged with its speaker ("Caroline: ..."), and
"What did Caroline try?" asks what Caroline said. By words alone the turns
that only speak to her ("Thanks, Caroline!") match the name as well as hers
do, or better. Each pair below is ranked the other way round by BM25 alone
(the query without the name checks it), so the tests fail if the feature is
gone; the parsing of tags and names is tested on its own first."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from statekeeper.core.memory import lexical
from statekeeper.core.memory.episodes import EpisodeDraft, RecallQuery
from statekeeper.core.memory.models import Ranking
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from tests.memory.helpers import memory_app

T = "tenant-speakers"
USER = "mel"
WHEN = datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("Caroline: I tried a pottery class.", "caroline"),
        ("  Dr. Lee: take two a day", "dr. lee"),
        ("Mary-Jane Watson: hey", "mary-jane watson"),
        ("王芳：我家的猫叫团子。", "王芳"),  # noqa: RUF001 (the full-width colon Chinese writes)
        ("王芳: 我家的猫叫团子。", "王芳"),
        ("I tried a pottery class.", None),
        ("10:30 works for me", None),
        ("https://example.com: a link", None),
        ("one two three four: too many words for a name", None),
    ],
)
def test_speaker_tag(text: str, tag: str | None) -> None:
    assert lexical.speaker_tag(text) == tag


@pytest.mark.parametrize(
    ("query", "tag", "named"),
    [
        ("What did Caroline try?", "caroline", True),
        ("What did Caroline's sister try?", "caroline", True),
        ("What did Melanie try?", "caroline", False),
        ("What did John say?", "john smith", True),
        ("王芳家的猫叫什么名字？", "王芳", True),  # noqa: RUF001
        ("王伟家的猫叫什么名字？", "王芳", False),  # noqa: RUF001 (shares 王, not the name)
        ("What did I say?", "i", False),  # a stop word names nobody
    ],
)
def test_names_speaker(query: str, tag: str, named: bool) -> None:
    assert lexical.names_speaker(query, lexical.query_terms(query), tag) is named


async def _record(app: MemoryApp, session: str, text: str) -> str:
    outcome = await app.domain.episodes.record(
        T,
        EpisodeDraft(
            user_id=USER,
            session_id=session,
            user_message=text,
            occur_time=WHEN,
            near_duplicate_threshold=1.0,
        ),
    )
    return outcome.episode.episode_id


async def _ranked(app: MemoryApp, question: str, ranking: Ranking) -> list[str]:
    outcome = await app.domain.episodes.recall(T, RecallQuery(USER, query_text=question))
    assert outcome.ranking == ranking
    return [r.episode.episode_id for r in outcome.results]


async def _pair(app: MemoryApp) -> tuple[str, str]:
    # Separate sessions: no neighbour gains. The speaker's turn is recorded
    # first, so a tie would go to the other one (the newer key).
    spoken = await _record(app, "s1", "Caroline: I tried a pottery class.")
    addressed = await _record(
        app, "s2", "Melanie: Caroline, a pottery class! Pottery class, Caroline? Caroline!"
    )
    return spoken, addressed


async def test_lexical_recall_favours_the_named_speaker(tmp_path: Path) -> None:
    async with memory_app(tmp_path) as (app, _):
        spoken, addressed = await _pair(app)
        # Without a name, the turn that says "pottery class" more often wins
        # (BM25: 1.0 against 0.93) ...
        assert (await _ranked(app, "pottery class", Ranking.LEXICAL))[:2] == [addressed, spoken]
        # ... and naming its speaker turns it round (BM25 alone: 0.91 to 1.0) ...
        named = await _ranked(app, "Caroline pottery class", Ranking.LEXICAL)
        assert named[:2] == [spoken, addressed]
        # ... while naming the other speaker favours the other turn, which
        # "try" alone would not (BM25: 1.0 to 0.996).
        other = await _ranked(app, "Did Melanie try a pottery class?", Ranking.LEXICAL)
        assert other[0] == addressed


async def test_hybrid_recall_favours_the_named_speaker(tmp_path: Path) -> None:
    endpoints = ModelEndpoints(embedder_kind="multilingual")
    async with memory_app(tmp_path, endpoints=endpoints) as (app, _):
        spoken, addressed = await _pair(app)
        # Fused vector and BM25 parts alone: 0.96 to 1.0, and 1.0 to 0.96.
        named = await _ranked(app, "Caroline pottery class", Ranking.HYBRID)
        assert named[:2] == [spoken, addressed]
        other = await _ranked(app, "Did Melanie try a pottery class?", Ranking.HYBRID)
        assert other[:2] == [addressed, spoken]


async def test_a_chinese_speaker_is_named_by_the_whole_name(tmp_path: Path) -> None:
    async with memory_app(tmp_path) as (app, _):
        spoken = await _record(app, "s1", "王芳: 我家的猫叫团子。")
        addressed = await _record(app, "s2", "王伟: 王芳，你家的猫叫团子吗？你家的猫真可爱！")  # noqa: RUF001
        # BM25 alone: 0.95 to 1.0 without the name, 0.97 to 1.0 with it.
        unnamed = await _ranked(app, "家的猫叫什么？", Ranking.LEXICAL)  # noqa: RUF001
        assert unnamed[:2] == [addressed, spoken]
        named = await _ranked(app, "王芳家的猫叫什么？", Ranking.LEXICAL)  # noqa: RUF001
        assert named[:2] == [spoken, addressed]
