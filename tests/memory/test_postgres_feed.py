"""The PostgreSQL change feed between two replicas in one process (each
with its own pool, store, feed and indexes, as separate servers have): the
paths the replica-process test does not reach — a lost listening connection,
a log pruned past a replica, a payload too long to carry its keys, and
importance changes from consolidation."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import asyncpg
import pytest

from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    Episode,
    FactBatch,
    FactDraft,
    FactOrigin,
    ValueSource,
    content_hash,
    unit_vector,
)
from statekeeper.memory_app import MemoryApp
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from tests.harness.deadlines import scaled
from tests.memory.production import postgres_memory_app
from tests.services import configured, fresh_database, reachable

TENANT = "alpha"
NOW = 1_700_000_000.0


@pytest.fixture
async def dsn() -> AsyncIterator[str]:
    services = configured()
    await reachable(services)
    async with fresh_database(services) as database:
        yield database


def episode(name: str, vector: list[float], user: str = "u1") -> Episode:
    embedding = unit_vector(vector)
    return Episode(
        episode_id=f"e-{name}",
        user_id=user,
        session_id="",
        user_message=name,
        assistant_response="",
        summary=name,
        summary_source=ValueSource.CLIENT,
        embedding_source=ValueSource.CLIENT,
        embedding_model="",
        importance=0.5,
        metadata={},
        occur_time=NOW,
        create_time=NOW,
        content_hash=content_hash(name, ""),
        dimension=len(embedding),
        embedding=embedding,
    )


def store_of(app: MemoryApp) -> PostgresMemoryStore:
    assert isinstance(app.store, PostgresMemoryStore)
    return app.store


async def eventually(check: Callable[[], bool], within: float = 3.0) -> float:
    """Seconds until `check()` holds, polling; fails after `within` seconds
    stretched by the machine's load (how fast is bench/'s business)."""
    started = time.monotonic()
    deadline = scaled(within)
    while not check():  # bounded by the deadline below
        assert time.monotonic() - started < deadline, "the change never arrived"
        await asyncio.sleep(0.01)
    return time.monotonic() - started


def vector_count(app: MemoryApp, user: str = "u1") -> int:
    stats = app.indexes.stats(TENANT, user)
    return 0 if stats is None else stats.vector_count


async def terminate_listeners(dsn: str) -> int:
    """Kills every change feed's listening connection (as a network cut or
    a PostgreSQL restart would); returns how many."""
    conn = await asyncpg.connect(dsn)
    try:
        killed = await conn.fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'statekeeper-memory-feed'"
        )
    finally:
        await conn.close()
    return len(killed)


async def test_a_replica_that_lost_its_listener_catches_up_from_the_log(dsn: str) -> None:
    slow = {"reconnect_initial_seconds": 0.5}
    async with (
        postgres_memory_app(dsn, **slow) as (one, _, _),
        postgres_memory_app(dsn, **slow) as (two, _, feed_two),
    ):
        await store_of(one).insert_episode(TENANT, episode("a", [1.0, 0.0]))
        await two.indexes.load_stats(TENANT, "u1")  # two holds u1's index
        assert await terminate_listeners(dsn) == 2
        await eventually(lambda: not feed_two.listening, within=1.0)
        # Written while two cannot hear it: only the log can bring it.
        await store_of(one).insert_episode(TENANT, episode("b", [0.0, 1.0]))
        await store_of(one).delete_episodes(TENANT, ["e-a"])
        await eventually(lambda: feed_two.reconnects == 1 and vector_count(two) == 1)
        search = await two.indexes.search(TENANT, "u1", unit_vector([0.0, 1.0]), 5, None)
        [found] = search.candidates
        [stored] = await store_of(one).get_episodes_by_keys(TENANT, "u1", [found.key], False)
        assert stored.episode_id == "e-b"
        assert feed_two.seen(TENANT) == 3  # add a, add b, remove a


async def test_a_replica_past_the_log_retention_rebuilds_the_tenant(dsn: str) -> None:
    slow = {"reconnect_initial_seconds": 0.5}
    async with (
        postgres_memory_app(dsn, **slow) as (one, _, _),
        postgres_memory_app(dsn, **slow) as (two, _, feed_two),
    ):
        await store_of(one).insert_episode(TENANT, episode("a", [1.0, 0.0]))
        await two.indexes.load_stats(TENANT, "u1")
        rebuilt_before = two.indexes.stats(TENANT, "u1")
        assert rebuilt_before is not None and rebuilt_before.vector_count == 1
        await terminate_listeners(dsn)
        await eventually(lambda: not feed_two.listening, within=1.0)
        await store_of(one).insert_episode(TENANT, episode("b", [0.0, 1.0]))
        assert await store_of(one).prune_changes(-3600) == 2  # everything, as if old
        await eventually(lambda: feed_two.reconnects == 1 and vector_count(two) == 2)
        after = two.indexes.stats(TENANT, "u1")
        assert after is not None and after.last_rebuild_time != rebuilt_before.last_rebuild_time


async def test_a_change_too_long_to_notify_with_its_keys_is_read_from_the_log(
    dsn: str,
) -> None:
    long_user = "u" * 8000  # the payload would exceed PostgreSQL's 8000 bytes
    async with (
        postgres_memory_app(dsn) as (one, _, _),
        postgres_memory_app(dsn) as (two, _, feed_two),
    ):
        await two.indexes.load_stats(TENANT, long_user)
        await store_of(one).insert_episode(TENANT, episode("a", [1.0, 0.0], user=long_user))
        await eventually(lambda: vector_count(two, long_user) == 1)
        assert feed_two.seen(TENANT) == 1


async def test_consolidation_on_one_replica_demotes_on_the_other(dsn: str) -> None:
    async with (
        postgres_memory_app(dsn) as (one, _, _),
        postgres_memory_app(dsn) as (two, _, _),
    ):
        stored = await store_of(one).insert_episodes(
            TENANT, [episode(n, [1.0, i]) for i, n in enumerate("abc")]
        )
        await two.indexes.load_stats(TENANT, "u1")
        assert two.indexes.ranking_ceiling(TENANT, "u1")[0] == pytest.approx(0.5)
        facts = FactBatch("u1", (FactDraft("u1", "likes", "x"),), ("f-1",), FactOrigin.CLIENT, NOW)
        plan = ConsolidationPlan("u1", tuple(e.episode_id for e in stored), facts, 0.3)
        assert await store_of(one).consolidate(TENANT, plan)
        await eventually(
            lambda: two.indexes.ranking_ceiling(TENANT, "u1")[0] == pytest.approx(0.15)
        )


async def test_feeds_skip_their_own_changes_and_users_they_do_not_hold(dsn: str) -> None:
    async with (
        postgres_memory_app(dsn) as (one, _, feed_one),
        postgres_memory_app(dsn) as (two, _, feed_two),
    ):
        seen: list[str] = []
        feed_one.subscribe(lambda change: seen.append(f"one:{change.user_id}"))
        feed_two.subscribe(lambda change: seen.append(f"two:{change.user_id}"))
        await two.indexes.load_stats(TENANT, "u1")
        await store_of(one).insert_episode(TENANT, episode("a", [1.0, 0.0], user="u1"))
        await store_of(one).insert_episode(TENANT, episode("b", [1.0, 0.0], user="u2"))
        await eventually(lambda: feed_one.seen(TENANT) == 2 and feed_two.seen(TENANT) == 2)
        # one made both changes (its domain publishes them in process); two
        # holds only u1's index, so it reads and applies only that one.
        assert seen == ["two:u1"]


async def test_the_feed_resumes_after_postgres_restarts(dsn: str) -> None:
    services = configured()
    if not services.directory or not services.script:
        pytest.skip("the services were not started by scripts/services.sh")
    async with (
        postgres_memory_app(dsn) as (one, _, _),
        postgres_memory_app(dsn, reconnect_max_seconds=0.5) as (two, _, feed_two),
    ):
        await two.indexes.load_stats(TENANT, "u1")
        await asyncio.to_thread(services.control, "stop-postgres")
        try:
            await eventually(lambda: not feed_two.listening, within=5.0)
        finally:
            await asyncio.to_thread(services.control, "start-postgres")
        await eventually(lambda: feed_two.reconnects >= 1, within=15.0)
        for attempt in range(50):  # bounded: the first calls may meet dead pooled connections
            try:
                await store_of(one).insert_episode(TENANT, episode("a", [1.0, 0.0]))
                break
            except StorageUnavailableError:
                await asyncio.sleep(0.1 * attempt)
        lag = await eventually(lambda: vector_count(two) == 1, within=1.0)
        print(
            f"after a PostgreSQL restart, a change reached the other replica in {lag * 1000:.0f} ms"
        )


async def test_the_feed_prunes_the_log_past_its_retention(dsn: str) -> None:
    async with postgres_memory_app(dsn, retention_seconds=0.0, prune_interval_seconds=0.05) as (
        one,
        _,
        _,
    ):
        store = store_of(one)
        await store.insert_episode(TENANT, episode("a", [1.0, 0.0]))
        assert len(await store.changes_after(TENANT, 0, 10)) == 1
        started = time.monotonic()
        while await store.changes_after(TENANT, 0, 10):  # bounded by the deadline
            assert time.monotonic() - started < scaled(3.0), "the log was never pruned"
            await asyncio.sleep(0.05)
        assert await store.change_heads() == {TENANT: 1}  # numbers are never reused


async def test_an_import_reaches_every_replica_the_importing_one_too(dsn: str) -> None:
    async with (
        postgres_memory_app(dsn) as (one, _, _),
        postgres_memory_app(dsn) as (two, _, _),
    ):
        await one.indexes.load_stats(TENANT, "u1")
        await two.indexes.load_stats(TENANT, "u1")
        await store_of(one).insert_episodes(
            TENANT, [episode("a", [1.0, 0.0]), episode("b", [0.0, 1.0])]
        )
        await eventually(lambda: vector_count(one) == 2 and vector_count(two) == 2)
