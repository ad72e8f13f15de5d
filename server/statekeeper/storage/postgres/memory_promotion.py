"""PostgreSQL store of session promotion watermarks (core/memory/promotion.py).

One small table next to the memory tables, with its own migration table,
`memory_promotion_schema_migrations`, applied at start under an advisory
lock (replicas starting together apply it once). Replicas share the rows:
the compare-and-set in `advance` keeps a watermark moving forward only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from statekeeper.core.memory.promotion import PromotionMark, PromotionStore
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
)


class PostgresPromotionStore(PromotionStore):
    def __init__(self, db: PostgresStorage) -> None:
        self._db = db

    async def start(self) -> None:
        async with self._db.connection("memory promotion migrations") as conn:
            await apply_migrations(
                conn, "memory_promotion_schema_migrations", PROMOTION_LOCK_KEY, PROMOTION_MIGRATIONS
            )

    async def mark(self, marks: Sequence[tuple[str, str, int]]) -> None:
        if not marks:
            return
        now = time.time()
        # Sorted: two replicas marking the same sessions lock rows in one order.
        ordered = sorted(marks)
        async with self._db.connection("mark sessions for promotion") as conn:
            await conn.execute(
                "INSERT INTO memory_promotions AS p (tenant, session_id, seen_through,"
                " update_time) SELECT t, s, q, $4 FROM unnest($1::text[], $2::text[],"
                " $3::bigint[]) AS m(t, s, q) ON CONFLICT (tenant, session_id) DO UPDATE"
                " SET seen_through = greatest(p.seen_through, excluded.seen_through),"
                " update_time = excluded.update_time",
                [m[0] for m in ordered],
                [m[1] for m in ordered],
                [m[2] for m in ordered],
                now,
            )

    async def get(self, tenant: str, session_id: str) -> PromotionMark | None:
        async with self._db.connection("read promotion watermark") as conn:
            row = await conn.fetchrow(
                "SELECT promoted_through, checked_through, seen_through FROM memory_promotions"
                " WHERE tenant = $1 AND session_id = $2",
                tenant,
                session_id,
            )
        if row is None:
            return None
        return PromotionMark(int(row[0]), int(row[1]), int(row[2]))

    async def advance(
        self, tenant: str, session_id: str, expected: int, promoted_through: int, checked: int
    ) -> bool:
        now = time.time()
        async with self._db.transaction("advance promotion watermark") as conn:
            if expected == 0:
                await conn.execute(
                    "INSERT INTO memory_promotions (tenant, session_id, update_time)"
                    " VALUES ($1, $2, $3) ON CONFLICT (tenant, session_id) DO NOTHING",
                    tenant,
                    session_id,
                    now,
                )
            status = await conn.execute(
                "UPDATE memory_promotions SET promoted_through = $1,"
                " checked_through = greatest(checked_through, $2), update_time = $3"
                " WHERE tenant = $4 AND session_id = $5 AND promoted_through = $6",
                promoted_through,
                checked,
                now,
                tenant,
                session_id,
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
