"""PostgreSQL memory store specifics the shared contract cannot see: audit
rows share the transaction of the change (a refused change leaves none),
and the vector change log the feed reads (per-tenant gap-free sequence,
chunked keys, only embedded episodes)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    DimensionMismatchError,
    FactBatch,
    FactDraft,
    FactOrigin,
    Predicate,
)
from statekeeper.storage.postgres.memory import (
    CHANGE_CHUNK,
    OP_ADD,
    OP_RANK,
    OP_REMOVE,
    PostgresMemoryStore,
)
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.memory.test_postgres_feed import NOW, episode
from tests.services import configured, fresh_database, reachable

AUDIT = AuditRecord("t", "key-1", "MemoryService", "Test", "", "", 0, NOW, "")


@pytest.fixture
async def db() -> AsyncIterator[PostgresStorage]:
    services = configured()
    await reachable(services)
    async with fresh_database(services) as dsn:
        storage = PostgresStorage(dsn, pool_size=4, migrate_on_start=True)
        await storage.start()
        try:
            yield storage
        finally:
            await storage.close()


async def audit_of(db: PostgresStorage) -> list[tuple[str, str, str]]:
    records = await db.audit.list_audit("t", AuditFilter(), 0, 100)
    return [(r.entity_type, r.entity_id, r.summary) for r in reversed(records)]


async def test_audit_rows_commit_with_the_change_and_only_then(db: PostgresStorage) -> None:
    store = PostgresMemoryStore(db)
    await store.start()
    await store.start()  # idempotent
    await store.insert_episode("t", episode("a", [1.0, 0.0]), AUDIT)
    await store.insert_episode("t", episode("a", [1.0, 0.0]), AUDIT)  # duplicate: no change
    with pytest.raises(DimensionMismatchError):
        await store.insert_episode("t", episode("b", [1.0, 0.0, 0.0]), AUDIT)
    await store.declare_predicate("t", Predicate("lives_in", True, "", NOW, NOW), AUDIT)
    facts = FactBatch(
        "u1",
        (FactDraft("Ann", "lives_in", "Oslo"), FactDraft("Ann", "lives_in", "Rome")),
        ("f-1", "f-2"),
        FactOrigin.CLIENT,
        NOW,
    )
    await store.apply_facts("t", facts, AUDIT)
    await store.invalidate_fact("t", "f-2", "moved", None, NOW + 1, AUDIT)
    await store.delete_episodes("t", ["e-a", "e-missing"], AUDIT)
    assert await audit_of(db) == [
        ("episode", "e-a", "recorded"),
        ("predicate", "lives_in", "declared single-valued"),
        ("fact", "f-1", "created"),
        ("fact", "f-2", "created"),
        ("fact", "f-1", "contradicted by f-2"),
        ("fact", "f-2", "invalidated: moved"),
        ("episode", "e-a", "deleted"),
    ]


async def test_every_vector_change_is_logged_in_order(db: PostgresStorage) -> None:
    store = PostgresMemoryStore(db, origin="replica-1")
    await store.start()
    many = [episode(f"m{n}", [1.0, n]) for n in range(CHANGE_CHUNK + 1)]
    stored = await store.insert_episodes(
        "t",
        [
            *many,
            episode("plain", [1.0, 0.0]).evolve(dimension=0, embedding=None, content_hash="plain"),
        ],
    )
    cluster = tuple(e.episode_id for e in stored[:3])
    facts = FactBatch("u1", (FactDraft("u1", "likes", "x"),), ("f-1",), FactOrigin.CLIENT, NOW)
    await store.consolidate("t", ConsolidationPlan("u1", cluster, facts, 0.3))
    await store.delete_episodes("t", [stored[0].episode_id, "plain"])
    await store.insert_episode("other", episode("z", [1.0, 0.0]))
    rows = await store.changes_after("t", 0, 100)
    assert [(r.seq, r.op, len(r.keys)) for r in rows] == [
        (1, OP_ADD, CHANGE_CHUNK),  # the import, in chunks
        (2, OP_ADD, 1),
        (3, OP_RANK, 3),
        (4, OP_REMOVE, 1),  # the episode without a vector is not in any index
    ]
    assert rows[3].keys == (stored[0].vector_key,)
    # Imports are not published in process: every feed, this one's too,
    # must apply them, so they carry no origin.
    assert [r.origin for r in rows] == ["", "", "replica-1", "replica-1"]
    assert await store.change_heads() == {"t": 4, "other": 1}
    assert await store.changes_after("t", 2, 1) == [rows[2]]
    assert await store.prune_changes(3600) == 0  # nothing is an hour old
