"""EraseUser on PostgreSQL: runs storage/shared/erasure.py's steps, one
transaction per batch (a dry run: every batch in one transaction, rolled
back). Deleted rows leave the tables at once; their bytes stay in the heap
files (and WAL, backups) until VACUUM reuses the space, as for any DELETE.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import redis.asyncio as redis

from statekeeper.core.privacy.models import ERASE_BATCH
from statekeeper.storage.shared.erasure import POSTGRES, Erasure, Step

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection, PostgresStorage


async def _run_step(conn: Connection, step: Step, erasure: Erasure, limit: int) -> int:
    sql, params = step.sql(POSTGRES, limit)
    if step.returning:
        rows = await conn.fetch(sql, *params)
        erasure.collected.setdefault((step.capability, step.kind), []).extend(r[0] for r in rows)
        deleted = len(rows)
    else:
        status = await conn.execute(sql, *params)
        deleted = int(status.split()[-1])
    if deleted and step.after:
        after, after_params = step.after_sql(POSTGRES, deleted)
        await conn.execute(after, *after_params)
    erasure.counts.add(step.capability, step.kind, deleted)
    return deleted


# Work a store adds at the end of the erasure's last transaction (or of the
# dry run's), e.g. logging the vector change.
Finish = Callable[["Connection", Erasure], Awaitable[None]]
# Steps that depend on what the first ones deleted (e.g. the blobs of the
# deleted checkpoint channels).
Then = Callable[[Erasure], Sequence[Step]]


async def run_steps(
    db: PostgresStorage,
    steps: Sequence[Step],
    dry_run: bool,
    then: Then | None = None,
    finish: Finish | None = None,
    limit: int | None = None,
) -> Erasure:
    """Runs every step to the end, then the steps `then` makes of what they
    deleted, then `finish`; each batch a transaction of its own."""
    limit = limit or ERASE_BATCH  # read at call time: tests lower it
    erasure = Erasure()
    if dry_run:
        async with db.connection("erase user (dry run)") as conn:
            transaction = conn.transaction()
            await transaction.start()
            try:
                for step in steps:
                    while await _run_step(conn, step, erasure, limit) >= limit:
                        pass
                for step in then(erasure) if then is not None else ():
                    while await _run_step(conn, step, erasure, limit) >= limit:
                        pass
                if finish is not None:
                    await finish(conn, erasure)
            finally:
                await transaction.rollback()
        return erasure
    for step in steps:
        await _to_the_end(db, step, erasure, limit)
    for step in then(erasure) if then is not None else ():
        await _to_the_end(db, step, erasure, limit)
    if finish is not None:
        async with db.transaction("erase user") as conn:
            await finish(conn, erasure)
    return erasure


async def _to_the_end(db: PostgresStorage, step: Step, erasure: Erasure, limit: int) -> None:
    while True:
        async with db.transaction("erase user") as conn:
            deleted = await _run_step(conn, step, erasure, limit)
        if deleted < limit:
            return


async def drop_redis_keys(url: str | None, keys: Sequence[str]) -> int:
    """Deletes these Redis keys (best effort: Redis only holds copies)."""
    if not url or not keys:
        return 0
    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        return int(await client.delete(*keys))
    finally:
        await client.aclose()
