"""The embedded store's cache of episodes read by key (what Recall reads for
its top k) never answers with what a commit changed or removed: deletes,
consolidation, erasure and writes of another connection (an import beside
the server, the archive) are seen by the next read; rows read before a
commit are not kept under the version after it; and a delete or erasure
leaves no content of the episodes in the cache. Through gRPC, on both
backends, an episode deleted under the index (its key still indexed) is
never recalled."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path

import pytest

from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    Episode,
    FactBatch,
    FactDraft,
    FactOrigin,
)
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.storage.embedded.memory import (
    _CACHED_EPISODE_BYTES,
    _INLINE_READ_BYTES,
    EmbeddedMemoryStore,
    _content_bytes,
    _EpisodeCache,
)
from statekeeper.storage.embedded.sessions import DATABASE_FILE, EmbeddedStorage
from statekeeper_client.v1 import memory_pb2 as pb
from tests.harness.memory import Backend, auth
from tests.memory.data import episodes_for, gaussian

NOW = 1_700_000_000.0
TENANT = "t"
USER = "u1"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedMemoryStore]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    memory = EmbeddedMemoryStore(storage)
    await memory.start()
    yield memory
    await storage.close()


async def stored_episodes(store: EmbeddedMemoryStore, count: int = 6) -> list[Episode]:
    return await store.insert_episodes(
        TENANT, episodes_for(USER, gaussian(count, 4, seed=3), NOW, "a")
    )


async def read(store: EmbeddedMemoryStore, episodes: list[Episode]) -> dict[str, Episode]:
    keys = [e.vector_key for e in episodes]
    return {e.episode_id: e for e in await store.get_episodes_by_keys(TENANT, USER, keys, False)}


def cached_count(store: EmbeddedMemoryStore) -> int:
    return len(store._cache._entries)


def other_connection(tmp_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(tmp_path / DATABASE_FILE, isolation_level=None, timeout=10)


async def test_repeated_reads_are_cached_and_equal(store: EmbeddedMemoryStore) -> None:
    episodes = await stored_episodes(store)
    first = await read(store, episodes)
    assert cached_count(store) == len(episodes)
    again = await read(store, episodes)
    assert again == first and set(first) == {e.episode_id for e in episodes}
    # Another user's or tenant's keys are not answered from this user's entries.
    keys = [e.vector_key for e in episodes]
    assert await store.get_episodes_by_keys(TENANT, "someone-else", keys, False) == []
    assert await store.get_episodes_by_keys("other-tenant", USER, keys, False) == []


async def test_a_delete_is_seen_and_drops_the_cached_content(
    store: EmbeddedMemoryStore,
) -> None:
    episodes = await stored_episodes(store)
    await read(store, episodes)
    await store.delete_episodes(TENANT, [episodes[0].episode_id])
    assert cached_count(store) == 0  # no deleted content kept in memory
    assert episodes[0].episode_id not in await read(store, episodes)
    assert len(await read(store, episodes)) == len(episodes) - 1


async def test_consolidation_is_seen(store: EmbeddedMemoryStore) -> None:
    episodes = await stored_episodes(store)
    before = await read(store, episodes)
    ids = tuple(e.episode_id for e in episodes[:2])
    facts = FactBatch(
        USER, (FactDraft(USER, "likes", "cats"),), ("f-1",), FactOrigin.CONSOLIDATION, NOW
    )
    await store.consolidate(TENANT, ConsolidationPlan(USER, ids, facts, 0.5))
    after = await read(store, episodes)
    for episode_id in ids:
        assert after[episode_id].importance == pytest.approx(before[episode_id].importance * 0.5)
        assert after[episode_id].derived_fact_ids == ("f-1",)
        assert after[episode_id].consolidate_time == NOW


async def test_erasure_is_seen_and_leaves_nothing_cached(store: EmbeddedMemoryStore) -> None:
    episodes = await stored_episodes(store)
    await read(store, episodes)
    await store.erase_user(TENANT, ErasureSubject(USER), dry_run=False)
    assert cached_count(store) == 0
    assert await read(store, episodes) == {}


async def test_another_connections_writes_are_seen(
    store: EmbeddedMemoryStore, tmp_path: Path
) -> None:
    episodes = await stored_episodes(store)
    await read(store, episodes)
    db = other_connection(tmp_path)
    try:
        db.execute(
            "UPDATE memory_episodes SET summary = 'rewritten' WHERE vector_key = ?",
            (episodes[1].vector_key,),
        )
        assert (await read(store, episodes))[episodes[1].episode_id].summary == "rewritten"
        db.execute("DELETE FROM memory_episodes WHERE vector_key = ?", (episodes[2].vector_key,))
        assert episodes[2].episode_id not in await read(store, episodes)
    finally:
        db.close()


async def test_rows_read_before_a_commit_are_not_kept_after_it(
    store: EmbeddedMemoryStore, tmp_path: Path
) -> None:
    episodes = await stored_episodes(store)
    cache = _EpisodeCache(store._backend)
    version = cache.version()
    assert version is not None
    db = other_connection(tmp_path)
    try:  # a commit between the version read and the rows' arrival
        db.execute("UPDATE memory_episodes SET summary = 'newer'")
    finally:
        db.close()
    keys = [e.vector_key for e in episodes]
    cache.fill(version, TENANT, USER, episodes)
    assert cache.lookup(TENANT, USER, keys)[:2] == ([], keys)
    # Stamped with the current version, the same rows are kept.
    cache.fill(cache.version(), TENANT, USER, episodes)
    assert cache.lookup(TENANT, USER, keys)[:2] == (episodes, [])


async def test_the_cache_keeps_at_most_its_capacity(
    store: EmbeddedMemoryStore, tmp_path: Path
) -> None:
    episodes = await stored_episodes(store, count=5)
    cache = _EpisodeCache(store._backend, capacity=3)
    cache.fill(cache.version(), TENANT, USER, episodes)
    assert len(cache._entries) == 3
    # The newest entries stay: the last three keys are answered.
    last = [e.vector_key for e in episodes[2:]]
    assert cache.lookup(TENANT, USER, last)[:2] == (episodes[2:], [])
    first = episodes[0].vector_key
    assert cache.lookup(TENANT, USER, [first])[:2] == ([], [first])


async def test_the_least_recently_used_entry_goes_first(store: EmbeddedMemoryStore) -> None:
    episodes = await stored_episodes(store, count=4)
    cache = _EpisodeCache(store._backend, capacity=3)
    cache.fill(cache.version(), TENANT, USER, episodes[:3])
    oldest, second = episodes[0].vector_key, episodes[1].vector_key
    assert cache.lookup(TENANT, USER, [oldest])[0] == [episodes[0]]  # used again
    cache.fill(cache.version(), TENANT, USER, episodes[3:])
    assert cache.lookup(TENANT, USER, [oldest])[0] == [episodes[0]]
    assert cache.lookup(TENANT, USER, [second])[:2] == ([], [second])


async def test_a_partly_cached_read_reads_only_the_others_and_answers_all(
    store: EmbeddedMemoryStore,
) -> None:
    episodes = await stored_episodes(store, count=6)
    keys = [e.vector_key for e in episodes]
    await store.get_episodes_by_keys(TENANT, USER, keys[1:3], False)
    assert cached_count(store) == 2
    # Asked in any order, answered by ascending key, equal to the stored rows.
    found = await store.get_episodes_by_keys(TENANT, USER, keys[::-1], False)
    assert [e.vector_key for e in found] == sorted(keys)
    stored = await store._run(store._by_keys_work(TENANT, USER, sorted(keys), False))
    assert list(map(asdict, found)) == list(map(asdict, stored))
    assert cached_count(store) == len(episodes)


async def test_a_read_of_large_episodes_leaves_the_event_loop(store: EmbeddedMemoryStore) -> None:
    """The read on the event loop gives up once the rows' content passes its
    byte limit; the reader thread then reads them, and they are all answered."""
    texts = ["x" * (_INLINE_READ_BYTES // 3)] * 4
    drafts = [
        d.evolve(user_message=text)
        for d, text in zip(
            episodes_for(USER, gaussian(4, 4, seed=5), NOW, "big"), texts, strict=True
        )
    ]
    large = await store.insert_episodes(TENANT, drafts)
    keys = [e.vector_key for e in large]
    store._cache.clear()

    def inline_read(count: int) -> list[Episode] | None:
        work = store._bounded_by_keys_work(TENANT, USER, keys[:count], _INLINE_READ_BYTES)
        return store._backend.read_inline(work)

    assert inline_read(4) is None  # over the limit: given up
    assert [e.vector_key for e in inline_read(2) or []] == keys[:2]  # under it: read
    found = await store.get_episodes_by_keys(TENANT, USER, keys, False)
    assert [e.user_message for e in found] == texts
    assert cached_count(store) == 0  # each over _CACHED_EPISODE_BYTES


# ----- through gRPC, both backends ---------------------------------------------


async def recalled_ids(backend: Backend, vector: list[float]) -> list[str]:
    reply = await backend.memory.Recall(
        pb.RecallRequest(
            user_id=USER,
            query_vector=pb.QueryVector(values=vector),
            top_k=10,
            weights=pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0),
        ),
        metadata=auth(),
    )
    return [r.episode.id for r in reply.results]


async def test_an_episode_deleted_under_the_index_is_never_recalled(backend: Backend) -> None:
    vectors = gaussian(4, 8, seed=7)
    ids = []
    for row, vector in enumerate(vectors):
        reply = await backend.memory.RecordEpisode(
            pb.RecordEpisodeRequest(
                user_id=USER, user_message=f"m{row}", embedding=vector.tolist()
            ),
            metadata=auth(),
        )
        ids.append(reply.episode.id)
    query = vectors[0].tolist()
    assert (await recalled_ids(backend, query))[0] == ids[0]
    assert (await recalled_ids(backend, query))[0] == ids[0]  # warm
    # Deleted in the store alone: the index still holds its key (as while a
    # delete's change is on its way to a replica), so only the read of the
    # hits can leave it out.
    deleted = await backend.app.store.delete_episodes("alpha", [ids[0]])
    assert [e.episode_id for e in deleted] == [ids[0]]
    assert await backend.app.indexes.dimension("alpha", USER) == 8
    recalled = await recalled_ids(backend, query)
    assert ids[0] not in recalled and set(recalled) == set(ids[1:])
    # Through the API: the index drops it too.
    await backend.memory.DeleteEpisode(pb.DeleteEpisodeRequest(episode_id=ids[1]), metadata=auth())
    assert set(await recalled_ids(backend, query)) == set(ids[2:])


async def test_reads_fall_back_to_a_reader_thread_when_the_loop_connection_fails(
    store: EmbeddedMemoryStore, tmp_path: Path
) -> None:
    episodes = await stored_episodes(store)
    store._cache.clear()
    broken = sqlite3.connect(":memory:")
    broken.close()
    store._backend._inline = broken  # every statement on it fails
    assert store._backend.read_inline(lambda db: db.execute("SELECT 1").fetchone()) is None
    found = await read(store, episodes)  # read on a reader thread instead
    assert set(found) == {e.episode_id for e in episodes}
    assert cached_count(store) == 0  # and nothing is cached without a version


async def test_the_cache_keeps_at_most_its_byte_budget_and_no_large_episode(
    store: EmbeddedMemoryStore,
) -> None:
    """A few large episodes must not take the room of hundreds of turns: an
    episode over _CACHED_EPISODE_BYTES is read each time, and the oldest
    entries go once the content passes the budget."""
    episodes = await stored_episodes(store, count=4)
    large = episodes[0].evolve(user_message="x" * _CACHED_EPISODE_BYTES)
    newest_two = sum(map(_content_bytes, episodes[2:]))
    cache = _EpisodeCache(store._backend, budget=newest_two)
    cache.fill(cache.version(), TENANT, USER, [large])
    assert cache.lookup(TENANT, USER, [large.vector_key])[0] == []
    assert cache._bytes == 0
    cache.fill(cache.version(), TENANT, USER, episodes[1:])
    assert cache._bytes == newest_two
    assert cache.lookup(TENANT, USER, [e.vector_key for e in episodes[2:]])[0] == episodes[2:]
    assert cache.lookup(TENANT, USER, [episodes[1].vector_key])[0] == []


async def test_a_closed_store_answers_no_read_from_the_cache(tmp_path: Path) -> None:
    """After close, a read by key fails as every read of a closed store does
    (the cache's connection is closed with the store), cached or not."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    memory = EmbeddedMemoryStore(storage)
    await memory.start()
    episodes = await stored_episodes(memory)
    await read(memory, episodes)
    assert cached_count(memory) == len(episodes)
    await storage.close()
    assert storage._inline is None
    with pytest.raises(StorageUnavailableError):
        await read(memory, episodes)
