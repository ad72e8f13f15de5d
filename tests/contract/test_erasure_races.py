"""EraseUser while the user (or other replicas) keep writing: regression
tests of the defects a review found (issue 14 item 6), on SQLite and
PostgreSQL (skipped, with the reason printed, without the test services).

* a replica that read or remembers the erased entries commits nothing from
  them (no erased value comes back as a previous value);
* a dry run takes no lock a writer waits for;
* a parent goes only once its children are gone (nothing orphaned by a
  child written between the two steps);
* blobs are found by state, so a retry after an interruption collects them;
* PostgreSQL blob batches wait for the tenant's value lock.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from statekeeper.core.audit.models import AuditFilter
from statekeeper.core.audit.service import Actor
from statekeeper.core.blackboard.models import (
    Decision,
    Entry,
    Event,
    EventType,
    MutationOutcome,
    MutationView,
    Value,
)
from statekeeper.core.blackboard.store import BlackboardStore
from statekeeper.core.checkpoints.models import ReadOptions
from statekeeper.core.checkpoints.store import CheckpointStore
from statekeeper.core.errors import ErasureIncompleteError
from statekeeper.core.items.models import ItemRecord
from statekeeper.core.items.store import ItemStore
from statekeeper.core.limits import Limits
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.privacy.service import ERASED_ENTITY, Participant, UserEraser
from statekeeper.core.tenancy import Principal
from statekeeper.storage.embedded import erasure as embedded_erasure
from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore
from statekeeper.storage.embedded.checkpoints import EmbeddedCheckpointStore
from statekeeper.storage.embedded.items import EmbeddedItemStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import DATABASE_FILE
from statekeeper.storage.postgres import erasure as postgres_erasure
from statekeeper.storage.postgres.blackboard import PostgresBlackboardStore
from statekeeper.storage.postgres.checkpoints import PostgresCheckpointStore
from statekeeper.storage.postgres.checkpoints_schema import VALUE_LOCK_CLASS
from statekeeper.storage.postgres.items import PostgresItemStore
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.redis.cache import SessionCache
from statekeeper.storage.shared.erasure import (
    MAX_PASSES,
    POSTGRES,
    SQLITE,
    Erasure,
    Step,
    checkpoint_steps,
    session_steps,
)
from tests.contract.fresh_postgres import fresh_postgres
from tests.contract.test_checkpoint_store import draft, inline
from tests.contract.test_memory_store import episode
from tests.contract.test_session_store import append_change, first_version, message, record
from tests.harness.deadlines import Deadline, scaled
from tests.services import configured

NOW = 1_700_000_000.0
ALL = ReadOptions()


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


@dataclass
class Backend:
    """One database as two server replicas see it (the same objects on
    SQLite, which has no replicas), with raw access for checks."""

    name: str
    storage: EmbeddedStorage | PostgresStorage
    replica: EmbeddedStorage | PostgresStorage
    path: Path | None  # the SQLite file
    dsn: str = ""  # the PostgreSQL database

    async def run_steps(self, steps: list[Step]) -> Erasure:
        if isinstance(self.storage, EmbeddedStorage):
            return await embedded_erasure.run_steps(self.storage, steps, False)
        return await postgres_erasure.run_steps(self.storage, steps, False)

    async def count(self, sql: str, *params: object) -> int:
        """`sql` with ? marks (PostgreSQL: $n)."""
        if isinstance(self.storage, EmbeddedStorage):

            def read(db: sqlite3.Connection) -> int:
                return int(db.execute(sql, params).fetchone()[0])

            return await self.storage.read(read)
        marked = sql
        for n in range(1, len(params) + 1):
            marked = marked.replace("?", f"${n}", 1)
        async with self.storage.connection("test count") as conn:
            return int(await conn.fetchval(marked, *params))


@pytest.fixture(params=["embedded", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    if request.param == "embedded":
        storage = EmbeddedStorage(tmp_path)
        await storage.start()
        yield Backend("embedded", storage, storage, tmp_path / DATABASE_FILE)
        await storage.close()
        return
    database = await fresh_postgres()
    try:
        replica = await database.replica()
        yield Backend("postgres", database.storage, replica, None, database.dsn)
    finally:
        await database.close()


# ----- blackboard ----------------------------------------------------------------------


def put_seeing(key: str, data: bytes, seen: list[Entry | None]) -> Callable[..., Any]:
    """A put as the domain decides it, noting the previous entry it saw."""

    def decide(view: MutationView) -> Decision[Entry]:
        current = view.entries.get(key)
        seen.append(current)
        entry = Entry(
            "b",
            key,
            Value.payload(data),
            current.create_revision if current else view.revision,
            view.revision,
            current.version + 1 if current else 1,
            update_time=view.now,
        )
        return Decision((Event(EventType.PUT, entry, current),), entry)

    return decide


def look(view: MutationView) -> Decision[int]:
    return Decision((), view.key_count)


async def boards(backend: Backend) -> tuple[BlackboardStore, BlackboardStore]:
    if isinstance(backend.storage, EmbeddedStorage):
        store = EmbeddedBlackboardStore(backend.storage)
        await store.start()
        return store, store
    assert isinstance(backend.replica, PostgresStorage)
    a = PostgresBlackboardStore(backend.storage, None, prefix=f"erase-{uuid.uuid4().hex[:6]}")
    b = PostgresBlackboardStore(backend.replica, None, prefix=f"erase-{uuid.uuid4().hex[:6]}")
    await asyncio.gather(a.start(), b.start())
    return a, b


async def test_a_replica_that_remembers_erased_entries_does_not_bring_them_back(
    backend: Backend,
) -> None:
    a, b = await boards(backend)
    try:
        t, key = tenant(), "users/u1/profile"
        seen: list[Entry | None] = []
        await b.mutate(t, "b", [key], NOW, put_seeing(key, b"SECRET", seen))
        # B now remembers the tenant's state with the entry; A erases it.
        assert (await a.erase_user(t, ErasureSubject("u1"), dry_run=False)).total == 2
        outcome: MutationOutcome[Entry] = await b.mutate(
            t, "b", [key], NOW + 1, put_seeing(key, b"new", seen)
        )
        assert seen[-1] is None, "B's decision saw the erased value"
        assert outcome.result.version == 1
        counted: MutationOutcome[int] = await b.mutate(t, "b", ["x"], NOW + 2, look)
        assert counted.result == 1
        stored = await a.read(t, "b", [key], 0, None)
        assert [(e.key, e.value.data if e.value else None) for e in stored.entries] == [
            (key, b"new")
        ]
        history = [
            event.previous.value.data
            for batch in await b.history(t, None, 1, 100, 100, True)
            for event in batch.events
            if event.previous is not None and event.previous.value is not None
        ]
        assert b"SECRET" not in history
    finally:
        for store in {id(s): s for s in (a, b)}.values():
            await store.close()


async def test_a_dry_run_takes_no_lock_that_writers_wait_for(backend: Backend) -> None:
    a, b = await boards(backend)
    try:
        t, key = tenant(), "users/u1/profile"
        await b.mutate(t, "b", [key], NOW, put_seeing(key, b"v", []))
        subject = ErasureSubject("u1")
        # A writer in the middle of a commit holds the write lock (SQLite)
        # or the tenant's blackboard row (PostgreSQL): a dry run must not
        # wait for it (nor make it wait).
        if backend.path is not None:
            writer = sqlite3.connect(backend.path, isolation_level=None)
            writer.execute("BEGIN IMMEDIATE")
            try:
                dry = await asyncio.wait_for(a.erase_user(t, subject, True), scaled(60))
            finally:
                writer.rollback()
                writer.close()
        else:
            assert isinstance(backend.replica, PostgresStorage)
            async with backend.replica.connection("hold the tenant row") as conn:
                transaction = conn.transaction()
                await transaction.start()
                try:
                    await conn.execute("SELECT 1 FROM bb_tenants WHERE tenant = $1 FOR UPDATE", t)
                    dry = await asyncio.wait_for(a.erase_user(t, subject, True), scaled(60))
                finally:
                    await transaction.rollback()
        assert dry.counts == {("blackboard", "entries"): 1, ("blackboard", "versions"): 1}
        assert (await a.erase_user(t, subject, False)).counts == dry.counts
    finally:
        for store in {id(s): s for s in (a, b)}.values():
            await store.close()


# ----- parents and children ------------------------------------------------------------


async def test_a_session_with_messages_left_is_not_deleted_before_them(
    backend: Backend,
) -> None:
    t, other = tenant(), tenant()
    subject = ErasureSubject("u1")
    sessions = backend.storage.sessions
    for t_ in (t, other):
        rec = record("s", user_id="u1")
        await sessions.create_session(t_, first_version(rec))
        await sessions.apply_change(t_, append_change(rec, [message(1), message(2)]))
    # As if the user appended after the child steps ran: only the parent
    # step now, while messages are still there. It must keep the session
    # (deleting it would leave its messages unreachable on SQLite).
    parent = session_steps(t, subject)[-1]
    assert parent.table == "sessions"
    assert (await backend.run_steps([parent])).counts.total == 0
    assert await sessions.get_session(t, "s") is not None
    # The whole erasure: children, then the parent; nothing orphaned.
    real = await sessions.erase_user(t, subject, dry_run=False)
    assert real.counts[("sessions", "sessions")] == 1
    assert await sessions.get_session(t, "s") is None
    for table in ("messages", "session_versions", "append_receipts"):
        assert await backend.count(f"SELECT count(*) FROM {table} WHERE tenant = ?", t) == 0
    assert len(await sessions.list_messages(other, "s", 0, 10, True)) == 2


async def checkpoints(backend: Backend) -> CheckpointStore:
    if isinstance(backend.storage, EmbeddedStorage):
        embedded = EmbeddedCheckpointStore(backend.storage)
        await embedded.start()
        return embedded
    postgres = PostgresCheckpointStore(backend.storage)
    await postgres.start()
    return postgres


def steps_of(backend: Backend, t: str, subject: ErasureSubject) -> list[Step]:
    dialect = SQLITE if backend.path is not None else POSTGRES
    return checkpoint_steps(dialect, t, subject, VALUE_LOCK_CLASS)


async def test_a_tagged_checkpoint_is_not_deleted_before_its_executions_rows(
    backend: Backend,
) -> None:
    store = await checkpoints(backend)
    t, subject = tenant(), ErasureSubject("u1")
    tagged = {"user_id": "u1"}
    await store.save_checkpoint(
        t, draft("c0", execution_id="e1", channels={"a": inline("1", "x")}, metadata=tagged), 0
    )
    # Only the step deleting the tagged checkpoints (the execution's parent),
    # as if a save had added channels after the child steps ran.
    last = [s for s in steps_of(backend, t, subject) if s.table == "cp_checkpoints"][-1]
    assert (await backend.run_steps([last])).counts.total == 0
    assert await store.get_checkpoint(t, "e1", "", None, ALL) is not None
    await store.erase_user(t, subject, dry_run=False)
    for table in ("cp_checkpoints", "cp_channels", "cp_executions", "cp_blobs"):
        assert await backend.count(f"SELECT count(*) FROM {table} WHERE tenant = ?", t) == 0


async def test_a_retry_after_an_interruption_collects_the_blobs(backend: Backend) -> None:
    store = await checkpoints(backend)
    t, subject = tenant(), ErasureSubject("u1")
    await store.save_checkpoint(
        t,
        draft(
            "c0",
            execution_id="e1",
            channels={"a": inline("1", "u1 only")},
            metadata={"user_id": "u1"},
        ),
        0,
    )
    await store.save_checkpoint(
        t,
        draft(
            "c0", execution_id="e2", channels={"a": inline("1", "u2's")}, metadata={"user_id": "u2"}
        ),
        0,
    )
    assert await backend.count("SELECT count(*) FROM cp_blobs WHERE tenant = ?", t) == 2
    # An erasure interrupted after every checkpoint row went, before the blobs.
    rows = [s for s in steps_of(backend, t, subject) if s.table != "cp_blobs"]
    assert (await backend.run_steps(rows)).counts.counts[("checkpoints", "checkpoints")] == 1
    retry = await store.erase_user(t, subject, dry_run=False)
    assert retry.counts[("checkpoints", "blobs")] == 1
    assert await backend.count("SELECT count(*) FROM cp_blobs WHERE tenant = ?", t) == 1
    kept = await store.get_checkpoint(t, "e2", "", None, ALL)
    assert kept is not None
    assert kept.channels["a"].value == inline("1", "u2's").value


async def test_blob_batches_wait_for_saves_holding_the_value_lock(backend: Backend) -> None:
    if not isinstance(backend.storage, PostgresStorage):
        pytest.skip("the value lock is PostgreSQL's (SQLite has one writer)")
    assert isinstance(backend.replica, PostgresStorage)
    store = await checkpoints(backend)
    t, subject = tenant(), ErasureSubject("u1")
    await store.save_checkpoint(
        t,
        draft(
            "c0", execution_id="e1", channels={"a": inline("1", "v")}, metadata={"user_id": "u1"}
        ),
        0,
    )
    async with backend.replica.connection("a save in flight") as conn:
        transaction = conn.transaction()
        await transaction.start()
        erasing: asyncio.Task[Any] | None = None
        try:
            # What cp_save holds while it adds references to values.
            await conn.execute(
                "SELECT pg_advisory_xact_lock_shared($1, hashtext($2))", VALUE_LOCK_CLASS, t
            )
            key = await conn.fetchval("SELECT hashtext($1)", t)
            erasing = asyncio.create_task(store.erase_user(t, subject, dry_run=False))
            waiting = await _until(
                Deadline(60),
                lambda: _waiters(backend.storage, VALUE_LOCK_CLASS, key),
                erasing,
            )
            assert not erasing.done(), "the blobs were collected under a save's value lock"
            assert waiting
        finally:
            await transaction.rollback()
            if erasing is not None:
                erased = await asyncio.wait_for(erasing, scaled(60))
                assert erased.counts[("checkpoints", "blobs")] == 1


async def _waiters(storage: EmbeddedStorage | PostgresStorage, lock_class: int, key: int) -> bool:
    assert isinstance(storage, PostgresStorage)
    async with storage.connection("lock waiters") as conn:
        waiting = await conn.fetchval(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND classid::bigint = ($1::bigint & 4294967295) AND objid::bigint ="
            " ($2::bigint & 4294967295) AND objsubid = 2",
            lock_class,
            key,
        )
    return bool(waiting)


async def _until(
    deadline: Deadline, check: Callable[[], Awaitable[bool]], task: asyncio.Task[Any]
) -> bool:
    """Polls `check` until true, `task` ends or the deadline passes."""
    while not deadline.expired() and not task.done():
        if await check():
            return True
        await asyncio.sleep(0.05)
    return False


# ----- memory ---------------------------------------------------------------------------


async def test_an_interrupted_erasure_still_names_every_deleted_vector_key(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other replicas drop the vectors named by erase rows of the change log:
    every batch that deleted episodes must have logged its keys, even if
    the erasure then failed (the retry no longer finds those episodes)."""
    if not isinstance(backend.storage, PostgresStorage):
        pytest.skip("the vector change log is PostgreSQL's (SQLite has one process)")
    store = PostgresMemoryStore(backend.storage)
    await store.start()
    try:
        subject = ErasureSubject("u1")
        t = tenant()
        mine = [
            (await store.insert_episode(t, episode(f"e{n}", vector=[1, n])))[0] for n in range(3)
        ]
        monkeypatch.setattr(postgres_erasure, "ERASE_BATCH", 1)
        async with backend.storage.connection("break the second batch") as conn:
            # The second episode DELETE fails (a sequence: not rolled back).
            await conn.execute(
                """CREATE SEQUENCE efix_deletes;
                CREATE FUNCTION efix_fail() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF nextval('efix_deletes') = 2 THEN
                        RAISE EXCEPTION 'interrupted';
                    END IF;
                    RETURN OLD;
                END $$;
                CREATE TRIGGER efix_fail BEFORE DELETE ON memory_episodes
                    FOR EACH ROW EXECUTE FUNCTION efix_fail();"""
            )
        with pytest.raises(Exception, match="interrupted"):
            await store.erase_user(t, subject, dry_run=False)
        retry = await store.erase_user(t, subject, dry_run=False)
        assert retry.counts[("memory", "episodes")] == 2
        rows = await store.changes_after(t, 0, 100)
        named = sorted(key for row in rows if row.op == "erase" for key in row.keys)
        assert named == sorted(e.vector_key for e in mine)
        assert not [row for row in rows if row.user_id == "u1"]
    finally:
        await store.close()


