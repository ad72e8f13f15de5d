"""Chinese recall: a multi-session conversation (chinese_conversation.json,
68 turns, 38 questions with the ids of the turns that answer them) recorded
turn by turn, each question asked through Recall.

Before the lexical index, `\\w+` made a whole Chinese sentence one token and
hit@3 was 0. The floors below sit well under what bench/locomo.py measures
(README, "Memory: retrieval"), so the tests fail on a regression to
whole-sentence tokens or a broken fusion, not on a small ranking change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statekeeper.core.memory.episodes import EpisodeDraft, RecallQuery
from statekeeper.core.memory.models import Ranking
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from tests.memory.helpers import memory_app

CAT = "我们家的猫叫团子，今年三岁了。"  # noqa: RUF001 (Chinese punctuation)
CAT_QUESTION = "她家的猫叫什么名字？"  # noqa: RUF001

DATA = Path(__file__).with_name("chinese_conversation.json")
T = "tenant-zh"
USER = "wang-fang"
HIT3_FLOOR = {"none": 0.7, "multilingual": 0.7}


def conversation() -> tuple[list[tuple[str, str]], list[tuple[str, set[str]]]]:
    data = json.loads(DATA.read_text())
    turns = [
        (turn["id"], f"{turn['speaker']}: {turn['text']}")
        for session in data["sessions"]
        for turn in session["turns"]
    ]
    questions = [(q["question"], set(q["evidence"])) for q in data["questions"]]
    return turns, questions


async def record_all(app: MemoryApp, turns: list[tuple[str, str]]) -> dict[str, str]:
    """Records every turn; returns the turn id of each episode id."""
    ids = {}
    for number, (turn_id, text) in enumerate(turns):
        outcome = await app.domain.episodes.record(
            T,
            EpisodeDraft(
                user_id=USER,
                user_message=text,
                occur_time=1_700_000_000.0 + number * 60,
                near_duplicate_threshold=1.0,
            ),
        )
        ids[outcome.episode.episode_id] = turn_id
    return ids


def test_the_set_is_what_the_issue_asks_for() -> None:
    turns, questions = conversation()
    assert len(questions) >= 30
    known = {turn_id for turn_id, _ in turns}
    assert all(evidence and evidence <= known for _, evidence in questions)


@pytest.mark.parametrize(
    ("kind", "ranking"), [("none", Ranking.LEXICAL), ("multilingual", Ranking.HYBRID)]
)
async def test_chinese_questions_find_their_turns(
    tmp_path: Path, kind: str, ranking: Ranking
) -> None:
    turns, questions = conversation()
    async with memory_app(tmp_path, endpoints=ModelEndpoints(embedder_kind=kind)) as (app, _):
        by_episode = await record_all(app, turns)
        hits = 0
        for question, evidence in questions:
            outcome = await app.domain.episodes.recall(
                T, RecallQuery(USER, query_text=question, top_k=3)
            )
            assert outcome.ranking == ranking
            found = {by_episode[r.episode.episode_id] for r in outcome.results}
            hits += bool(found & evidence)
    assert hits / len(questions) >= HIT3_FLOOR[kind]


async def test_a_chinese_question_matches_a_sentence_with_no_spaces(tmp_path: Path) -> None:
    """The issue's example: one bigram in common is enough."""
    async with memory_app(tmp_path) as (app, _):
        await record_all(app, [("a", CAT), ("b", "明天要下雨。")])
        outcome = await app.domain.episodes.recall(T, RecallQuery(USER, query_text=CAT_QUESTION))
        assert outcome.ranking == Ranking.LEXICAL
        assert [r.episode.user_message for r in outcome.results] == [CAT]
