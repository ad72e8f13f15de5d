"""EraseUser on PostgreSQL: runs storage/shared/erasure.py's steps, one
transaction per batch (a dry run: counts in one read-only snapshot).
Deleted rows leave the tables at once; their bytes stay in the heap files
(and WAL, backups) until VACUUM reuses the space, as for any DELETE.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

import redis.asyncio as redis

from statekeeper.core.privacy.models import ERASE_BATCH
from statekeeper.storage.shared.erasure import POSTGRES, Erasure, Step, run_passes

if TYPE_CHECKING:
    from statekeeper.storage.postgres.migrations import Connection


class Database(Protocol):
    """What an erasure needs of the PostgreSQL tier (PostgresStorage): pooled
    connections and transactions."""

    def connection(self, what: str) -> AbstractAsyncContextManager[Connection]: ...

    def transaction(self, what: str) -> AbstractAsyncContextManager[Connection]: ...


async def _run_step(conn: Connection, step: Step, erasure: Erasure, limit: int) -> list[object]:
    """One batch of `step`; returns the `returning` values (or, without
    them, one None per row deleted)."""
    if step.lock:
        lock, lock_params = step.lock_sql(POSTGRES)
        await conn.execute(lock, *lock_params)
    sql, params = step.sql(POSTGRES, limit)
    values: list[object]
    if step.returning:
        rows = await conn.fetch(sql, *params)
        values = [r[0] for r in rows]
        erasure.collected.setdefault((step.capability, step.kind), []).extend(values)
    else:
        status = await conn.execute(sql, *params)
        values = [None] * int(status.split()[-1])
    if values and step.after:
        after, after_params = step.after_sql(POSTGRES, len(values))
        await conn.execute(after, *after_params)
    erasure.counts.add(step.capability, step.kind, len(values))
    return values


# Work a store adds to each batch's transaction (e.g. logging the vector
# change of the episodes it deletes), then after its commit (e.g.
# invalidating cached copies of the sessions it deleted); given the batch's
# `returning` values.
InBatch = Callable[["Connection", Step, Sequence[object]], Awaitable[None]]
Committed = Callable[[Step, Sequence[object]], Awaitable[None]]
# Work a store adds at the end of a real erasure in a transaction of its
# own, or to the dry run's read-only snapshot (Erasure.dry_run tells which).
Finish = Callable[["Connection", Erasure], Awaitable[None]]


async def run_steps(
    db: Database,
    steps: Sequence[Step],
    dry_run: bool,
    finish: Finish | None = None,
    limit: int | None = None,
    in_batch: InBatch | None = None,
    committed: Committed | None = None,
) -> Erasure:
    """Runs each step until a batch deletes nothing (a batch that deletes
    fewer than `limit` rows does not mean none is left: concurrent updates
    move rows), each batch a transaction of its own, and the whole list
    again until a pass deletes nothing (MAX_PASSES at most); then `finish`.
    A dry run counts each step's rows in one read-only snapshot: no row or
    tenant lock taken, no writer stalled."""
    limit = limit or ERASE_BATCH  # read at call time: tests lower it
    erasure = Erasure(dry_run)
    if dry_run:
        await _count(db, steps, erasure, finish)
        return erasure

    async def to_the_end(step: Step) -> None:
        await _to_the_end(db, step, erasure, limit, in_batch, committed)

    await run_passes(erasure, steps, to_the_end, functools.partial(_rows_left, db, steps))
    if finish is not None:
        async with db.transaction("erase user") as conn:
            await finish(conn, erasure)
    return erasure


async def _rows_left(db: Database, steps: Sequence[Step]) -> int:
    """How many rows the steps would still delete (a dry run's count)."""
    left = Erasure(dry_run=True)
    await _count(db, steps, left)
    return left.counts.total


async def _count(
    db: Database, steps: Sequence[Step], erasure: Erasure, finish: Finish | None = None
) -> None:
    """Counts each step's rows into `erasure`, in one read-only snapshot."""
    async with (
        db.connection("erase user (count)") as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        for step in steps:
            sql, params = step.count_sql(POSTGRES)
            count = await conn.fetchval(sql, *params)
            erasure.counts.add(step.capability, step.kind, int(count))
        if finish is not None:
            await finish(conn, erasure)


async def _to_the_end(
    db: Database,
    step: Step,
    erasure: Erasure,
    limit: int,
    in_batch: InBatch | None,
    committed: Committed | None,
) -> None:
    while True:
        async with db.transaction("erase user") as conn:
            values = await _run_step(conn, step, erasure, limit)
            if values and in_batch is not None:
                await in_batch(conn, step, values)
        if not values:
            return
        if committed is not None:
            await committed(step, values)


async def drop_redis_keys(url: str | None, keys: Sequence[str]) -> int:
    """Deletes these Redis keys (best effort: Redis only holds copies)."""
    if not url or not keys:
        return 0
    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        return int(await client.delete(*keys))
    finally:
        await client.aclose()
