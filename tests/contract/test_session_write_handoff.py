"""The embedded store's writer thread: writes are handed to it directly and
it commits group after group for as long as writes are queued. What that
must keep: a failing write undoes its own statements only (alone in its
transaction too, where no savepoint is taken), close() commits every write
handed over before it returns, a closed store refuses writes, and `run`
(health checks, migrations) is not starved by a stream of writes. A real
SQLite file, reopened to read what is durable."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path

import pytest

from statekeeper.core.audit.service import Actor
from statekeeper.core.errors import AlreadyExistsError, StorageUnavailableError
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.models import MessageDraft, Role, SessionDraft
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Principal
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import DATABASE_FILE
from tests.harness.deadlines import scaled

WRITERS = 4


def actor(tenant: str) -> Actor:
    return Actor(Principal(tenant, f"key-{tenant}"), "statekeeper.v1.SessionService", "Test")


def manager_of(storage: EmbeddedStorage) -> SessionManager:
    counter = TokenCounter()
    return SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())


def count_sessions(db: sqlite3.Connection, tenant: str) -> int:
    row = db.execute("SELECT count(*) FROM sessions WHERE tenant=?", (tenant,)).fetchone()
    return int(row[0])


async def test_a_lone_failing_write_leaves_nothing_and_the_next_commits(tmp_path: Path) -> None:
    """A write alone in its group that fails after a statement: that
    statement is undone (the transaction is rolled back), its caller gets
    the error, and the store goes on committing."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    try:

        def insert_then_fail(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO sessions (tenant, session_id, user_id, agent_id, status,"
                " create_time, version, state) VALUES (?, 'half', 'u', '', 1, 0, 1, '{}')",
                (tenant,),
            )
            raise ValueError("changed its mind")

        with pytest.raises(ValueError, match="changed its mind"):
            await storage.write(insert_then_fail)
        assert await storage.read(lambda db: count_sessions(db, tenant)) == 0
        manager = manager_of(storage)
        await manager.create(actor(tenant), "whole", SessionDraft(user_id="u"))
        with pytest.raises(AlreadyExistsError):  # fails alone too, leaving the first
            await manager.create(actor(tenant), "whole", SessionDraft(user_id="v"))
        assert (await manager.get(tenant, "whole")).user_id == "u"
    finally:
        await storage.close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        assert count_sessions(db, tenant) == 1


async def test_close_commits_every_write_handed_over(tmp_path: Path) -> None:
    """Writes still queued when close() starts are committed before it
    returns, each caller gets its result, and a closed store refuses writes
    with UNAVAILABLE's error instead of hanging."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    manager = manager_of(storage)
    tasks = [
        asyncio.create_task(manager.create(actor(tenant), f"s{index}", SessionDraft(user_id="u")))
        for index in range(300)  # more than one group's worth
    ]
    await asyncio.sleep(0)  # every write handed over, none committed yet
    await storage.close()
    outcomes = await asyncio.wait_for(asyncio.gather(*tasks), scaled(30))
    assert len(outcomes) == 300
    with pytest.raises(StorageUnavailableError):
        await storage.write(lambda db: None)
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        assert count_sessions(db, tenant) == 300


async def test_run_is_not_starved_by_a_stream_of_writes(tmp_path: Path) -> None:
    """While writers keep the writer thread busy, work given to `run` (what
    a health check does) gets its turn between two groups."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    who, manager = actor(tenant), manager_of(storage)
    stop = asyncio.Event()
    appended = [0] * WRITERS

    async def writer(index: int) -> None:
        session_id = f"w{index}"
        await manager.create(who, session_id, SessionDraft(user_id="u"))
        while not stop.is_set():
            await manager.append(who, session_id, [MessageDraft(Role.USER, "more")], "", "")
            appended[index] += 1

    tasks = [asyncio.create_task(writer(index)) for index in range(WRITERS)]
    try:
        while sum(appended) < 20 * WRITERS:  # the writers are in full flow
            await asyncio.sleep(0.01)
        for _ in range(5):
            answer = await asyncio.wait_for(
                storage.run(lambda db: db.execute("SELECT 1").fetchone()[0]), scaled(10)
            )
            assert answer == 1
        assert not [task for task in tasks if task.done()], "a writer stopped early"
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        await storage.close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        rows = db.execute("SELECT count(*) FROM messages WHERE tenant=?", (tenant,)).fetchone()
        assert rows[0] == sum(appended)


async def test_a_write_that_raises_an_exit_is_answered_and_writes_go_on(tmp_path: Path) -> None:
    """A write whose work raises a BaseException (an exit, not an error of
    the write): its caller still gets an answer, its statements are undone,
    and the next writes still commit (the writer thread does not stop
    draining)."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    try:

        def insert_then_exit(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO sessions (tenant, session_id, user_id, agent_id, status,"
                " create_time, version, state) VALUES (?, 'gone', 'u', '', 1, 0, 1, '{}')",
                (tenant,),
            )
            raise GeneratorExit("stopping")

        with pytest.raises(StorageUnavailableError):
            await asyncio.wait_for(storage.write(insert_then_exit), scaled(10))
        sessions = manager_of(storage)
        await asyncio.wait_for(
            sessions.create(actor(tenant), "after", SessionDraft(user_id="u")),
            scaled(10),
        )
    finally:
        await storage.close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        assert count_sessions(db, tenant) == 1
