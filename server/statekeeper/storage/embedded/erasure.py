"""EraseUser on SQLite: runs storage/shared/erasure.py's steps on the writer
connection, one transaction per batch (a dry run: counts in one read
snapshot on a reader connection, nothing deleted or locked).

Batches run with `secure_delete` on, so the freed pages are overwritten
rather than left in the file; after a real erasure the WAL is checkpointed
(TRUNCATE, best effort: a reader still on an older snapshot keeps it), so
old copies of the rows do not linger in the WAL either, and the FTS5 index
of episodes is merged, so deleted terms leave its segments.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from statekeeper.core.privacy.models import ERASE_BATCH
from statekeeper.storage.shared.erasure import SQLITE, Erasure, Step, run_passes

T = TypeVar("T")


class Backend(Protocol):
    """What an erasure needs of the embedded store (EmbeddedStorage): its
    writer thread and its readers."""

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T: ...

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T: ...


def _run_step(db: sqlite3.Connection, step: Step, erasure: Erasure, limit: int) -> int:
    sql, params = step.sql(SQLITE, limit)
    rows = db.execute(sql, params).fetchall()
    if step.returning:
        erasure.collected.setdefault((step.capability, step.kind), []).extend(r[0] for r in rows)
    deleted = len(rows) if step.returning else db.execute("SELECT changes()").fetchone()[0]
    if deleted and step.after:
        after, after_params = step.after_sql(SQLITE, deleted)
        db.execute(after, after_params)
    erasure.counts.add(step.capability, step.kind, deleted)
    return int(deleted)


def _batch(db: sqlite3.Connection, step: Step, erasure: Erasure, limit: int) -> int:
    db.execute("PRAGMA secure_delete=ON")
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            deleted = _run_step(db, step, erasure, limit)
            db.commit()
        except BaseException:
            db.rollback()
            raise
    finally:
        db.execute("PRAGMA secure_delete=OFF")
    return deleted


def _count(db: sqlite3.Connection, steps: Sequence[Step], erasure: Erasure) -> None:
    """A dry run: each step's rows counted in one read snapshot."""
    db.execute("BEGIN")
    try:
        for step in steps:
            sql, params = step.count_sql(SQLITE)
            erasure.counts.add(step.capability, step.kind, db.execute(sql, params).fetchone()[0])
    finally:
        db.rollback()


async def run_steps(
    backend: Backend,
    steps: Sequence[Step],
    dry_run: bool,
    limit: int | None = None,
) -> Erasure:
    """Runs each step until a batch deletes nothing, each batch a
    transaction of its own (the writer thread is free between batches),
    and the whole list again until a pass deletes nothing (MAX_PASSES at
    most). After a real erasure that deleted anything, the WAL is
    checkpointed. A dry run only counts."""
    limit = limit or ERASE_BATCH  # read at call time: tests lower it
    erasure = Erasure(dry_run)
    if dry_run:
        # On a reader connection: the writer (and its lock) stays free.
        await backend.read(functools.partial(_count, steps=steps, erasure=erasure))
        return erasure

    async def to_the_end(step: Step) -> None:
        batch = functools.partial(_batch, step=step, erasure=erasure, limit=limit)
        while await backend.run(batch):
            pass

    await run_passes(erasure, steps, to_the_end, functools.partial(_rows_left, backend, steps))
    if erasure.counts.total:
        await backend.run(checkpoint_wal)
    return erasure


async def _rows_left(backend: Backend, steps: Sequence[Step]) -> int:
    """How many rows the steps would still delete (a dry run's count)."""
    left = Erasure(dry_run=True)
    await backend.read(functools.partial(_count, steps=steps, erasure=left))
    return left.counts.total


def merge_terms(db: sqlite3.Connection) -> None:
    """Merges the FTS5 index of episode terms: deleted rows' terms leave its
    segments (FTS5 keeps them until a merge)."""
    db.execute("PRAGMA secure_delete=ON")
    try:
        with db:
            db.execute(
                "INSERT INTO memory_episode_terms (memory_episode_terms) VALUES ('optimize')"
            )
    finally:
        db.execute("PRAGMA secure_delete=OFF")


def checkpoint_wal(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
