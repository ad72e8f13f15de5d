"""The Redis cache protocol (storage/production.py) step by step, with two
"replicas" (two production stores) on one PostgreSQL database and one Redis,
forcing the interleavings that would serve a stale read without it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as redis_asyncio

from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper.core.sessions.models import (
    ChangeKind,
    SessionChange,
    SessionRecord,
    SessionVersion,
)
from statekeeper.storage.codec import record_to_json
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.redis.cache import SessionCache
from tests.services import Services, configured, fresh_database, reachable

T = "tenant"


@pytest.fixture
async def replicas() -> AsyncIterator[tuple[ProductionStorage, ProductionStorage, Services]]:
    services = configured()
    await reachable(services)
    prefix = f"proto-{uuid.uuid4().hex[:8]}"
    async with fresh_database(services) as dsn:
        stores = [
            ProductionStorage(
                PostgresStorage(dsn, pool_size=4, migrate_on_start=True),
                SessionCache(services.redis_url, prefix=prefix),
            )
            for _ in range(2)
        ]
        for store in stores:
            await store.start()
        yield stores[0], stores[1], services
        for store in stores:
            await store.close()


def first(session_id: str, create_time: float = 1.0) -> SessionVersion:
    record = SessionRecord(session_id=session_id, user_id="u", version=1, create_time=create_time)
    return SessionVersion(1, 0, ChangeKind.CREATE, create_time, record)


def bump(current: SessionRecord) -> SessionChange:
    record = current.evolve(version=current.version + 1, metadata={"v": str(current.version + 1)})
    version = SessionVersion(record.version, current.version, ChangeKind.UPDATE, 0.0, record)
    return SessionChange(current.version, record, version)


async def version_of(store: ProductionStorage, session_id: str) -> int:
    record = await store.sessions.get_session(T, session_id)
    assert record is not None
    return record.version


async def test_reader_that_read_before_a_write_cannot_backfill(
    replicas: tuple[ProductionStorage, ProductionStorage, Services],
) -> None:
    a, b, _ = replicas
    assert a.cache is not None and b.cache is not None
    await a.sessions.create_session(T, first("s"))
    missed, token = await b.cache.read(T, "s")
    assert missed is None and token
    old = await b.durable.sessions.get_session(T, "s")  # B reads PostgreSQL: version 1
    assert old is not None
    await a.sessions.apply_change(T, bump(old))  # A commits version 2 and acknowledges
    await b.cache.backfill(T, "s", token, old)  # B's late backfill of version 1
    assert await version_of(b, "s") == 2
    assert await version_of(a, "s") == 2


async def test_flushall_between_read_and_backfill(
    replicas: tuple[ProductionStorage, ProductionStorage, Services],
) -> None:
    a, b, services = replicas
    assert b.cache is not None
    await a.sessions.create_session(T, first("s"))
    _, token = await b.cache.read(T, "s")
    old = await b.durable.sessions.get_session(T, "s")
    assert old is not None
    await a.sessions.apply_change(T, bump(old))
    await redis_asyncio.from_url(services.redis_url).flushall()
    await b.cache.backfill(T, "s", token, old)
    assert await version_of(b, "s") == 2


async def test_write_through_updates_the_other_replicas_view(
    replicas: tuple[ProductionStorage, ProductionStorage, Services],
) -> None:
    a, b, _ = replicas
    assert b.cache is not None
    await a.sessions.create_session(T, first("s"))
    current = await b.sessions.get_session(T, "s")  # cached by B's read
    assert current is not None
    for _ in range(5):
        await a.sessions.apply_change(T, bump(current))
        cached, _ = await b.cache.read(T, "s")
        assert cached is not None, "the write should leave a fresh entry, not a miss"
        assert cached.version == current.version + 1
        current = cached


async def test_a_replica_reads_the_other_replicas_write_not_its_own_last_one(
    replicas: tuple[ProductionStorage, ProductionStorage, Services],
) -> None:
    """A replica remembers the records it wrote, to skip decoding them when
    it reads them back; what another replica wrote since must win."""
    a, b, _ = replicas
    await a.sessions.create_session(T, first("s"))
    current = await a.sessions.get_session(T, "s")
    assert current is not None
    for writer, reader in ((a, b), (b, a), (a, a), (b, b)):
        await writer.sessions.apply_change(T, bump(current))
        assert reader.cache is not None
        found, _ = await reader.cache.read(T, "s")
        assert found is not None and found.version == current.version + 1
        assert found.metadata == {"v": str(found.version)}
        current = found


async def test_late_write_through_cannot_resurrect_a_deleted_session(
    replicas: tuple[ProductionStorage, ProductionStorage, Services],
) -> None:
    a, b, _ = replicas
    assert a.cache is not None
    await a.sessions.create_session(T, first("s", create_time=1.0))
    old = await a.sessions.get_session(T, "s")
    assert old is not None
    token = await a.cache.begin_write(T, "s")
    change = bump(old)
    await a.durable.sessions.apply_change(T, change)  # A commits v2, then stalls
    await b.sessions.delete_session(T, "s", 0)
    await b.sessions.create_session(T, first("s", create_time=2.0))  # a new incarnation
    assert await version_of(b, "s") == 1  # cached by B
    await a.cache.finish_write(T, "s", token, change.record)  # A's late post-commit step
    fresh = await b.sessions.get_session(T, "s")
    assert fresh is not None and (fresh.create_time, fresh.version) == (2.0, 1)


async def test_entries_from_an_earlier_redis_boot_are_ignored(
    replicas: tuple[ProductionStorage, ProductionStorage, Services],
) -> None:
    a, _, services = replicas
    await a.sessions.create_session(T, first("s"))
    assert await version_of(a, "s") == 1  # now cached
    assert a.cache is not None
    client = redis_asyncio.from_url(services.redis_url)
    key = a.cache.keys(T, "s")[0]
    assert await client.exists(key)
    stale = SessionRecord(session_id="s", user_id="u", version=0, create_time=1.0)
    # As if restored from an RDB file written by an earlier Redis process.
    await client.hset(key, mapping={"boot": "0" * 40, "ver": "0", "rec": record_to_json(stale)})
    assert await version_of(a, "s") == 1


async def test_concurrent_sweeps_on_two_replicas_delete_and_audit_once(
    replicas: tuple[ProductionStorage, ProductionStorage, Services],
) -> None:
    a, b, _ = replicas
    for n in range(40):
        version = first(f"e{n}")
        record = version.snapshot.evolve(expire_time=10.0)
        await a.sessions.create_session(T, SessionVersion(1, 0, ChangeKind.CREATE, 1.0, record))
    extended = first("kept").snapshot.evolve(expire_time=10.0)
    await a.sessions.create_session(T, SessionVersion(1, 0, ChangeKind.CREATE, 1.0, extended))
    change = bump(extended)
    await b.sessions.apply_change(
        T, SessionChange(1, change.record.evolve(expire_time=None), change.version)
    )
    template = AuditRecord("", "system", "statekeeper.internal", "Sweep", "session", "", 0, 5, "x")
    counts = await asyncio.gather(
        *(store.sessions.delete_expired_sessions(100.0, 7, template) for store in (a, b, a, b))
    )
    while (more := await a.sessions.delete_expired_sessions(100.0, 7, template)) > 0:
        counts.append(more)
    assert sum(counts) == 40
    swept = await a.audit.list_audit(T, AuditFilter(method="Sweep"), 0, 1000)
    assert sorted(r.entity_id for r in swept) == sorted(f"e{n}" for n in range(40))
    assert await version_of(b, "kept") == 2
