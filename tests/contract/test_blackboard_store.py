"""The BlackboardStore and BlackboardEventFeed contract
(core/blackboard/store.py), checked on every backend.

Backends register in BLACKBOARD_BACKENDS: an async context manager that
yields a started store:

* embedded:   SQLite plus the in-process feed;
* production: PostgreSQL plus the Redis Streams feed;
* postgres:   PostgreSQL with no Redis (the feed falls back to polling).

The PostgreSQL backends are skipped with the reason printed when the test
services are not running (tests/services.py).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from statekeeper.core.blackboard.keys import KeyMatcher, compile_glob
from statekeeper.core.blackboard.models import (
    BlackboardLimits,
    Decision,
    Entry,
    Event,
    EventType,
    MutationOutcome,
    MutationView,
    RevisionBatch,
    RevisionCompactedError,
    Value,
    tombstone,
)
from statekeeper.core.blackboard.store import BlackboardStore
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.blackboard import PostgresBlackboardStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.services import configured, reachable

NOW = 1_700_000_000.0
ALL = KeyMatcher()


@asynccontextmanager
async def _embedded(tmp_path: Path) -> AsyncIterator[BlackboardStore]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedBlackboardStore(storage)
    await store.start()
    try:
        yield store
    finally:
        await store.close()
        await storage.close()


@asynccontextmanager
async def _on_postgres(tmp_path: Path, with_redis: bool) -> AsyncIterator[BlackboardStore]:
    services = configured()
    await reachable(services)
    db = PostgresStorage(services.postgres_dsn, pool_size=4, migrate_on_start=True)
    await db.start()
    redis_url = services.redis_url if with_redis else None
    store = PostgresBlackboardStore(db, redis_url, prefix=f"contract-{tmp_path.name}")
    await store.start()
    try:
        yield store
    finally:
        await store.close()
        await db.close()


def _production(tmp_path: Path) -> AbstractAsyncContextManager[BlackboardStore]:
    return _on_postgres(tmp_path, with_redis=True)


def _postgres(tmp_path: Path) -> AbstractAsyncContextManager[BlackboardStore]:
    return _on_postgres(tmp_path, with_redis=False)


BLACKBOARD_BACKENDS: dict[str, Callable[[Path], AbstractAsyncContextManager[BlackboardStore]]] = {
    "embedded": _embedded,
    "production": _production,
    "postgres": _postgres,
}


@pytest.fixture(params=sorted(BLACKBOARD_BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BlackboardStore]:
    async with BLACKBOARD_BACKENDS[request.param](tmp_path) as backend:
        yield backend


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def put(board: str, key: str, data: bytes = b"v", expire_time: float | None = None) -> object:
    """A decision that puts `key` as the domain would."""

    def decide(view: MutationView) -> Decision[Entry]:
        current = view.entries.get(key)
        entry = Entry(
            board,
            key,
            Value.payload(data),
            current.create_revision if current else view.revision,
            view.revision,
            current.version + 1 if current else 1,
            expire_time=expire_time,
            update_time=view.now,
        )
        return Decision((Event(EventType.PUT, entry, current),), entry)

    return decide


def delete(board: str, key: str) -> object:
    def decide(view: MutationView) -> Decision[bool]:
        current = view.entries.get(key)
        if current is None:
            return Decision((), False)
        gone = tombstone(board, key, view.revision, view.now)
        return Decision((Event(EventType.DELETE, gone, current),), True)

    return decide


async def write(
    store: BlackboardStore, t: str, board: str, key: str, data: bytes = b"v", **kw: object
) -> int:
    outcome: MutationOutcome[Entry] = await store.mutate(
        t,
        board,
        [key],
        kw.pop("now", NOW),  # type: ignore[arg-type]
        put(board, key, data, **kw),  # type: ignore[arg-type]
    )
    return outcome.header.revision


async def remove(store: BlackboardStore, t: str, board: str, key: str) -> int:
    outcome: MutationOutcome[bool] = await store.mutate(t, board, [key], NOW, delete(board, key))  # type: ignore[arg-type]
    return outcome.header.revision


# ----- mutations --------------------------------------------------------------------


async def test_revisions_are_consecutive_per_tenant_across_boards(store: BlackboardStore) -> None:
    t = tenant()
    assert (await store.header(t)).revision == 0
    assert (await store.header(t)).oldest_revision == 1
    assert [await write(store, t, board, "k") for board in ("a", "b", "a")] == [1, 2, 3]
    assert await write(store, tenant(), "a", "k") == 1
    concurrent = await asyncio.gather(*(write(store, t, "c", f"k{i}") for i in range(30)))
    assert sorted(concurrent) == list(range(4, 34))


async def test_concurrent_decisions_each_see_the_ones_before_them(store: BlackboardStore) -> None:
    """Stores may commit concurrent mutations together (group commit): each
    decision must still see every change committed before it, a refusal
    must fail alone, and the revisions stay gap-free."""
    t = tenant()
    await write(store, t, "b", "counter", b"0")

    def increment(view: MutationView) -> Decision[int]:
        current = view.entries["counter"]
        assert current.value is not None
        number = int(current.value.data) + 1
        entry = Entry(
            "b",
            "counter",
            Value.payload(str(number).encode()),
            current.create_revision,
            view.revision,
            current.version + 1,
            update_time=view.now,
        )
        return Decision((Event(EventType.PUT, entry, current),), number)

    def refuse(view: MutationView) -> Decision[None]:
        raise InvalidArgumentError("key", "no")

    async def one(i: int) -> int | None:
        if i % 5 == 4:
            with pytest.raises(InvalidArgumentError):
                await store.mutate(t, "b", ["counter"], NOW, refuse)
            return None
        if i % 5 == 3:
            return await write(store, t, "other", f"k{i}")
        return (await store.mutate(t, "b", ["counter"], NOW, increment)).result

    results = await asyncio.gather(*(one(i) for i in range(50)))
    counted = sorted(r for i, r in enumerate(results) if i % 5 < 3 and r is not None)
    assert counted == list(range(1, 31)), "every increment saw the one before it"
    header = await store.header(t)
    assert header.revision == 1 + 30 + 10
    history = await store.history(t, None, 1, header.revision, 100, with_previous=False)
    assert [batch.revision for batch in history] == list(range(1, header.revision + 1))
    (entry,) = (await store.read(t, "b", ["counter"], 0, None)).entries
    assert entry.value == Value.payload(b"30") and entry.version == 31


async def test_decide_sees_live_entries_and_the_key_count(store: BlackboardStore) -> None:
    t = tenant()
    await write(store, t, "b", "x", b"1")
    await write(store, t, "other", "y")
    seen: list[MutationView] = []

    def look(view: MutationView) -> Decision[None]:
        seen.append(view)
        return Decision((), None)

    outcome = await store.mutate(t, "b", ["x", "missing"], NOW, look)
    (view,) = seen
    assert set(view.entries) == {"x"} and view.entries["x"].value == Value.payload(b"1")
    assert view.key_count == 2 and view.header.revision == 2 and view.revision == 3
    assert outcome.batch is None and outcome.header.revision == 2, "no change, no revision"


async def test_a_raising_decision_changes_nothing(store: BlackboardStore) -> None:
    t = tenant()
    await write(store, t, "b", "k", b"1")

    def refuse(view: MutationView) -> Decision[None]:
        raise InvalidArgumentError("key", "no")

    with pytest.raises(InvalidArgumentError):
        await store.mutate(t, "b", ["k"], NOW, refuse)
    assert (await store.header(t)).revision == 1
    result = await store.read(t, "b", ["k"], 0, None)
    assert result.entries[0].value == Value.payload(b"1")


async def test_a_decision_touching_other_keys_is_refused(store: BlackboardStore) -> None:
    t = tenant()
    with pytest.raises(Exception):  # noqa: B017 - any error, as long as nothing is written
        await store.mutate(t, "b", ["named"], NOW, put("b", "not-named"))  # type: ignore[arg-type]
    assert (await store.header(t)).revision == 0


async def test_a_refused_decision_amid_concurrent_ones_leaves_no_gap(
    store: BlackboardStore,
) -> None:
    """Concurrent mutations may commit together: one refused after the
    lease it names was expired (its decision touches a key it did not name)
    leaves nothing of its own, and the revisions stay gap-free."""
    t = tenant()
    await write(store, t, "b", "lease", expire_time=NOW + 5)
    bad = store.mutate(t, "b", ["lease"], NOW + 5, put("b", "not-named"))  # type: ignore[arg-type]
    goods = [write(store, t, "b", f"k{i}", now=NOW + 5) for i in range(6)]
    results = await asyncio.gather(goods[0], bad, *goods[1:], return_exceptions=True)
    refused = [r for r in results if isinstance(r, BaseException)]
    assert len(refused) == 1 and not isinstance(refused[0], asyncio.CancelledError)
    revisions = sorted(r for r in results if isinstance(r, int))
    header = await store.header(t)
    # The lease's expiry may stand in a revision of its own (it does not
    # depend on the decision) or go with the refused mutation: either way
    # every revision is there once, and only one can be the expiry's.
    assert len(set(revisions)) == 6 and revisions[0] >= 2
    assert header.revision - revisions[-1] <= 1 and header.revision - 1 - 6 <= 1
    history = await store.history(t, "b", 1, header.revision, 100, False)
    assert [b.revision for b in history] == list(range(1, header.revision + 1))
    assert "not-named" not in {e.key for b in history for e in b.events}


async def test_expired_keys_are_removed_first_in_a_revision_of_their_own(
    store: BlackboardStore,
) -> None:
    t = tenant()
    await write(store, t, "b", "lease", expire_time=NOW + 5)
    batches: list[RevisionBatch] = []
    remove_listener = store.feed.listen(batches.append)

    def refuse(view: MutationView) -> Decision[None]:
        assert "lease" not in view.entries and view.revision == 3
        raise InvalidArgumentError("key", "no")

    with pytest.raises(InvalidArgumentError):
        await store.mutate(t, "b", ["lease"], NOW + 5, refuse)
    await asyncio.sleep(0.01)
    remove_listener()
    header = await store.header(t)
    assert header.revision == 2, "the expiry is committed even though the decision failed"
    (expiry,) = [b for b in batches if b.tenant == t]
    assert [(e.type, e.key, e.revision) for e in expiry.events] == [(EventType.EXPIRE, "lease", 2)]
    assert expiry.events[0].previous is not None


# ----- reads ------------------------------------------------------------------------


async def test_reads_at_a_revision_and_visibility(store: BlackboardStore) -> None:
    t = tenant()
    await write(store, t, "b", "k", b"1", expire_time=NOW + 10)
    await write(store, t, "b", "k", b"2", expire_time=NOW + 10)
    await remove(store, t, "b", "k")
    at_one = await store.read(t, "b", ["k"], 1, None)
    assert at_one.revision == 1 and at_one.entries[0].value == Value.payload(b"1")
    assert (await store.read(t, "b", ["k"], 0, None)).entries == []
    visible = await store.read(t, "b", ["k"], 2, NOW + 9)
    hidden = await store.read(t, "b", ["k"], 2, NOW + 10)
    assert len(visible.entries) == 1 and hidden.entries == []
    with pytest.raises(InvalidArgumentError):
        await store.read(t, "b", ["k"], 4, None)


async def test_listing_is_by_code_point_inside_the_matcher_range(store: BlackboardStore) -> None:
    t = tenant()
    keys = ["a", "a/b", "a\U0010ffff", "aa", "b", "é", "日本", "\U0001f600", "a\ud7ff", "a\ue000"]
    for key in keys:
        await write(store, t, "b", key)
    await write(store, t, "other-board", "a")
    everything = await store.list_entries(t, "b", ALL, 0, None, None, 100)
    assert [e.key for e in everything.entries] == sorted(keys)
    prefix = await store.list_entries(t, "b", KeyMatcher(prefix="a"), 0, None, None, 100)
    assert [e.key for e in prefix.entries] == sorted(k for k in keys if k.startswith("a"))
    page = await store.list_entries(t, "b", KeyMatcher(prefix="a"), 0, None, "a/b", 2)
    assert [e.key for e in page.entries] == ["aa", "a\ud7ff"]
    glob = compile_glob("pattern", "a?", BlackboardLimits())
    globbed = await store.list_entries(t, "b", glob, 0, None, None, 100)
    assert [e.key for e in globbed.entries] == ["aa", "a\ud7ff", "a\ue000", "a\U0010ffff"]


async def test_listing_at_a_past_revision(store: BlackboardStore) -> None:
    t = tenant()
    await write(store, t, "b", "x", b"1")
    await write(store, t, "b", "y")
    await write(store, t, "b", "x", b"2")
    await remove(store, t, "b", "y")
    past = await store.list_entries(t, "b", ALL, 2, None, None, 10)
    assert [(e.key, e.value) for e in past.entries] == [
        ("x", Value.payload(b"1")),
        ("y", Value.payload(b"v")),
    ]


async def test_history_by_board_with_previous_values(store: BlackboardStore) -> None:
    t = tenant()
    await write(store, t, "b", "k", b"1")
    await write(store, t, "other", "k")
    await write(store, t, "b", "k", b"2")
    await remove(store, t, "b", "k")
    board_only = await store.history(t, "b", 1, 4, 10, with_previous=True)
    assert [b.revision for b in board_only] == [1, 3, 4]
    assert board_only[1].events[0].previous is not None
    assert board_only[1].events[0].previous.value == Value.payload(b"1")
    assert board_only[2].events[0].type == EventType.DELETE
    assert board_only[0].events[0].previous is None
    every_board = await store.history(t, None, 2, 4, 2, with_previous=False)
    assert [(b.board, b.revision) for b in every_board] == [("other", 2), ("b", 3)]
    assert every_board[1].events[0].previous is None


# ----- compaction ---------------------------------------------------------------------


async def test_compaction_keeps_each_keys_latest_value(store: BlackboardStore) -> None:
    t = tenant()
    await write(store, t, "b", "stable", b"s")  # 1
    await write(store, t, "b", "hot", b"1")  # 2
    await write(store, t, "b", "gone")  # 3
    await remove(store, t, "b", "gone")  # 4
    await write(store, t, "b", "hot", b"2")  # 5
    await write(store, t, "b", "hot", b"3")  # 6
    header = await store.compact(t, 6)
    assert header.oldest_revision == 6
    snapshot = await store.list_entries(t, "b", ALL, 5, None, None, 10)
    assert [(e.key, e.value) for e in snapshot.entries] == [
        ("hot", Value.payload(b"2")),
        ("stable", Value.payload(b"s")),
    ]
    with pytest.raises(RevisionCompactedError) as below:
        await store.history(t, "b", 5, 6, 10, with_previous=False)
    assert below.value.metadata["oldest_revision"] == "6"
    with pytest.raises(RevisionCompactedError):
        await store.read(t, "b", ["hot"], 5, None)
    (kept,) = await store.history(t, "b", 6, 6, 10, with_previous=True)
    assert kept.events[0].previous is not None
    assert kept.events[0].previous.value == Value.payload(b"2")
    with pytest.raises(RevisionCompactedError):
        await store.compact(t, 6)
    with pytest.raises(InvalidArgumentError):
        await store.compact(t, 7)


async def test_retention_compacts_old_revisions_of_every_tenant(store: BlackboardStore) -> None:
    first, second = tenant(), tenant()
    await write(store, first, "b", "k", now=NOW)
    await write(store, first, "b", "k", now=NOW + 100)
    await write(store, second, "b", "k", now=NOW)
    compacted = await store.compact_expired_history(NOW + 150, 60, 1000)
    assert (first, 2) in compacted and (second, 1) not in compacted
    assert (await store.header(first)).oldest_revision == 2
    assert (await store.header(second)).oldest_revision == 1, "the current revision stays"


# ----- expiry and the feed ----------------------------------------------------------------


async def test_expire_due_makes_one_revision_per_board(store: BlackboardStore) -> None:
    t = tenant()
    for board, key in [("a", "x"), ("a", "y"), ("b", "z")]:
        await write(store, t, board, key, expire_time=NOW + 1)
    await write(store, t, "a", "keep")
    delivered: list[RevisionBatch] = []
    remove_listener = store.feed.listen(delivered.append)
    batches = [b for b in await store.expire_due(NOW + 1, 100) if b.tenant == t]
    await asyncio.sleep(0.01)
    remove_listener()
    assert [(b.board, b.revision, [e.key for e in b.events]) for b in batches] == [
        ("a", 5, ["x", "y"]),
        ("b", 6, ["z"]),
    ]
    assert [b for b in delivered if b.tenant == t] == batches
    assert [e.key for e in (await store.list_entries(t, "a", ALL, 0, None, None, 9)).entries] == [
        "keep"
    ]


async def test_the_feed_sees_each_commit_once_in_order_after_it(store: BlackboardStore) -> None:
    t = tenant()
    seen: list[tuple[int, int]] = []

    def listener(batch: RevisionBatch) -> None:
        if batch.tenant == t:
            seen.append((batch.revision, len(batch.events)))

    remove_listener = store.feed.listen(listener)
    revisions = await asyncio.gather(*(write(store, t, "b", f"k{i}") for i in range(20)))
    await asyncio.sleep(0.01)
    assert seen == [(revision, 1) for revision in sorted(revisions)]
    remove_listener()
    await write(store, t, "b", "after")
    await asyncio.sleep(0.01)
    assert len(seen) == 20


async def test_writers_are_answered_after_their_batches_reach_the_feed(
    store: BlackboardStore,
) -> None:
    """A writer's reply comes after its revision reached this replica's
    listeners (the watch hubs), also while expiry sweeps commit between the
    writes; every revision reaches them once, and on the embedded store in
    commit order (it has one writer; PostgreSQL replicas may reorder, the
    hubs put revisions back in order)."""
    t = tenant()
    for index in range(4):
        await write(store, t, "b", f"lease{index}", expire_time=NOW + 1)
    delivered: list[int] = []
    remove_listener = store.feed.listen(
        lambda batch: delivered.append(batch.revision) if batch.tenant == t else None
    )

    async def answered(index: int) -> int:
        revision = await write(store, t, "b", f"k{index}")
        assert revision in delivered, f"revision {revision} answered before the feed saw it"
        return revision

    async def sweep() -> None:
        await store.expire_due(NOW + 1, 1000)

    writes = [answered(index) for index in range(12)]
    sweeps = [sweep() for _ in range(3)]
    await asyncio.gather(*writes[:6], *sweeps, *writes[6:])
    remove_listener()
    # The leases expire in one revision (one board), whichever sweep got them.
    head = (await store.header(t)).revision
    assert head == 4 + 12 + 1
    assert sorted(delivered) == list(range(5, head + 1))
    if isinstance(store, EmbeddedBlackboardStore):
        assert delivered == list(range(5, head + 1))


async def test_tenants_never_see_each_others_keys(store: BlackboardStore) -> None:
    mine, theirs = tenant(), tenant()
    await write(store, theirs, "b", "secret")
    assert (await store.read(mine, "b", ["secret"], 0, None)).entries == []
    assert (await store.list_entries(mine, "b", ALL, 0, None, None, 10)).entries == []
    assert await store.history(mine, None, 1, 10, 10, with_previous=False) == []


# ----- several replicas on one PostgreSQL ------------------------------------------------


@pytest.mark.parametrize("optimistic_attempts", [2, 0], ids=["optimistic", "locked"])
async def test_replicas_racing_on_one_tenant_lose_no_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, optimistic_attempts: int
) -> None:
    """Two stores on one database (two replicas), each group-committing its
    own callers: a replica whose optimistic commit loses to the other's
    decides again on the new state (or, with no optimistic attempts, takes
    the tenant's lock), so no increment is lost and revisions stay gap-free."""
    monkeypatch.setattr(
        "statekeeper.storage.postgres.blackboard.OPTIMISTIC_ATTEMPTS", optimistic_attempts
    )
    t = tenant()
    async with _production(tmp_path / "a") as one, _production(tmp_path / "b") as other:
        await write(one, t, "b", "counter", b"0")

        def increment(view: MutationView) -> Decision[int]:
            current = view.entries["counter"]
            assert current.value is not None
            number = int(current.value.data) + 1
            entry = Entry(
                "b",
                "counter",
                Value.payload(str(number).encode()),
                current.create_revision,
                view.revision,
                current.version + 1,
                update_time=view.now,
            )
            return Decision((Event(EventType.PUT, entry, current),), number)

        stores = (one, other)
        results = await asyncio.gather(
            *(stores[i % 2].mutate(t, "b", ["counter"], NOW, increment) for i in range(60))
        )
        assert sorted(outcome.result for outcome in results) == list(range(1, 61))
        revisions = sorted(outcome.header.revision for outcome in results)
        assert revisions == list(range(2, 62))
        (entry,) = (await other.read(t, "b", ["counter"], 0, None)).entries
        assert entry.value == Value.payload(b"60")


async def test_a_replica_never_decides_on_what_another_replica_changed(tmp_path: Path) -> None:
    """A replica may skip the read for keys it wrote last (it knows their
    state as of its own commit), but a write by another replica in between
    must still be seen: by a writing decision (its commit is refused and it
    decides again on a fresh read) and by one that writes nothing (never
    answered from what the replica remembers)."""
    t = tenant()
    async with _production(tmp_path / "a") as one, _production(tmp_path / "b") as other:
        await write(one, t, "b", "k", b"from-one")
        await write(other, t, "b", "k", b"from-other")

        def look(view: MutationView) -> Decision[bytes | None]:
            entry = view.entries.get("k")
            return Decision((), None if entry is None or entry.value is None else entry.value.data)

        assert (await one.mutate(t, "b", ["k"], NOW, look)).result == b"from-other"
        again = put("b", "k", b"again")
        outcome: MutationOutcome[Entry] = await one.mutate(t, "b", ["k"], NOW, again)  # type: ignore[arg-type]
        assert outcome.result.version == 3 and outcome.header.revision == 3
        await remove(other, t, "b", "k")
        assert (await one.mutate(t, "b", ["k"], NOW, look)).result is None
        outcome = await one.mutate(t, "b", ["k"], NOW, put("b", "k", b"new"))  # type: ignore[arg-type]
        assert outcome.result.version == 1 and outcome.result.create_revision == 5


# ----- erasure ------------------------------------------------------------------------


async def key_count(store: BlackboardStore, t: str) -> int:
    def look(view: MutationView) -> Decision[int]:
        return Decision((), view.key_count)

    outcome: MutationOutcome[int] = await store.mutate(t, "any", ["k"], NOW, look)
    return outcome.result


async def test_erase_user_deletes_keys_and_history_under_the_prefixes(
    store: BlackboardStore,
) -> None:
    t, other = tenant(), tenant()
    subject = ErasureSubject("u1", blackboard_key_prefixes=("agents/u1-",))
    first = await write(store, t, "a", "users/u1/profile", b"old")
    await write(store, t, "a", "users/u1/profile", b"new")
    await write(store, t, "b", "users/u1/notes", b"n")
    await write(store, t, "b", "agents/u1-helper", b"h")
    await write(store, t, "b", "users/u1/gone", b"g")
    await remove(store, t, "b", "users/u1/gone")
    await write(store, t, "a", "users/u10/profile", b"not u1")  # another user
    await write(store, t, "a", "shared", b"s")
    await write(store, other, "a", "users/u1/profile", b"theirs")
    assert await key_count(store, t) == 5
    dry = await store.erase_user(t, subject, dry_run=True)
    assert dry.counts == {("blackboard", "entries"): 3, ("blackboard", "versions"): 6}
    assert await key_count(store, t) == 5
    real = await store.erase_user(t, subject, dry_run=False)
    assert real.counts == dry.counts
    assert await key_count(store, t) == 2
    current = await store.list_entries(t, "a", ALL, 0, None, None, 100)
    assert [e.key for e in current.entries] == ["shared", "users/u10/profile"]
    at_first = await store.read(t, "a", ["users/u1/profile"], first, None)
    assert at_first.entries == []
    events = [
        event.entry.key
        for batch in await store.history(t, None, 1, 100, 100, True)
        for event in batch.events
    ]
    assert not [key for key in events if key.startswith(("users/u1/", "agents/u1-"))]
    assert "users/u10/profile" in events
    theirs = await store.read(other, "a", ["users/u1/profile"], 0, None)
    assert [e.key for e in theirs.entries] == ["users/u1/profile"]
    assert (await store.erase_user(t, subject, dry_run=False)).total == 0
