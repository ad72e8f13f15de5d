"""The memory storage contract (core/memory/store.py), once per backend.

MEMORY_BACKENDS maps a name to a factory of (store, close): the embedded
SQLite store, and the PostgreSQL store on a fresh database per test (the
tests read store-wide lists such as `tenants()`), skipped with the reason
printed when its server is not running (tests/services.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

from statekeeper.core.memory import lexical
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    DimensionMismatchError,
    Episode,
    EpisodeCursor,
    EpisodeFilter,
    FactBatch,
    FactDraft,
    FactOrigin,
    FactOutcome,
    FactQuery,
    NeighbourhoodQuery,
    Predicate,
    ValueSource,
    content_hash,
    unit_vector,
)
from statekeeper.core.memory.store import MemoryStore
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.services import configured, create_database, drop_database, reachable

NOW = 1_700_000_000.0


Closer = Callable[[], Awaitable[None]]


async def _embedded(tmp_path: Path) -> tuple[MemoryStore, Closer]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    return EmbeddedMemoryStore(storage), storage.close


async def _postgres(tmp_path: Path) -> tuple[MemoryStore, Closer]:
    services = configured()
    await reachable(services)
    dsn = await create_database(services)
    storage = PostgresStorage(dsn, pool_size=4, migrate_on_start=True)
    await storage.start()
    store = PostgresMemoryStore(storage)
    await store.start()

    async def close() -> None:
        await store.close()
        await storage.close()
        await drop_database(services, dsn)

    return store, close


MEMORY_BACKENDS: dict[str, Callable[[Path], Awaitable[tuple[MemoryStore, Closer]]]] = {
    "embedded": _embedded,
    "postgres": _postgres,
}


@pytest.fixture(params=sorted(MEMORY_BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryStore]:
    backend, close = await MEMORY_BACKENDS[request.param](tmp_path)
    yield backend
    await close()


def episode(
    name: str, user: str = "u1", vector: list[float] | None = None, **changes: object
) -> Episode:
    embedding = None if vector is None else unit_vector(vector)
    base = Episode(
        episode_id=f"e-{name}",
        user_id=user,
        session_id="",
        user_message=name,
        assistant_response="",
        summary=name,
        summary_source=ValueSource.CLIENT,
        embedding_source=ValueSource.CLIENT if vector else ValueSource.NONE,
        embedding_model="",
        importance=0.5,
        metadata={},
        occur_time=NOW,
        create_time=NOW,
        content_hash=content_hash(name, ""),
        dimension=0 if embedding is None else len(embedding),
        embedding=embedding,
    )
    return base.evolve(**changes)


def batch(user: str, *drafts: FactDraft, now: float = NOW) -> FactBatch:
    ids = tuple(f"f-{user}-{now}-{i}-{d.object}" for i, d in enumerate(drafts))
    return FactBatch(user, drafts, ids, FactOrigin.CLIENT, now)


async def test_insert_dedups_by_hash_and_assigns_increasing_keys(store: MemoryStore) -> None:
    first, inserted = await store.insert_episode("t", episode("a", vector=[1, 0]))
    again, inserted_again = await store.insert_episode(
        "t", episode("a", vector=[0, 1]).evolve(episode_id="e-other")
    )
    assert inserted and not inserted_again and again.episode_id == first.episode_id
    second, _ = await store.insert_episode("t", episode("b", vector=[0, 1]))
    assert 0 < first.vector_key < second.vector_key
    _, inserted_other = await store.insert_episode(
        "t", episode("a", user="u2").evolve(episode_id="e-a2")
    )
    assert inserted_other  # the hash is per user
    assert (await store.find_by_hash("t", "u1", content_hash("a", ""))) is not None
    with pytest.raises(DimensionMismatchError):
        await store.insert_episode("t", episode("c", vector=[1, 0, 0]))
    assert await store.get_episode("t", "e-c", False) is None


async def test_reads_stay_in_their_tenant_and_user(store: MemoryStore) -> None:
    stored, _ = await store.insert_episode("t1", episode("a", vector=[1, 0]))
    assert await store.get_episode("t2", "e-a", False) is None
    assert await store.get_episodes_by_keys("t2", "u1", [stored.vector_key], False) == []
    assert await store.get_episodes_by_keys("t1", "u2", [stored.vector_key], False) == []
    [found] = await store.get_episodes_by_keys("t1", "u1", [stored.vector_key], True)
    assert found.embedding is not None and np.allclose(found.embedding, unit_vector([1, 0]))
    assert (await store.get_episode("t1", "e-a", False)).embedding is None  # type: ignore[union-attr]
    assert await store.delete_episodes("t2", ["e-a"]) == []
    assert await store.index_owners() == [("t1", "u1")]
    assert await store.tenants() == ["t1"] and await store.users("t1") == ["u1"]


async def test_list_order_cursor_and_filters(store: MemoryStore) -> None:
    await store.insert_episodes(
        "t",
        [
            episode("a", vector=[1, 0], occur_time=NOW - 30, session_id="s1", metadata={"k": "x"}),
            episode("b", occur_time=NOW - 20, session_id="s2", metadata={"k": "y", "q": "\"'"}),
            episode("c", vector=[0, 1], occur_time=NOW - 10, session_id="s1"),
        ],
    )
    everything = await store.list_episodes("t", "", EpisodeFilter(), None, 10, False)
    assert [e.episode_id for e in everything] == ["e-c", "e-b", "e-a"]
    after = EpisodeCursor(everything[0].occur_time, everything[0].episode_id)
    assert [
        e.episode_id for e in await store.list_episodes("t", "u1", EpisodeFilter(), after, 1, False)
    ] == ["e-b"]
    assert [
        e.episode_id
        for e in await store.list_episodes(
            "t", "u1", EpisodeFilter(session_id="s1"), None, 10, False
        )
    ] == ["e-c", "e-a"]
    window = EpisodeFilter(start_time=NOW - 20, end_time=NOW - 10)
    assert [
        e.episode_id for e in await store.list_episodes("t", "u1", window, None, 10, False)
    ] == ["e-b"]
    quoted = EpisodeFilter(metadata={"q": "\"'"})
    assert [
        e.episode_id for e in await store.list_episodes("t", "u1", quoted, None, 10, False)
    ] == ["e-b"]
    keys = await store.matching_keys("t", "u1", EpisodeFilter(session_id="s1"), 10)
    assert len(keys) == 2  # only embedded episodes have keys to match
    assert await store.matching_keys("t", "u1", EpisodeFilter(session_id="s2"), 10) == []
    vectors = await store.load_vectors("t", "u1")
    assert vectors is not None and len(vectors) == 2 and vectors.dimension == 2
    assert await store.load_vectors("t", "nobody") is None
    scanned = await store.scan_episodes("t", "", 0, 2)
    assert len(scanned) == 2 and scanned[0].vector_key < scanned[1].vector_key
    rest = await store.scan_episodes("t", "u1", scanned[-1].vector_key, 10)
    assert len(rest) == 1
    unconsolidated = await store.unconsolidated_episodes("t", "u1", 10)
    assert [e.episode_id for e in unconsolidated] == ["e-a", "e-c"]  # embedded, oldest first


async def test_fact_rules_dedup_contradiction_and_batch_order(store: MemoryStore) -> None:
    await store.declare_predicate("t", Predicate("lives_in", True, "", NOW, NOW))
    results = await store.apply_facts(
        "t",
        batch(
            "u1",
            FactDraft("Ann", "lives_in", "Paris"),
            FactDraft("ann", "LIVES_IN", "Rome"),  # sees the first: contradicts it
            FactDraft("Ann", "lives_in", "rome", confidence=0.5),  # sees the second: duplicate
        ),
    )
    assert [r.outcome for r in results] == [
        FactOutcome.CREATED,
        FactOutcome.CREATED,
        FactOutcome.DEDUPLICATED,
    ]
    paris = await store.get_fact("t", results[0].fact.fact_id)
    assert paris is not None and paris.invalidated_by == results[1].fact.fact_id
    assert paris.valid_to == NOW
    assert results[2].fact.fact_id == results[1].fact.fact_id
    valid = await store.list_facts("t", FactQuery(user_id="u1"), NOW + 1, None, 10)
    assert [f.object for f in valid] == ["Rome"]
    assert await store.get_fact("other", paris.fact_id) is None
    invalidated, already = await store.invalidate_fact("t", paris.fact_id, "x", None, NOW + 5) or (
        None,
        False,
    )
    assert already and invalidated is not None and invalidated.invalidation_reason == "contradicted"


async def test_neighbourhood_is_recursive_and_bounded(store: MemoryStore) -> None:
    await store.apply_facts(
        "t",
        batch(
            "",
            FactDraft("A", "r", "B"),
            FactDraft("C", "r", "B"),
            FactDraft("C", "r", "D"),
            FactDraft("D", "s", "E"),
        ),
    )

    def query(depth: int, **kw: object) -> NeighbourhoodQuery:
        base = dict(
            user_id="u1",
            entity="a",
            depth=depth,
            as_of=NOW + 1,
            include_invalidated=False,
            predicates=(),
            max_facts=100,
        )
        base.update(kw)
        return NeighbourhoodQuery(**base)  # type: ignore[arg-type]

    one = await store.neighbourhood("t", query(1))
    assert [(n.name, n.depth) for n in one.nodes] == [("a", 0), ("B", 1)]
    three = await store.neighbourhood("t", query(3))
    assert [(n.name, n.depth) for n in three.nodes] == [("a", 0), ("B", 1), ("C", 2), ("D", 3)]
    assert len(three.edges) == 3 and not three.truncated
    only_r = await store.neighbourhood("t", query(3, predicates=("s",)))
    assert only_r.edges == []
    capped = await store.neighbourhood("t", query(3, max_facts=1))
    assert capped.truncated and len(capped.edges) == 1
    assert await store.entities_among("t", "u1", ["a", "zzz", "d"]) == ["a", "d"]


async def test_consolidate_is_atomic_and_once(store: MemoryStore) -> None:
    stored = await store.insert_episodes(
        "t", [episode(n, vector=[1, i]) for i, n in enumerate(("a", "b", "c"))]
    )
    ids = tuple(e.episode_id for e in stored)
    plan = ConsolidationPlan("u1", ids, batch("u1", FactDraft("u1", "likes", "x")), 0.3)
    results = await store.consolidate("t", plan)
    assert len(results) == 1
    for episode_id in ids:
        after = await store.get_episode("t", episode_id, False)
        assert after is not None and after.importance == pytest.approx(0.15)
        assert after.consolidate_time == NOW and after.derived_fact_ids == (
            results[0].fact.fact_id,
        )
    again = ConsolidationPlan("u1", ids, batch("u1", FactDraft("u1", "likes", "y")), 0.3)
    assert await store.consolidate("t", again) == []
    assert len(await store.list_facts("t", FactQuery(user_id="u1"), NOW + 1, None, 10)) == 1


async def test_predicates_replace_and_page_by_name(store: MemoryStore) -> None:
    await store.declare_predicate("t", Predicate("b", False, "", NOW, NOW))
    replaced = await store.declare_predicate(
        "t", Predicate("b", True, "now single", NOW + 9, NOW + 9)
    )
    assert (
        replaced.single_valued and replaced.create_time == NOW and replaced.update_time == NOW + 9
    )
    await store.declare_predicate("t", Predicate("a", False, "", NOW, NOW))
    assert [p.name for p in await store.list_predicates("t", "", 10)] == ["a", "b"]
    assert [p.name for p in await store.list_predicates("t", "a", 10)] == ["b"]
    assert await store.list_predicates("other", "", 10) == []


async def test_neighbourhood_as_of_sees_the_edge_valid_then(store: MemoryStore) -> None:
    await store.declare_predicate("t", Predicate("lives_in", True, "", NOW, NOW))
    await store.apply_facts("t", batch("u1", FactDraft("Ann", "lives_in", "Paris"), now=NOW))
    await store.apply_facts("t", batch("u1", FactDraft("Ann", "lives_in", "Rome"), now=NOW + 10))

    def query(as_of: float, include_invalidated: bool = False) -> NeighbourhoodQuery:
        return NeighbourhoodQuery("u1", "ann", 2, as_of, include_invalidated, (), 10)

    then = await store.neighbourhood("t", query(NOW + 5))
    assert [f.object for f in then.edges] == ["Paris"]
    later = await store.neighbourhood("t", query(NOW + 11))
    assert [f.object for f in later.edges] == ["Rome"]
    both = await store.neighbourhood("t", query(NOW + 11, include_invalidated=True))
    assert sorted(f.object for f in both.edges) == ["Paris", "Rome"]
    assert (await store.neighbourhood("t", query(NOW - 1))).edges == []


async def test_concurrent_identical_episodes_store_one(store: MemoryStore) -> None:
    copies = [episode("same", vector=[1, 0]).evolve(episode_id=f"e-{n}") for n in range(6)]
    outcomes = await asyncio.gather(*(store.insert_episode("t", e) for e in copies))
    assert sum(inserted for _, inserted in outcomes) == 1
    assert len({stored.episode_id for stored, _ in outcomes}) == 1
    assert len(await store.list_episodes("t", "u1", EpisodeFilter(), None, 10, False)) == 1


async def test_concurrent_first_vectors_agree_on_one_dimension(store: MemoryStore) -> None:
    drafts = [episode(f"d{n}", vector=[1.0] * (2 + n % 2)) for n in range(8)]
    outcomes = await asyncio.gather(
        *(store.insert_episode("t", e) for e in drafts), return_exceptions=True
    )
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert all(isinstance(o, DimensionMismatchError) for o in refused)
    assert len(refused) == 4  # whichever dimension came first, the other four fail
    vectors = await store.load_vectors("t", "u1")
    assert vectors is not None and len(vectors) == 4


async def test_concurrent_consolidations_of_one_cluster_apply_once(store: MemoryStore) -> None:
    stored = await store.insert_episodes(
        "t", [episode(n, vector=[1, i]) for i, n in enumerate(("a", "b", "c"))]
    )
    ids = tuple(e.episode_id for e in stored)
    plans = [
        ConsolidationPlan("u1", ids, batch("u1", FactDraft("u1", "likes", f"x{n}")), 0.3)
        for n in range(4)
    ]
    results = await asyncio.gather(*(store.consolidate("t", plan) for plan in plans))
    assert sum(bool(r) for r in results) == 1
    after = await store.get_episode("t", ids[0], False)
    assert after is not None and after.importance == pytest.approx(0.15)


async def test_concurrent_contradictions_leave_one_valid_fact(store: MemoryStore) -> None:
    await store.declare_predicate("t", Predicate("lives_in", True, "", NOW, NOW))
    cities = ("Paris", "Rome", "Oslo", "Lima", "Kyiv", "Rabat", "Quito", "Hanoi")
    await asyncio.gather(
        *(store.apply_facts("t", batch("u1", FactDraft("Ann", "lives_in", c))) for c in cities)
    )
    valid = await store.list_facts("t", FactQuery(user_id="u1"), NOW + 1, None, 10)
    everything = await store.list_facts(
        "t", FactQuery(user_id="u1", include_invalidated=True), NOW + 1, None, 10
    )
    assert len(valid) == 1 and len(everything) == len(cities)


async def test_import_keeps_the_first_of_equal_episodes(store: MemoryStore) -> None:
    await store.insert_episode("t", episode("old", vector=[1, 0]))
    stored = await store.insert_episodes(
        "t",
        [
            episode("a", vector=[1, 0]),
            episode("a", vector=[0, 1]).evolve(episode_id="e-a2"),  # same content
            episode("old", vector=[0, 1]).evolve(episode_id="e-old2"),  # stored before
            episode("c", vector=[1, 1]),
        ],
    )
    assert [e.episode_id for e in stored] == ["e-a", "e-c"]
    assert stored[0].vector_key < stored[1].vector_key
    with pytest.raises(DimensionMismatchError):
        await store.insert_episodes("t", [episode("d", vector=[1, 0, 0])])
    assert await store.get_episode("t", "e-d", False) is None


# ----- lexical index and session neighbours (core/memory/lexical.py) ---------------------


async def test_lexical_matches_come_from_the_index_with_corpus_statistics(
    store: MemoryStore,
) -> None:
    texts = {
        "tea": "I adore green tea in the morning",
        "teas": "Green teas and black coffee",
        "cat": "我们家的猫叫团子，今年三岁了。",  # noqa: RUF001 (Chinese punctuation)
        "stock": "The stock market fell today",
    }
    for name, text in texts.items():
        await store.insert_episode("t", episode(name).evolve(user_message=text))
    await store.insert_episode("t", episode("other-user", user="u2").evolve(user_message="tea"))
    await store.insert_episode("t2", episode("other-tenant").evolve(user_message="green tea"))

    wanted = lexical.query_terms("Green tea?")
    found = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 10)
    keys = {c.key for c in found.candidates}
    by_name = {n: (await store.get_episode("t", f"e-{n}", False)) for n in texts}
    assert keys == {by_name["tea"].vector_key, by_name["teas"].vector_key}  # type: ignore[union-attr]
    assert found.document_count == 4
    assert found.document_frequency == {"green": 2, "tea": 2}  # "teas" stems to "tea"
    tea = next(c for c in found.candidates if c.key == by_name["tea"].vector_key)  # type: ignore[union-attr]
    assert tea.terms.split()[:3] == ["ador", "green", "tea"]

    chinese = await store.lexical_matches(
        "t", "u1", lexical.query_terms("她家的猫叫什么名字"), EpisodeFilter(), 10
    )
    assert [c.key for c in chinese.candidates] == [by_name["cat"].vector_key]  # type: ignore[union-attr]
    assert (
        await store.lexical_matches("t", "u1", ["nothing"], EpisodeFilter(), 10)
    ).candidates == []
    assert (await store.lexical_matches("t", "u1", [], EpisodeFilter(), 10)).candidates == []


async def test_lexical_matches_filter_limit_and_forget_deleted(store: MemoryStore) -> None:
    for number in range(5):
        await store.insert_episode(
            "t",
            episode(f"tea-{number}").evolve(
                user_message=f"tea number {number}",
                session_id="s1" if number < 3 else "s2",
                occur_time=NOW + number,
            ),
        )
    wanted = ["tea"]
    in_s2 = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(session_id="s2"), 10)
    assert len(in_s2.candidates) == 2 and in_s2.document_frequency == {"tea": 5}
    assert len((await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 3)).candidates) == 3
    await store.delete_episodes("t", ["e-tea-0", "e-tea-1"])
    left = await store.lexical_matches("t", "u1", wanted, EpisodeFilter(), 10)
    assert len(left.candidates) == 3 and left.document_count == 3


async def test_neighbours_are_the_adjacent_episodes_of_the_same_session(
    store: MemoryStore,
) -> None:
    keys = {}
    for name, session in (("a", "s1"), ("b", "s2"), ("c", "s1"), ("d", "s1")):
        stored, _ = await store.insert_episode("t", episode(name).evolve(session_id=session))
        keys[name] = stored.vector_key
    await store.insert_episode("t", episode("e", user="u2").evolve(session_id="s1"))
    links = await store.neighbours("t", "u1", [keys["c"], keys["b"], 10**9])
    found = sorted((n.key, n.neighbour_key, n.after) for n in links)
    assert found == sorted([(keys["c"], keys["a"], False), (keys["c"], keys["d"], True)])
    assert await store.neighbours("t", "u2", [keys["c"]]) == []


async def test_vector_manifest_lists_embedded_episodes_without_vectors(store: MemoryStore) -> None:
    assert await store.vector_manifest("t", "u1") is None
    a, _ = await store.insert_episode("t", episode("a", vector=[1, 0], importance=0.3))
    await store.insert_episode("t", episode("b"))  # no embedding: not listed
    c, _ = await store.insert_episode("t", episode("c", vector=[0, 1], occur_time=NOW + 5))
    await store.insert_episode("t", episode("d", user="u2", vector=[1, 1]))
    await store.insert_episode("t2", episode("e", vector=[1, 1]))
    manifest = await store.vector_manifest("t", "u1")
    assert manifest is not None and manifest.dimension == 2
    rows = sorted(
        zip(
            manifest.keys.tolist(),
            manifest.importance.tolist(),
            manifest.occur_time.tolist(),
            strict=True,
        )
    )
    assert rows == [(a.vector_key, pytest.approx(0.3), NOW), (c.vector_key, 0.5, NOW + 5)]
    await store.delete_episodes("t", ["e-a"])
    after = await store.vector_manifest("t", "u1")
    assert after is not None and after.keys.tolist() == [c.vector_key]


async def test_metadata_filters_match_exactly(store: MemoryStore) -> None:
    """Exact pairs only (the embedded store matches substrings of the stored
    JSON: keys and values holding quotes, commas and pair-like text must not
    fool it)."""
    tagged, _ = await store.insert_episode(
        "t", episode("a", vector=[1, 0], metadata={"k": "v", "q": 'say "hi"'})
    )
    await store.insert_episode("t", episode("b", vector=[0, 1], metadata={"k": "vv"}))
    await store.insert_episode("t", episode("c", vector=[1, 1], metadata={"kk": "v"}))
    await store.insert_episode("t", episode("d", vector=[1, 2], metadata={"x": '"k":"v"'}))
    await store.insert_episode("t", episode("e", vector=[2, 1], metadata={'x"k': "v"}))
    await store.insert_episode("t", episode("f", vector=[2, 3], metadata={"k": 'v"'}))
    await store.insert_episode("t", episode("g", vector=[3, 1], metadata={"a,": ',"k":"v"'}))
    for wanted in ({"k": "v"}, {"q": 'say "hi"'}, {"k": "v", "q": 'say "hi"'}):
        keys = await store.matching_keys("t", "u1", EpisodeFilter(metadata=wanted), 10)
        assert keys == [tagged.vector_key], wanted


async def test_find_by_hashes_reads_one_users_matches(store: MemoryStore) -> None:
    other_user = episode("a", user="u2", episode_id="e-a2")
    await store.insert_episodes("t", [episode("a"), episode("b"), other_user])
    wanted = [content_hash(n, "") for n in ("a", "b", "zzz", "a")]
    found = await store.find_by_hashes("t", "u1", wanted)
    assert {digest: e.episode_id for digest, e in found.items()} == {
        content_hash("a", ""): "e-a",
        content_hash("b", ""): "e-b",
    }
    assert await store.find_by_hashes("other", "u1", wanted) == {}


async def test_erase_user_deletes_episodes_facts_and_terms(store: MemoryStore) -> None:
    subject = ErasureSubject("u1")
    mine = [
        (await store.insert_episode("t", episode("tea-a", vector=[1, 0])))[0],
        (await store.insert_episode("t", episode("tea-b")))[0],  # no vector
    ]
    theirs = (await store.insert_episode("t", episode("tea-c", user="u2", vector=[0, 1])))[0]
    elsewhere = (await store.insert_episode("t2", episode("tea-a", vector=[1, 0])))[0]
    await store.apply_facts("t", batch("u1", FactDraft("Ann", "likes", "tea")))
    await store.apply_facts("t", batch("u1", FactDraft("Ann", "likes", "coffee")))
    await store.apply_facts("t", batch("u2", FactDraft("Bob", "likes", "tea")))
    await store.apply_facts("t2", batch("u1", FactDraft("Ann", "likes", "tea")))
    dry = await store.erase_user("t", subject, dry_run=True)
    assert dry.counts[("memory", "episodes")] == 2
    assert dry.counts[("memory", "facts")] == 2
    assert await store.get_episode("t", mine[0].episode_id, False) is not None
    real = await store.erase_user("t", subject, dry_run=False)
    assert real.counts == dry.counts
    for gone in mine:
        assert await store.get_episode("t", gone.episode_id, False) is None
    assert await store.load_vectors("t", "u1") is None
    assert (await store.lexical_matches("t", "u1", ["tea"], EpisodeFilter(), 10)).candidates == []
    everyone = FactQuery(user_id="u1", include_invalidated=True)
    assert await store.list_facts("t", everyone, NOW, None, 10) == []
    assert await store.get_episode("t", theirs.episode_id, False) is not None
    assert len((await store.lexical_matches("t", "u2", ["tea"], EpisodeFilter(), 10)).candidates)
    assert await store.get_episode("t2", elsewhere.episode_id, False) is not None
    assert len(await store.list_facts("t2", everyone, NOW, None, 10)) == 1
    assert ("t", "u1") not in await store.index_owners()
    if isinstance(store, PostgresMemoryStore):
        # The change log names the user nowhere; one row erases its keys.
        rows = await store.changes_after("t", 0, 100)
        assert not [row for row in rows if row.user_id == "u1"]
        erased_keys = tuple(sorted(e.vector_key for e in mine))
        assert [row.keys for row in rows if row.op == "erase"] == [erased_keys]
    assert (await store.erase_user("t", subject, dry_run=False)).total == 0
