"""Embedded (SQLite) store of session promotion watermarks (core/memory/promotion.py).

One small table in the embedded file with its own migration table,
`memory_promotion_schema_migrations`, applied at start on the database thread.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from statekeeper.core.memory.promotion import PromotionMark, PromotionStore
from statekeeper.storage.embedded.migrations import Migrations, apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage

PROMOTION_MIGRATIONS: Migrations = [
    (
        1,
        [
            """CREATE TABLE memory_promotions (
                tenant TEXT NOT NULL,
                session_id TEXT NOT NULL,
                promoted_through INTEGER NOT NULL DEFAULT 0,
                checked_through INTEGER NOT NULL DEFAULT 0,
                seen_through INTEGER NOT NULL DEFAULT 0,
                update_time REAL NOT NULL,
                PRIMARY KEY (tenant, session_id)
            )""",
        ],
    ),
    (
        2,
        [
            # The sweep's rows only: a partial index stays as small as the backlog.
            "CREATE INDEX memory_promotions_lagging ON memory_promotions (tenant, session_id)"
            " WHERE seen_through > checked_through",
        ],
    ),
]


class EmbeddedPromotionStore(PromotionStore):
    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend

    async def start(self) -> None:
        await self._backend.run(
            lambda db: apply_migrations(
                db, "memory_promotion_schema_migrations", PROMOTION_MIGRATIONS
            )
        )

    async def mark(self, marks: Sequence[tuple[str, str, int]]) -> None:
        rows = [(tenant, sid, seq, time.time()) for tenant, sid, seq in marks]

        def work(db: sqlite3.Connection) -> None:
            with db:
                db.executemany(
                    "INSERT INTO memory_promotions (tenant, session_id, seen_through,"
                    " update_time) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, session_id)"
                    " DO UPDATE SET seen_through = max(seen_through, excluded.seen_through),"
                    " update_time = excluded.update_time",
                    rows,
                )

        await self._backend.run(work)

    async def get(self, tenant: str, session_id: str) -> PromotionMark | None:
        def work(db: sqlite3.Connection) -> PromotionMark | None:
            row = db.execute(
                "SELECT promoted_through, checked_through, seen_through FROM memory_promotions"
                " WHERE tenant = ? AND session_id = ?",
                (tenant, session_id),
            ).fetchone()
            return None if row is None else PromotionMark(int(row[0]), int(row[1]), int(row[2]))

        return await self._backend.run(work)

    async def advance(
        self, tenant: str, session_id: str, expected: int, promoted_through: int, checked: int
    ) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            now = time.time()
            with db:
                if expected == 0:
                    db.execute(
                        "INSERT INTO memory_promotions (tenant, session_id, update_time)"
                        " VALUES (?, ?, ?) ON CONFLICT (tenant, session_id) DO NOTHING",
                        (tenant, session_id, now),
                    )
                changed = db.execute(
                    "UPDATE memory_promotions SET promoted_through = ?,"
                    " checked_through = max(checked_through, ?), update_time = ?"
                    " WHERE tenant = ? AND session_id = ? AND promoted_through = ?",
                    (promoted_through, checked, now, tenant, session_id, expected),
                ).rowcount
            return changed == 1

        return await self._backend.run(work)

    async def lagging(self, after: tuple[str, str], limit: int) -> list[tuple[str, str]]:
        def work(db: sqlite3.Connection) -> list[tuple[str, str]]:
            rows = db.execute(
                "SELECT tenant, session_id FROM memory_promotions"
                " WHERE seen_through > checked_through AND (tenant, session_id) > (?, ?)"
                " ORDER BY tenant, session_id LIMIT ?",
                (after[0], after[1], limit),
            ).fetchall()
            return [(str(r[0]), str(r[1])) for r in rows]

        return await self._backend.run(work)

    async def forget(self, tenant: str, session_id: str) -> None:
        def work(db: sqlite3.Connection) -> None:
            with db:
                db.execute(
                    "DELETE FROM memory_promotions WHERE tenant = ? AND session_id = ?",
                    (tenant, session_id),
                )

        await self._backend.run(work)
