"""Semantic memory rules in process: fact dedup, contradiction that
invalidates instead of deleting, as-of queries, neighbourhoods, extraction."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.adapters.openai_facts import InvalidExtractionError, OpenAIFactExtractor
from statekeeper.core.errors import InvalidArgumentError, NotFoundError
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryLimits
from statekeeper.core.memory.models import FactDraft, FactOutcome, FactQuery, ValueSource
from statekeeper.core.memory.semantic import EntityRequest, PatternFactExtractor, SemanticMemory
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.fakes.clock import FakeClock
from tests.fakes.openai_server import FakeOpenAI

T = "tenant-a"
DAY = 86_400.0


@pytest.fixture
async def semantic(tmp_path: Path, clock: FakeClock) -> AsyncIterator[SemanticMemory]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedMemoryStore(storage)
    yield SemanticMemory(store, store, PatternFactExtractor(), Limits(), MemoryLimits(), clock)
    await storage.close()


def fact(subject: str, predicate: str, obj: str, **kw: object) -> FactDraft:
    return FactDraft(subject, predicate, obj, **kw)  # type: ignore[arg-type]


async def test_identical_fact_is_deduplicated_with_the_larger_confidence(
    semantic: SemanticMemory,
) -> None:
    [first] = await semantic.add_facts(T, "u1", [fact("Alice", "likes", "tea", confidence=0.4)])
    [again] = await semantic.add_facts(T, "u1", [fact(" alice ", "likes", "TEA", confidence=0.9)])
    assert first.outcome == FactOutcome.CREATED
    assert again.outcome == FactOutcome.DEDUPLICATED
    assert again.fact.fact_id == first.fact.fact_id
    assert (await semantic.get_fact(T, first.fact.fact_id)).confidence == pytest.approx(0.9)
    facts, _ = await semantic.list_facts(T, FactQuery(user_id="u1"), 0, "")
    assert len(facts) == 1


async def test_contradiction_on_single_valued_predicate_invalidates_not_deletes(
    semantic: SemanticMemory, clock: FakeClock
) -> None:
    await semantic.declare_predicate(T, "lives_in", True, "one home at a time")
    [paris] = await semantic.add_facts(T, "u1", [fact("Alice", "lives_in", "Paris")])
    clock.now += 10 * DAY
    [berlin] = await semantic.add_facts(T, "u1", [fact("Alice", "lives_in", "Berlin")])
    assert berlin.invalidated_fact_ids == (paris.fact.fact_id,)
    old = await semantic.get_fact(T, paris.fact.fact_id)  # still readable
    assert old.invalidated_by == berlin.fact.fact_id
    assert old.invalidation_reason == "contradicted"
    assert old.valid_to == pytest.approx(berlin.fact.valid_from)
    current, _ = await semantic.list_facts(T, FactQuery(user_id="u1", subject="alice"), 0, "")
    assert [f.object for f in current] == ["Berlin"]
    everything, _ = await semantic.list_facts(
        T, FactQuery(user_id="u1", include_invalidated=True), 0, ""
    )
    assert {f.object for f in everything} == {"Paris", "Berlin"}


async def test_multi_valued_predicate_keeps_both_and_scopes_never_contradict(
    semantic: SemanticMemory,
) -> None:
    await semantic.add_facts(
        T, "u1", [fact("Alice", "likes", "tea"), fact("Alice", "likes", "jazz")]
    )
    await semantic.declare_predicate(T, "lives_in", True, "")
    await semantic.add_facts(T, "", [fact("Alice", "lives_in", "Oslo")])  # tenant-wide
    [mine] = await semantic.add_facts(T, "u1", [fact("Alice", "lives_in", "Rome")])
    assert mine.invalidated_fact_ids == ()
    likes, _ = await semantic.list_facts(T, FactQuery(user_id="u1", predicate="likes"), 0, "")
    assert {f.object for f in likes} == {"tea", "jazz"}
    seen, _ = await semantic.list_facts(T, FactQuery(user_id="u1", predicate="lives_in"), 0, "")
    assert {f.object for f in seen} == {"Oslo", "Rome"}  # own scope plus tenant-wide


async def test_as_of_query_sees_the_fact_valid_at_that_time(
    semantic: SemanticMemory, clock: FakeClock
) -> None:
    await semantic.declare_predicate(T, "lives_in", True, "")
    start = clock.now
    await semantic.add_facts(T, "u1", [fact("Alice", "lives_in", "Paris", valid_from=start)])
    clock.now += 30 * DAY
    moved = start + 20 * DAY
    await semantic.add_facts(T, "u1", [fact("Alice", "lives_in", "Berlin", valid_from=moved)])

    async def home(at: float) -> list[str]:
        found = await semantic.query_entity(T, EntityRequest("u1", "alice", 1, as_of=at))
        return [f.object for f in found.edges if f.predicate == "lives_in"]

    assert await home(start + 10 * DAY) == ["Paris"]
    assert await home(start + 25 * DAY) == ["Berlin"]
    assert await home(clock.now) == ["Berlin"]
    assert await home(start - DAY) == []


async def test_neighbourhood_follows_both_directions_to_the_requested_depth(
    semantic: SemanticMemory,
) -> None:
    await semantic.add_facts(
        T,
        "",
        [
            fact("Alice", "works_at", "Acme"),
            fact("Bob", "works_at", "Acme"),
            fact("Bob", "lives_in", "Lyon"),
            fact("Lyon", "in_country", "France"),
        ],
    )
    one = await semantic.query_entity(T, EntityRequest("", "Alice", 1))
    assert [(n.name, n.depth) for n in one.nodes] == [("Alice", 0), ("Acme", 1)]
    two = await semantic.query_entity(T, EntityRequest("", "alice", 2))
    assert {n.name for n in two.nodes} == {"alice", "Acme", "Bob"}
    three = await semantic.query_entity(T, EntityRequest("", "alice", 3))
    assert {(n.name, n.depth) for n in three.nodes} >= {("Lyon", 3)}
    assert "France" not in {n.name for n in three.nodes}
    capped = await semantic.query_entity(T, EntityRequest("", "alice", 3, max_facts=2))
    assert capped.truncated and len(capped.edges) == 2
    lonely = await semantic.query_entity(T, EntityRequest("", "Nobody", 2))
    assert [n.name for n in lonely.nodes] == ["Nobody"] and lonely.edges == []
    with pytest.raises(InvalidArgumentError) as raised:
        await semantic.query_entity(T, EntityRequest("", "alice", 4))
    assert raised.value.field == "depth"


async def test_batch_is_atomic_and_names_the_bad_input(semantic: SemanticMemory) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        await semantic.add_facts(T, "u1", [fact("a", "b", "c"), fact("a", "b", " ")])
    assert raised.value.field == "facts[1].object"
    facts, _ = await semantic.list_facts(T, FactQuery(user_id="u1"), 0, "")
    assert facts == []
    with pytest.raises(InvalidArgumentError) as raised:
        await semantic.add_facts(T, "u1", [fact("a", "b", "c", confidence=1.5)])
    assert raised.value.field == "facts[0].confidence"


async def test_invalidate_fact_is_idempotent_and_keeps_the_fact(
    semantic: SemanticMemory, clock: FakeClock
) -> None:
    [added] = await semantic.add_facts(T, "u1", [fact("Alice", "likes", "tea")])
    clock.now += DAY
    first, already = await semantic.invalidate_fact(T, added.fact.fact_id, "changed taste", None)
    assert not already and first.valid_to == pytest.approx(clock.now)
    again, already = await semantic.invalidate_fact(T, added.fact.fact_id, "", None)
    assert already and again.invalidation_reason == "changed taste"
    with pytest.raises(NotFoundError):
        await semantic.invalidate_fact(T, "f-missing", "", None)


async def test_offline_extraction_stores_with_provenance(semantic: SemanticMemory) -> None:
    outcome = await semantic.extract_facts(
        T, "u1", "My name is Ada. I live in London. Bob works at Acme.", "", "chat:1", False
    )
    assert outcome.source == ValueSource.FALLBACK
    triples = {(f.subject, f.predicate, f.object) for f in outcome.extracted}
    assert triples == {
        ("user", "name", "Ada"),
        ("user", "lives_in", "London"),
        ("Bob", "works_at", "Acme"),
    }
    assert all(r.fact.source == "chat:1" for r in outcome.results)


async def test_model_extraction_validates_json_before_storing() -> None:
    fake = FakeOpenAI().start()
    try:
        extractor = OpenAIFactExtractor(fake.base_url, "m", "")
        good = {
            "facts": [
                {"subject": "Ada", "predicate": "likes", "object": "math", "confidence": 0.8},
                {"subject": "", "predicate": "x", "object": "y"},
                {"subject": "a", "predicate": "b", "object": "c", "confidence": 7},
            ]
        }
        fake.chat_replies.append("```json\n" + json.dumps(good) + "\n```")
        extraction = await extractor.extract("Ada likes math")
        assert extraction.source == ValueSource.MODEL
        assert [(f.subject, f.object) for f in extraction.facts] == [("Ada", "math")]
        fake.chat_replies.append("sorry, I cannot do JSON")
        fallback = await extractor.extract("I live in Oslo")
        assert fallback.source == ValueSource.FALLBACK
        assert [(f.predicate, f.object) for f in fallback.facts] == [("lives_in", "Oslo")]
        with pytest.raises(InvalidExtractionError):
            extractor.validate('{"facts": "nope"}')
        fake.fail_with = 503
        assert (await extractor.extract("I like tea")).source == ValueSource.FALLBACK
    finally:
        fake.stop()
