"""Embedded (SQLite) store of session promotion watermarks (core/memory/promotion.py).

One small table in the embedded file with its own migration table,
`memory_promotion_schema_migrations`, applied at start on the database thread.
Each row names its session's incarnation (user_id, session_create_time:
migration 3; 0 on older rows, taken as the current one).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from statekeeper.core.memory.promotion import MarkRequest, PromotionMark, PromotionStore
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.sessions.models import SessionRecord
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
    (
        3,
        [
            # The session's incarnation: a session created again under the
            # same id starts from 0; EraseUser deletes the user's rows.
            "ALTER TABLE memory_promotions ADD COLUMN user_id TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE memory_promotions ADD COLUMN session_create_time REAL NOT NULL DEFAULT 0",
            "CREATE INDEX memory_promotions_by_user ON memory_promotions (tenant, user_id)",
        ],
    ),
]

# The row belongs to the incarnation bound to :ct (or predates the column).
_SAME = "session_create_time IN (:ct, 0)"
_ERASE_BATCH = 1000


class EmbeddedPromotionStore(PromotionStore):
    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend

    async def start(self) -> None:
        await self._backend.run(
            lambda db: apply_migrations(
                db, "memory_promotion_schema_migrations", PROMOTION_MIGRATIONS
            )
        )

    async def mark(self, marks: Sequence[MarkRequest]) -> None:
        now = time.time()
        rows = [
            {
                "tenant": m.tenant,
                "sid": m.session_id,
                "user": m.user_id,
                "ct": m.create_time,
                "seq": m.last_sequence,
                "now": now,
            }
            for m in marks
        ]
        same = "session_create_time IN (excluded.session_create_time, 0)"

        def work(db: sqlite3.Connection) -> None:
            with db:
                db.executemany(
                    "INSERT INTO memory_promotions (tenant, session_id, user_id,"
                    " session_create_time, seen_through, update_time)"
                    " VALUES (:tenant, :sid, :user, :ct, :seq, :now)"
                    " ON CONFLICT (tenant, session_id) DO UPDATE SET"
                    f" promoted_through = CASE WHEN {same} THEN promoted_through ELSE 0 END,"
                    f" checked_through = CASE WHEN {same} THEN checked_through ELSE 0 END,"
                    f" seen_through = CASE WHEN {same}"
                    " THEN max(seen_through, excluded.seen_through)"
                    " ELSE excluded.seen_through END,"
                    " user_id = excluded.user_id,"
                    " session_create_time = excluded.session_create_time,"
                    " update_time = excluded.update_time",
                    rows,
                )

        await self._backend.run(work)

    async def get(self, tenant: str, session_id: str) -> PromotionMark | None:
        def work(db: sqlite3.Connection) -> PromotionMark | None:
            row = db.execute(
                "SELECT promoted_through, checked_through, seen_through, user_id,"
                " session_create_time FROM memory_promotions"
                " WHERE tenant = ? AND session_id = ?",
                (tenant, session_id),
            ).fetchone()
            if row is None:
                return None
            return PromotionMark(int(row[0]), int(row[1]), int(row[2]), str(row[3]), float(row[4]))

        return await self._backend.run(work)

    async def advance(
        self, record: SessionRecord, tenant: str, expected: int, promoted_through: int, checked: int
    ) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            params = {
                "tenant": tenant,
                "sid": record.session_id,
                "user": record.user_id,
                "ct": record.create_time,
                "now": time.time(),
                "through": promoted_through,
                "checked": checked,
                "expected": expected,
            }
            with db:
                db.execute(
                    "INSERT INTO memory_promotions (tenant, session_id, user_id,"
                    " session_create_time, update_time) VALUES (:tenant, :sid, :user, :ct, :now)"
                    " ON CONFLICT (tenant, session_id) DO NOTHING",
                    params,
                )
                changed = db.execute(
                    "UPDATE memory_promotions SET promoted_through = :through,"
                    f" checked_through = CASE WHEN {_SAME}"
                    " THEN max(checked_through, :checked) ELSE :checked END,"
                    f" seen_through = CASE WHEN {_SAME} THEN seen_through ELSE 0 END,"
                    " user_id = :user, session_create_time = :ct, update_time = :now"
                    " WHERE tenant = :tenant AND session_id = :sid"
                    f" AND CASE WHEN {_SAME} THEN promoted_through ELSE 0 END = :expected",
                    params,
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

    async def prune(self, after: tuple[str, str], limit: int) -> tuple[int, tuple[str, str] | None]:
        def work(db: sqlite3.Connection) -> tuple[int, tuple[str, str] | None]:
            with db:
                keys = db.execute(
                    "SELECT tenant, session_id FROM memory_promotions"
                    " WHERE (tenant, session_id) > (?, ?) ORDER BY tenant, session_id LIMIT ?",
                    (after[0], after[1], limit),
                ).fetchall()
                if not keys:
                    return 0, None
                last = (str(keys[-1][0]), str(keys[-1][1]))
                removed = db.execute(
                    "DELETE FROM memory_promotions WHERE (tenant, session_id) > (?, ?)"
                    " AND (tenant, session_id) <= (?, ?) AND NOT EXISTS (SELECT 1 FROM sessions s"
                    " WHERE s.tenant = memory_promotions.tenant"
                    " AND s.session_id = memory_promotions.session_id)",
                    (after[0], after[1], last[0], last[1]),
                ).rowcount
            return removed, (last if len(keys) == limit else None)

        return await self._backend.run(work)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        def work(db: sqlite3.Connection) -> int:
            if dry_run:
                row = db.execute(
                    "SELECT count(*) FROM memory_promotions WHERE tenant = ? AND user_id = ?",
                    (tenant, subject.user_id),
                ).fetchone()
                return int(row[0])
            total = 0
            for _ in range(1_000_000):  # bounded: each batch deletes rows or ends
                with db:
                    deleted = db.execute(
                        "DELETE FROM memory_promotions WHERE rowid IN (SELECT rowid FROM"
                        " memory_promotions WHERE tenant = ? AND user_id = ? LIMIT ?)",
                        (tenant, subject.user_id, _ERASE_BATCH),
                    ).rowcount
                total += deleted
                if deleted == 0:
                    break
            return total

        counts = ErasureCounts()
        counts.add("memory", "promotion_watermarks", await self._backend.run(work))
        return counts
