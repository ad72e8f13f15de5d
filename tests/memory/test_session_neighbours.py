"""Session neighbours in both memory stores (MemoryStore.neighbours, which
hybrid and lexical recall use to lift the turn after a question): episodes
of one session are linked to the one recorded just before and just after
them, and an episode recorded without a session (session_id '') has no
neighbours at all: a user's sessionless episodes are not one conversation."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.memory.store import MemoryStore
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.memory.test_postgres_feed import episode
from tests.services import configured, fresh_database, reachable


@pytest.fixture(params=["embedded", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryStore]:
    if request.param == "embedded":
        embedded = EmbeddedStorage(tmp_path)
        await embedded.start()
        try:
            yield EmbeddedMemoryStore(embedded)
        finally:
            await embedded.close()
        return
    services = configured()
    await reachable(services)
    async with fresh_database(services) as dsn:
        storage = PostgresStorage(dsn, pool_size=2, migrate_on_start=True)
        await storage.start()
        try:
            postgres = PostgresMemoryStore(storage)
            await postgres.start()
            yield postgres
        finally:
            await storage.close()


async def _keys(store: MemoryStore, sessions: list[tuple[str, str]]) -> list[int]:
    """Records one episode per (name, session_id), in order; their keys."""
    keys = []
    for name, session in sessions:
        drafted = dataclasses.replace(episode(name, [1.0, 0.0]), session_id=session)
        stored, _ = await store.insert_episode("t", drafted)
        keys.append(stored.vector_key)
    return keys


async def test_sessionless_episodes_have_no_neighbours(store: MemoryStore) -> None:
    loose_a, first, loose_b, second, loose_c, third = await _keys(
        store,
        [("a", ""), ("q", "s1"), ("b", ""), ("r", "s1"), ("c", ""), ("s", "s1")],
    )
    links = await store.neighbours("t", "u1", [loose_a, loose_b, loose_c, second])
    assert {(n.key, n.neighbour_key, n.after) for n in links} == {
        (second, first, False),
        (second, third, True),
    }
