"""Used-up archive chunks (table archive_consumed, sessions schema 6), per
backend. A chunk is used up when a restore inserts it, or when an erasure
or a delete removes its unit: a restore that read the chunk earlier checks
this inside its own transaction and inserts nothing (core/archive/store.py,
ChunkUsedUpError), so erased or deleted rows never come back."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from statekeeper.core.archive.store import ChunkUsedUpError

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

_INSERT_SQLITE = (
    "INSERT OR IGNORE INTO archive_consumed (tenant, chunk_sha256, consumed_at) VALUES (?, ?, ?)"
)
_INSERT_POSTGRES = (
    "INSERT INTO archive_consumed (tenant, chunk_sha256, consumed_at) VALUES ($1, $2, $3)"
    " ON CONFLICT DO NOTHING"
)


def consume_sqlite(db: sqlite3.Connection, tenant: str, fence: str) -> None:
    """Marks the chunk used up in the caller's transaction; ChunkUsedUpError if
    it already was (nothing of it may be inserted). No fence: no check."""
    if fence and db.execute(_INSERT_SQLITE, (tenant, fence, time.time())).rowcount != 1:
        raise ChunkUsedUpError(fence)


async def lock_restore_postgres(conn: Connection, capability: str, tenant: str, unit: str) -> None:
    """Held to the end of the caller's transaction: two replicas restoring
    one unit at once take turns (the second then finds it hot)."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        f"archive\x1f{capability}\x1f{tenant}\x1f{unit}",
    )


async def consume_postgres(conn: Connection, tenant: str, fence: str) -> None:
    """`consume_sqlite` on PostgreSQL."""
    if fence and await conn.execute(_INSERT_POSTGRES, tenant, fence, time.time()) != "INSERT 0 1":
        raise ChunkUsedUpError(fence)


def used_up_sqlite(db: sqlite3.Connection, tenant: str, fences: Sequence[str]) -> set[str]:
    marks = ", ".join("?" for _ in fences)
    rows = db.execute(
        f"SELECT chunk_sha256 FROM archive_consumed WHERE tenant = ? AND chunk_sha256 IN ({marks})",
        (tenant, *fences),
    )
    return {str(row[0]) for row in rows}


async def used_up_postgres(conn: Connection, tenant: str, fences: Sequence[str]) -> set[str]:
    rows = await conn.fetch(
        "SELECT chunk_sha256 FROM archive_consumed WHERE tenant = $1"
        " AND chunk_sha256 = ANY($2::text[])",
        tenant,
        list(fences),
    )
    return {str(row[0]) for row in rows}


def mark_sqlite(db: sqlite3.Connection, tenant: str, fences: Sequence[str]) -> None:
    """Marks chunks used up (an erasure or a delete removing their unit)."""
    db.executemany(_INSERT_SQLITE, [(tenant, fence, time.time()) for fence in fences])


async def mark_postgres(conn: Connection, tenant: str, fences: Sequence[str]) -> None:
    await conn.executemany(_INSERT_POSTGRES, [(tenant, fence, time.time()) for fence in fences])