# ----- sessions behind the Redis hot tier -----------------------------------------------


async def test_an_interrupted_erasure_leaves_no_deleted_session_in_the_cache(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch of deleted sessions leaves the shared cache with it: an
    erasure failing later (the retry no longer finds them) must not leave
    a replica serving a deleted session from Redis."""
    if not isinstance(backend.storage, PostgresStorage):
        pytest.skip("the shared session cache is the production tier's")
    services = configured()
    production = ProductionStorage(
        PostgresStorage(backend.dsn, pool_size=2),
        SessionCache(services.redis_url, prefix=f"erase-{uuid.uuid4().hex[:8]}"),
    )
    await production.start()
    try:
        t, subject = tenant(), ErasureSubject("u1")
        for session_id in "abc":
            rec = record(session_id, user_id="u1")
            await production.sessions.create_session(t, first_version(rec))
            assert await production.sessions.get_session(t, session_id) is not None  # cached
        monkeypatch.setattr(postgres_erasure, "ERASE_BATCH", 1)
        async with backend.storage.connection("break the second batch") as conn:
            await conn.execute(
                """CREATE SEQUENCE efix_session_deletes;
                CREATE FUNCTION efix_fail_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF nextval('efix_session_deletes') = 2 THEN
                        RAISE EXCEPTION 'interrupted';
                    END IF;
                    RETURN OLD;
                END $$;
                CREATE TRIGGER efix_fail_sessions BEFORE DELETE ON sessions
                    FOR EACH ROW EXECUTE FUNCTION efix_fail_sessions();"""
            )
        with pytest.raises(Exception, match="interrupted"):
            await production.sessions.erase_user(t, subject, dry_run=False)
        stored = [await backend.count("SELECT count(*) FROM sessions WHERE tenant = ?", t)]
        assert stored == [2]  # one batch committed before the failure
        served = [s for s in "abc" if await production.sessions.get_session(t, s) is not None]
        assert len(served) == 2, f"a deleted session is still served from the cache: {served}"
        retry = await production.sessions.erase_user(t, subject, dry_run=False)
        assert retry.counts[("sessions", "sessions")] == 2
        assert [s for s in "abc" if await production.sessions.get_session(t, s)] == []
    finally:
        await production.close()


# ----- short batches ---------------------------------------------------------------------


async def test_a_batch_that_deletes_fewer_rows_than_its_limit_is_not_the_last(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch may delete fewer rows than it selected while more remain (on
    PostgreSQL a concurrent update moves a row, which the DELETE by ctid
    then misses): the erasure goes on until a batch deletes nothing. A
    trigger that keeps the first row it sees stands in for that update."""
    monkeypatch.setattr(embedded_erasure, "ERASE_BATCH", 2)
    monkeypatch.setattr(postgres_erasure, "ERASE_BATCH", 2)
    items: ItemStore
    if isinstance(backend.storage, EmbeddedStorage):
        items = EmbeddedItemStore(backend.storage)
        await items.start()

        def keep_once(db: sqlite3.Connection) -> None:
            db.executescript(
                """CREATE TABLE efix_once (n INTEGER);
                INSERT INTO efix_once VALUES (1);
                CREATE TRIGGER efix_keep BEFORE DELETE ON items
                WHEN (SELECT n FROM efix_once) = 1
                BEGIN UPDATE efix_once SET n = 0; SELECT RAISE(IGNORE); END;"""
            )

        await backend.storage.run(keep_once)
    else:
        items = PostgresItemStore(backend.storage)
        await items.start()
        async with backend.storage.connection("keep one row once") as conn:
            await conn.execute(
                """CREATE SEQUENCE efix_item_deletes;
                CREATE FUNCTION efix_keep() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF nextval('efix_item_deletes') = 1 THEN
                        RETURN NULL;  -- this row stays
                    END IF;
                    RETURN OLD;
                END $$;
                CREATE TRIGGER efix_keep BEFORE DELETE ON items
                    FOR EACH ROW EXECUTE FUNCTION efix_keep();"""
            )
    try:
        t = tenant()
        for key in "abc":
            await items.put(t, ItemRecord(("users", "u1"), key, "{}", NOW, NOW), NOW)
        erased = await items.erase_user(t, ErasureSubject("u1"), dry_run=False)
        assert erased.counts == {("items", "items"): 3}
        assert await backend.count("SELECT count(*) FROM items WHERE tenant = ?", t) == 0
    finally:
        await items.close()


# ----- a user who keeps writing ----------------------------------------------------------


async def ping_pong_tables(backend: Backend, rows_to_come: int) -> None:
    """Two tables where deleting a row of one writes a row into the other,
    `rows_to_come` times in all: a user who keeps writing while being erased
    (each pass of an erasure over both tables finds new rows)."""
    if isinstance(backend.storage, EmbeddedStorage):

        def create(db: sqlite3.Connection) -> None:
            db.executescript(
                f"""CREATE TABLE efix_a (tenant TEXT);
                CREATE TABLE efix_b (tenant TEXT);
                CREATE TABLE efix_budget (n INTEGER);
                INSERT INTO efix_budget VALUES ({rows_to_come});
                CREATE TRIGGER efix_a_back AFTER DELETE ON efix_a
                WHEN (SELECT n FROM efix_budget) > 0 BEGIN
                    UPDATE efix_budget SET n = n - 1; INSERT INTO efix_b VALUES (OLD.tenant);
                END;
                CREATE TRIGGER efix_b_back AFTER DELETE ON efix_b
                WHEN (SELECT n FROM efix_budget) > 0 BEGIN
                    UPDATE efix_budget SET n = n - 1; INSERT INTO efix_a VALUES (OLD.tenant);
                END;"""
            )

        await backend.storage.run(create)
        return
    script = [
        "CREATE TABLE efix_a (tenant text)",
        "CREATE TABLE efix_b (tenant text)",
        "CREATE TABLE efix_budget (n int)",
        f"INSERT INTO efix_budget VALUES ({rows_to_come})",
    ]
    for table, other in (("efix_a", "efix_b"), ("efix_b", "efix_a")):
        script += [
            f"""CREATE FUNCTION {table}_back() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE efix_budget SET n = n - 1 WHERE n > 0;
                IF FOUND THEN INSERT INTO {other} VALUES (OLD.tenant); END IF;
                RETURN OLD;
            END $$""",
            f"CREATE TRIGGER {table}_back AFTER DELETE ON {table}"
            f" FOR EACH ROW EXECUTE FUNCTION {table}_back()",
        ]
    async with backend.storage.connection("ping-pong tables") as conn:
        for statement in script:
            await conn.execute(statement)


async def first_row(backend: Backend, t: str) -> None:
    if isinstance(backend.storage, EmbeddedStorage):

        def insert(db: sqlite3.Connection) -> None:
            with db:
                db.execute("INSERT INTO efix_a VALUES (?)", (t,))

        await backend.storage.run(insert)
        return
    async with backend.storage.connection("first row") as conn:
        await conn.execute("INSERT INTO efix_a VALUES ($1)", t)


def ping_pong_steps(t: str) -> list[Step]:
    return [
        Step("test", table, table, "tenant = :tenant", {"tenant": t})
        for table in ("efix_a", "efix_b")
    ]


async def test_an_erasure_the_user_keeps_writing_through_is_marked_unfinished(
    backend: Backend,
) -> None:
    t = tenant()
    await ping_pong_tables(backend, rows_to_come=1000)
    await first_row(backend, t)
    erased = await backend.run_steps(ping_pong_steps(t))
    assert erased.counts.unfinished == {"test"}
    assert erased.counts.total == 2 * MAX_PASSES  # each pass found what the last one's wrote
    left = await backend.count("SELECT count(*) FROM efix_a WHERE tenant = ?", t)
    left += await backend.count("SELECT count(*) FROM efix_b WHERE tenant = ?", t)
    assert left == 1


@pytest.mark.parametrize(("rows_to_come", "unfinished"), [(14, set()), (16, {"test"})])
async def test_a_last_pass_that_deletes_the_last_rows_is_not_unfinished(
    backend: Backend, rows_to_come: int, unfinished: set[str]
) -> None:
    """Every pass deleted rows, the last one included; whether the erasure
    is unfinished is what a count finds after it."""
    t = tenant()
    await ping_pong_tables(backend, rows_to_come=rows_to_come)
    await first_row(backend, t)
    erased = await backend.run_steps(ping_pong_steps(t))
    assert erased.counts.unfinished == unfinished


async def test_an_erasure_that_outlasts_the_writes_finishes(backend: Backend) -> None:
    t = tenant()
    await ping_pong_tables(backend, rows_to_come=4)  # two passes' worth
    await first_row(backend, t)
    erased = await backend.run_steps(ping_pong_steps(t))
    assert erased.counts.total == 5  # the first row and the four written after it
    for table in ("efix_a", "efix_b"):
        assert await backend.count(f"SELECT count(*) FROM {table} WHERE tenant = ?", t) == 0


class _PingPongStore:
    """A capability of the user's rows that the user keeps writing to."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        return (await self._backend.run_steps(ping_pong_steps(tenant))).counts


async def test_erase_user_erases_every_capability_then_says_which_is_unfinished(
    backend: Backend,
) -> None:
    t, subject = tenant(), ErasureSubject("u1")
    await ping_pong_tables(backend, rows_to_come=1000)
    await first_row(backend, t)
    items: ItemStore
    if isinstance(backend.storage, EmbeddedStorage):
        items = EmbeddedItemStore(backend.storage)
    else:
        items = PostgresItemStore(backend.storage)
    await items.start()
    afterwards: list[str] = []

    async def noted(name: str, tenant_: str, subject_: ErasureSubject) -> None:
        afterwards.append(name)

    eraser = UserEraser(
        [
            Participant("test", _PingPongStore(backend), functools.partial(noted, "test")),
            Participant("items", items, functools.partial(noted, "items")),
        ],
        backend.storage.audit,
        Limits(),
        salt=b"s",
    )
    actor = Actor(Principal(t, "key"), "statekeeper.v1.AdminService", "EraseUser")
    try:
        await items.put(t, ItemRecord(("users", "u1"), "k", "{}", NOW, NOW), NOW)
        with pytest.raises(ErasureIncompleteError) as raised:
            await eraser.erase(actor, subject, dry_run=False)
        # The capability written through every pass is named; the others
        # were erased all the same, and each one's follow-up ran.
        assert raised.value.code == "ABORTED" and raised.value.metadata == {"capability": "test"}
        assert await backend.count("SELECT count(*) FROM items WHERE tenant = ?", t) == 0
        assert afterwards == ["test", "items"]
        (record,) = await backend.storage.audit.list_audit(
            t, AuditFilter(entity_type=ERASED_ENTITY), 0, 10
        )
        assert "items.items=1" in record.summary and "incomplete" in record.summary
    finally:
        await items.close()
