"""The ItemStore's erase_user (core/items/store.py), on both backends: SQLite
and PostgreSQL (skipped, with the reason printed, without the test
services)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.items.models import ItemRecord
from statekeeper.core.items.store import ItemStore
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.storage.embedded.items import EmbeddedItemStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.items import PostgresItemStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.services import configured, reachable

NOW = 1_700_000_000.0


@pytest.fixture(params=["embedded", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ItemStore]:
    if request.param == "embedded":
        storage = EmbeddedStorage(tmp_path)
        await storage.start()
        embedded = EmbeddedItemStore(storage)
        await embedded.start()
        yield embedded
        await embedded.close()
        await storage.close()
        return
    services = configured()
    await reachable(services)
    db = PostgresStorage(services.postgres_dsn, pool_size=2, migrate_on_start=True)
    await db.start()
    postgres = PostgresItemStore(db)
    await postgres.start()
    yield postgres
    await postgres.close()
    await db.close()


def item(*namespace: str, key: str = "k", expire_time: float | None = None) -> ItemRecord:
    return ItemRecord(tuple(namespace), key, '{"v": 1}', NOW, NOW, expire_time=expire_time)


async def test_erase_user_deletes_items_under_the_users_namespaces(store: ItemStore) -> None:
    t, other = f"t-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:8]}"
    subject = ErasureSubject("u1", item_namespaces=(("memories", "u1"),))
    for record in [
        item("users", "u1"),
        item("users", "u1", "prefs", key="a"),
        item("users", "u1", "prefs", key="b", expire_time=NOW - 1),  # expired, still stored
        item("memories", "u1", "x"),
        item("users", "u10", "prefs"),  # another user whose id starts alike
        item("users", "u2"),
        item("memories", "u1x"),
    ]:
        await store.put(t, record, NOW - 10)
    await store.put(other, item("users", "u1"), NOW)
    dry = await store.erase_user(t, subject, dry_run=True)
    assert dry.counts == {("items", "items"): 4}
    assert await store.get(t, ("users", "u1"), "k", NOW) is not None
    real = await store.erase_user(t, subject, dry_run=False)
    assert real.counts == dry.counts
    assert await store.namespaces(t, ("users", "u1"), NOW) == []
    assert await store.namespaces(t, ("memories", "u1"), NOW) == []
    assert set(await store.namespaces(t, (), NOW)) == {
        ("users", "u10", "prefs"),
        ("users", "u2"),
        ("memories", "u1x"),
    }
    assert await store.get(other, ("users", "u1"), "k", NOW) is not None
    assert (await store.erase_user(t, subject, dry_run=False)).total == 0
