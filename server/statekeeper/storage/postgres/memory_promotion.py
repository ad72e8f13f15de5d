"""PostgreSQL store of session promotion watermarks (core/memory/promotion.py).

One small table next to the memory tables, with its own migration table,
`memory_promotion_schema_migrations`, applied at start under an advisory
lock (replicas starting together apply it once). Replicas share the rows:
the compare-and-set in `advance` keeps a watermark moving forward only.
Each row names its session's incarnation (user_id, session_create_time:
migration 3; 0 on older rows, taken as the current one).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from statekeeper.core.memory.promotion import MarkRequest, PromotionMark, PromotionStore
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.sessions.models import SessionRecord
from statekeeper.storage.postgres.migrations import Migration, apply_migrations
from statekeeper.storage.postgres.sessions import PostgresStorage

PROMOTION_LOCK_KEY = int.from_bytes(b"skmempro", "big")
PROMOTION_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "session promotion watermarks",
        (
            """CREATE TABLE memory_promotions (
                tenant text NOT NULL,
                session_id text NOT NULL,
                promoted_through bigint NOT NULL DEFAULT 0,
                checked_through bigint NOT NULL DEFAULT 0,
                seen_through bigint NOT NULL DEFAULT 0,
                update_time double precision NOT NULL,
                PRIMARY KEY (tenant, session_id)
            )""",
        ),
    ),
    Migration(
        2,
        "index of the sessions the sweep visits",
        (
            # A partial index stays as small as the backlog.
            "CREATE INDEX memory_promotions_lagging ON memory_promotions (tenant, session_id)"
            " WHERE seen_through > checked_through",
        ),
    ),
    Migration(
        3,
        "the session incarnation of each watermark",
        (
            "ALTER TABLE memory_promotions ADD COLUMN user_id text NOT NULL DEFAULT ''",
            "ALTER TABLE memory_promotions ADD COLUMN session_create_time double precision"
            " NOT NULL DEFAULT 0",
            "CREATE INDEX memory_promotions_by_user ON memory_promotions (tenant, user_id)",
        ),
    ),
)

_ERASE_BATCH = 1000


class PostgresPromotionStore(PromotionStore):
    def __init__(self, db: PostgresStorage) -> None:
        self._db = db

    async def start(self) -> None:
        async with self._db.connection("memory promotion migrations") as conn:
            await apply_migrations(
                conn, "memory_promotion_schema_migrations", PROMOTION_LOCK_KEY, PROMOTION_MIGRATIONS
            )

    async def mark(self, marks: Sequence[MarkRequest]) -> None:
        if not marks:
            return
        now = time.time()
        # Sorted: two replicas marking the same sessions lock rows in one order.
        ordered = sorted(marks, key=lambda m: (m.tenant, m.session_id))
        same = "p.session_create_time IN (excluded.session_create_time, 0)"
        async with self._db.connection("mark sessions for promotion") as conn:
            await conn.execute(
                "INSERT INTO memory_promotions AS p (tenant, session_id, user_id,"
                " session_create_time, seen_through, update_time)"
                " SELECT DISTINCT ON (t, s) t, s, u, c, q, $6 FROM unnest($1::text[], $2::text[],"
                " $3::text[], $4::double precision[], $5::bigint[]) AS m(t, s, u, c, q)"
                " ORDER BY t, s, q DESC"
                " ON CONFLICT (tenant, session_id) DO UPDATE SET"
                f" promoted_through = CASE WHEN {same} THEN p.promoted_through ELSE 0 END,"
                f" checked_through = CASE WHEN {same} THEN p.checked_through ELSE 0 END,"
                f" seen_through = CASE WHEN {same}"
                " THEN greatest(p.seen_through, excluded.seen_through)"
                " ELSE excluded.seen_through END,"
                " user_id = excluded.user_id,"
                " session_create_time = excluded.session_create_time,"
                " update_time = excluded.update_time",
                [m.tenant for m in ordered],
                [m.session_id for m in ordered],
                [m.user_id for m in ordered],
                [m.create_time for m in ordered],
                [m.last_sequence for m in ordered],
                now,
            )

    async def get(self, tenant: str, session_id: str) -> PromotionMark | None:
        async with self._db.connection("read promotion watermark") as conn:
            row = await conn.fetchrow(
                "SELECT promoted_through, checked_through, seen_through, user_id,"
                " session_create_time FROM memory_promotions"
                " WHERE tenant = $1 AND session_id = $2",
                tenant,
                session_id,
            )
        if row is None:
            return None
        return PromotionMark(int(row[0]), int(row[1]), int(row[2]), str(row[3]), float(row[4]))

    async def advance(
        self, record: SessionRecord, tenant: str, expected: int, promoted_through: int, checked: int
    ) -> bool:
        now = time.time()
        same = "session_create_time IN ($5, 0)"
        async with self._db.transaction("advance promotion watermark") as conn:
            await conn.execute(
                "INSERT INTO memory_promotions (tenant, session_id, user_id,"
                " session_create_time, update_time) VALUES ($1, $2, $3, $4, $5)"
                " ON CONFLICT (tenant, session_id) DO NOTHING",
                tenant,
                record.session_id,
                record.user_id,
                record.create_time,
                now,
            )
            status = await conn.execute(
                "UPDATE memory_promotions SET promoted_through = $6,"
                f" checked_through = CASE WHEN {same}"
                " THEN greatest(checked_through, $7) ELSE $7 END,"
                f" seen_through = CASE WHEN {same} THEN seen_through ELSE 0 END,"
                " user_id = $3, session_create_time = $5, update_time = $4"
                " WHERE tenant = $1 AND session_id = $2"
                f" AND CASE WHEN {same} THEN promoted_through ELSE 0 END = $8",
                tenant,
                record.session_id,
                record.user_id,
                now,
                record.create_time,
                promoted_through,
                checked,
                expected,
            )
        return str(status).endswith(" 1")

    async def lagging(self, after: tuple[str, str], limit: int) -> list[tuple[str, str]]:
        async with self._db.connection("sessions to promote") as conn:
            rows = await conn.fetch(
                "SELECT tenant, session_id FROM memory_promotions"
                " WHERE seen_through > checked_through AND (tenant, session_id) > ($1, $2)"
                " ORDER BY tenant, session_id LIMIT $3",
                after[0],
                after[1],
                limit,
            )
        return [(str(r[0]), str(r[1])) for r in rows]

    async def forget(self, tenant: str, session_id: str) -> None:
        async with self._db.connection("forget promotion watermark") as conn:
            await conn.execute(
                "DELETE FROM memory_promotions WHERE tenant = $1 AND session_id = $2",
                tenant,
                session_id,
            )

    async def prune(self, after: tuple[str, str], limit: int) -> tuple[int, tuple[str, str] | None]:
        async with self._db.connection("prune promotion watermarks") as conn:
            keys = await conn.fetch(
                "SELECT tenant, session_id FROM memory_promotions"
                " WHERE (tenant, session_id) > ($1, $2) ORDER BY tenant, session_id LIMIT $3",
                after[0],
                after[1],
                limit,
            )
            if not keys:
                return 0, None
            last = (str(keys[-1][0]), str(keys[-1][1]))
            status = await conn.execute(
                "DELETE FROM memory_promotions p WHERE (p.tenant, p.session_id) > ($1, $2)"
                " AND (p.tenant, p.session_id) <= ($3, $4) AND NOT EXISTS (SELECT 1 FROM"
                " sessions s WHERE s.tenant = p.tenant AND s.session_id = p.session_id)",
                after[0],
                after[1],
                last[0],
                last[1],
            )
        removed = int(str(status).rsplit(" ", 1)[-1])
        return removed, (last if len(keys) == limit else None)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        counts = ErasureCounts()
        async with self._db.connection("erase promotion watermarks") as conn:
            if dry_run:
                found = await conn.fetchval(
                    "SELECT count(*) FROM memory_promotions WHERE tenant = $1 AND user_id = $2",
                    tenant,
                    subject.user_id,
                )
                counts.add("memory", "promotion_watermarks", int(found or 0))
                return counts
            total = 0
            for _ in range(1_000_000):  # bounded: each batch deletes rows or ends
                status = await conn.execute(
                    "DELETE FROM memory_promotions WHERE ctid IN (SELECT ctid FROM"
                    " memory_promotions WHERE tenant = $1 AND user_id = $2 LIMIT $3)",
                    tenant,
                    subject.user_id,
                    _ERASE_BATCH,
                )
                deleted = int(str(status).rsplit(" ", 1)[-1])
                total += deleted
                if deleted == 0:
                    break
        counts.add("memory", "promotion_watermarks", total)
        return counts
