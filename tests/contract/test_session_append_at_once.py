"""The embedded writer runs the statements of a small write (an append of
one message) at once on the event loop when the writer is idle, and hands
only the commit to the writer thread. What that must keep: a `run` on the
writer connection is never mixed into the append's transaction, the loop
never waits for another process's lock on the file (the append then goes
the usual way and commits once the lock is gone), an acknowledged append is
on disk, and appends queued behind one of them commit in the next group.
A real SQLite file, read back through another connection."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

from statekeeper.storage.embedded.sessions import SMALL_WRITE_BYTES, EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import DATABASE_FILE
from tests.harness.deadlines import scaled
from tests.integration.test_session_append_one_statement import (
    TENANT,
    append,
    messages_from,
    started,
)


def stored_messages(path: Path, session_id: str) -> list[int]:
    with sqlite3.connect(path / DATABASE_FILE) as db:
        rows = db.execute(
            "SELECT sequence FROM messages WHERE session_id = ? ORDER BY sequence", (session_id,)
        )
        return [row[0] for row in rows]


async def test_a_run_on_the_writer_is_never_inside_an_append(tmp_path: Path) -> None:
    """While a `run` holds the writer connection (here, in a transaction of
    its own), an append waits for it: both commit, neither inside the
    other's transaction."""
    storage, (record,) = await started(tmp_path, "s")
    release = threading.Event()
    try:

        def held_then_committed(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT INTO sessions (tenant, session_id, user_id, agent_id, status,"
                " create_time, version, state) VALUES ('other', 'run', 'u', '', 1, 0, 1, '{}')"
            )
            release.wait(scaled(10))
            db.commit()

        run = asyncio.create_task(storage.run(held_then_committed))
        await asyncio.sleep(0.05)  # the run is on the writer thread
        change = append(record, messages_from(1, 1))
        appending = asyncio.create_task(storage.sessions.apply_change(TENANT, change))
        await asyncio.sleep(0.2)
        assert not appending.done()  # waits for the run, not inside it
        release.set()
        await asyncio.wait_for(asyncio.gather(run, appending), scaled(10))
        assert stored_messages(tmp_path, "s") == [1]
        assert await storage.sessions.get_session(TENANT, "s") == change.record
        with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
            made = db.execute("SELECT count(*) FROM sessions WHERE session_id = 'run'").fetchone()
        assert made == (1,)  # the run's own change, committed
    finally:
        release.set()
        await storage.close()


async def test_the_loop_does_not_wait_for_another_process_lock(tmp_path: Path) -> None:
    """Another connection holds the file's write lock: the append does not
    block the loop (it keeps ticking) and commits once the lock is gone."""
    storage, (record,) = await started(tmp_path, "s")
    other = sqlite3.connect(tmp_path / DATABASE_FILE, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        change = append(record, messages_from(1, 1))
        started_at = time.monotonic()
        appending = asyncio.create_task(storage.sessions.apply_change(TENANT, change))
        ticks = 0
        while time.monotonic() - started_at < 0.3:
            await asyncio.sleep(0.01)
            ticks += 1
        assert not appending.done()
        assert ticks >= 10  # the loop was never held for the lock
        other.execute("ROLLBACK")
        await asyncio.wait_for(appending, scaled(10))
        assert stored_messages(tmp_path, "s") == [1]
    finally:
        other.close()
        await storage.close()


async def test_appends_queued_behind_one_commit_in_the_next_group(tmp_path: Path) -> None:
    """Many sessions' appends at once: the first runs at once, the others
    queue while it commits; every one is acknowledged and durable, and the
    store's writes still go on after."""
    names = [f"s{n}" for n in range(24)]
    storage, records = await started(tmp_path, *names)
    try:
        changes = [append(record, messages_from(1, 1)) for record in records]
        await asyncio.gather(*(storage.sessions.apply_change(TENANT, c) for c in changes))
        more = [append(c.record, messages_from(2, 1)) for c in changes]
        await asyncio.gather(*(storage.sessions.apply_change(TENANT, c) for c in more))
    finally:
        await storage.close()
    assert all(stored_messages(tmp_path, name) == [1, 2] for name in names)


def append_threads(storage: EmbeddedStorage) -> list[int]:
    """The threads that run the one-message append statement on the writer
    connection, in order (the loop's when it ran at once)."""
    threads: list[int] = []

    def traced(statement: str) -> None:
        if statement.startswith("INSERT INTO sk_append_one"):
            threads.append(threading.get_ident())

    assert storage._db is not None
    storage._db.set_trace_callback(traced)
    return threads


async def test_a_small_append_to_an_idle_writer_runs_on_the_loop_a_large_one_does_not(
    tmp_path: Path,
) -> None:
    storage, (record,) = await started(tmp_path, "s")
    try:
        threads = append_threads(storage)
        small = append(record, messages_from(1, 1))
        await storage.sessions.apply_change(TENANT, small)
        small_threads = set(threads)
        threads.clear()
        (large_message,) = messages_from(2, 1)
        large_message = replace(large_message, content="x" * (SMALL_WRITE_BYTES + 1))
        large = append(small.record, [large_message])
        await storage.sessions.apply_change(TENANT, large)
    finally:
        await storage.close()
    loop_thread = threading.get_ident()
    assert small_threads == {loop_thread}  # the small one: at once, on the loop
    assert threads and loop_thread not in threads  # the large one: on the writer thread
    assert stored_messages(tmp_path, "s") == [1, 2]


async def test_a_run_that_rolls_back_outside_a_transaction_loses_no_append(
    tmp_path: Path,
) -> None:
    """A run on the writer thread, not in a transaction, that rolls back
    (a failed `with db:` does): an append meanwhile must not run at once, or
    the run would roll its statements back after it was acknowledged."""
    storage, (record,) = await started(tmp_path, "s")
    go = threading.Event()
    try:

        def rolls_back(db: sqlite3.Connection) -> None:
            go.wait(scaled(10))
            time.sleep(0.05)
            db.rollback()

        run = asyncio.create_task(storage.run(rolls_back))
        await asyncio.sleep(0.05)  # the run is on the writer thread
        change = append(record, messages_from(1, 1))
        appending = asyncio.create_task(storage.sessions.apply_change(TENANT, change))
        await asyncio.sleep(0)
        go.set()
        await asyncio.wait_for(asyncio.gather(run, appending), scaled(10))
    finally:
        go.set()
        await storage.close()
    assert stored_messages(tmp_path, "s") == [1]  # acknowledged, so stored


async def test_a_run_cancelled_while_queued_leaves_appends_running_at_once(
    tmp_path: Path,
) -> None:
    storage, (record,) = await started(tmp_path, "s")
    release = threading.Event()
    try:
        blocking = asyncio.create_task(storage.run(lambda db: release.wait(scaled(10))))
        await asyncio.sleep(0.05)
        queued = asyncio.create_task(storage.run(lambda db: None))
        await asyncio.sleep(0.01)
        queued.cancel()  # before the writer thread ever ran it
        release.set()
        await blocking
        with contextlib.suppress(asyncio.CancelledError):
            await queued
        threads = append_threads(storage)
        await storage.sessions.apply_change(TENANT, append(record, messages_from(1, 1)))
    finally:
        release.set()
        await storage.close()
    assert set(threads) == {threading.get_ident()}  # at once again: the run no longer counts
