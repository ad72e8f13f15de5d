"""EraseUser on SQLite: runs storage/shared/erasure.py's steps on the writer
connection, one transaction per batch (a dry run: every batch in one
transaction, rolled back).

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
from typing import TYPE_CHECKING

from statekeeper.core.privacy.models import ERASE_BATCH
from statekeeper.storage.shared.erasure import SQLITE, Erasure, Step

if TYPE_CHECKING:
    from statekeeper.storage.embedded.sessions import EmbeddedStorage

# Steps that depend on what the first ones deleted (e.g. the blobs of the
# deleted checkpoint channels).
Then = Callable[["Erasure"], Sequence[Step]]


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


def _dry(
    db: sqlite3.Connection, steps: Sequence[Step], then: Then | None, erasure: Erasure, limit: int
) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        for step in steps:
            while _run_step(db, step, erasure, limit) >= limit:
                pass
        for step in then(erasure) if then is not None else ():
            while _run_step(db, step, erasure, limit) >= limit:
                pass
    finally:
        db.rollback()


async def run_steps(
    backend: EmbeddedStorage,
    steps: Sequence[Step],
    dry_run: bool,
    then: Then | None = None,
    limit: int | None = None,
) -> Erasure:
    """Runs every step to the end, then the steps `then` makes of what they
    deleted; each batch a transaction of its own (the writer thread is free
    between batches). After a real erasure that deleted anything, the WAL
    is checkpointed."""
    limit = limit or ERASE_BATCH  # read at call time: tests lower it
    erasure = Erasure()
    if dry_run:
        await backend.run(
            functools.partial(_dry, steps=steps, then=then, erasure=erasure, limit=limit)
        )
        return erasure
    for group in (steps, None):
        for step in group if group is not None else (then(erasure) if then else ()):
            batch = functools.partial(_batch, step=step, erasure=erasure, limit=limit)
            while await backend.run(batch) >= limit:
                pass
    if erasure.counts.total:
        await backend.run(checkpoint_wal)
    return erasure


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
