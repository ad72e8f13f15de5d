"""Embedded message bus: SQLite inboxes on the shared database thread, and
in-process wake-ups and reply waiters.

Every method runs as one unit of work on the database thread, so a claim,
an ack or a nack is atomic with respect to every other one: competing
receivers never get the same delivery.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import AlreadyExistsError
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    DeadLetterReason,
    Delivery,
    Receipt,
)
from statekeeper.core.messagebus.store import (
    Audit,
    DeadLetterCursor,
    InboxNotifier,
    Lease,
    ReplyWaiters,
    Send,
    redrive_record,
)
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.migrations import apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.erasure import messagebus_steps
from statekeeper.storage.shared.messagebus import (
    ACKED,
    CHANGED_COLUMNS,
    DEAD,
    INSERT_COLUMNS,
    READY,
    Decide,
    Settlement,
    SqlMessageStore,
    changed_values,
    dead_letter_from_row,
    earlier_message,
    inbox_full,
    max_of,
    message_from_row,
    message_values,
)
from statekeeper.storage.sql import Row, audit_values

# Versioned schema of the message bus tables: (version, statements). Append
# only; never edit a released entry.
SCHEMA: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE mb_messages (
                tenant TEXT NOT NULL,
                message_id TEXT NOT NULL,
                to_agent TEXT NOT NULL,
                from_agent TEXT NOT NULL,
                type TEXT NOT NULL,
                content_type TEXT NOT NULL,
                schema_version INTEGER NOT NULL,
                data BLOB NOT NULL,
                reply_to TEXT NOT NULL,
                correlation_id TEXT NOT NULL,
                in_reply_to TEXT NOT NULL,
                headers TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                send_time REAL NOT NULL,
                first_visible_time REAL NOT NULL,
                visible_time REAL NOT NULL,
                expire_time REAL,
                max_deliveries INTEGER NOT NULL,
                delivery_count INTEGER NOT NULL,
                receipt TEXT,
                state INTEGER NOT NULL,
                state_time REAL NOT NULL,
                dead_reason INTEGER,
                dead_detail TEXT,
                PRIMARY KEY (tenant, message_id)
            )""",
            "CREATE INDEX mb_inbox ON mb_messages (tenant, to_agent, state, visible_time)",
            "CREATE INDEX mb_dead ON mb_messages (tenant, to_agent, state, state_time, message_id)",
            "CREATE INDEX mb_by_state ON mb_messages (state, state_time)",
            "CREATE INDEX mb_by_expiry ON mb_messages (expire_time) WHERE expire_time IS NOT NULL",
            """CREATE TABLE mb_dedup (
                tenant TEXT NOT NULL,
                to_agent TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                message_id TEXT NOT NULL,
                expire_time REAL NOT NULL,
                PRIMARY KEY (tenant, to_agent, idempotency_key)
            )""",
            "CREATE INDEX mb_dedup_by_expiry ON mb_dedup (expire_time)",
        ],
    ),
]


class EmbeddedMessageStore(SqlMessageStore):
    """The message bus on the embedded SQLite store."""

    def __init__(self, storage: EmbeddedStorage) -> None:
        self._storage = storage

    async def start(self) -> None:
        await self._storage.run(_migrate)

    async def store_message(
        self, tenant: str, message: AgentMessage, send: Send, record: AuditRecord | None
    ) -> AgentMessage | None:
        def work(db: sqlite3.Connection) -> AgentMessage | None:
            with db:
                earlier = _dedup_hit(db, tenant, message, send.now)
                if earlier is not None:
                    return earlier
                if not send.held:
                    _check_inbox_room(db, tenant, message.to_agent, send.max_inbox_messages)
                db.execute(_INSERT, message_values(tenant, message, send.held, send.now))
                if message.idempotency_key and send.dedup_until is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO mb_dedup (tenant, to_agent, idempotency_key,"
                        " message_id, expire_time) VALUES (?,?,?,?,?)",
                        (
                            tenant,
                            message.to_agent,
                            message.idempotency_key,
                            message.message_id,
                            send.dedup_until,
                        ),
                    )
                _insert_audit(db, tenant, record)
            return None

        return await self._storage.run(work)

    async def release(self, tenant: str, message_id: str) -> None:
        def work(db: sqlite3.Connection) -> None:
            with db:
                db.execute(
                    "UPDATE mb_messages SET state=?, receipt=NULL WHERE tenant=? AND message_id=?"
                    " AND state=?",
                    (READY, tenant, message_id, ACKED),
                )

        await self._storage.run(work)

    async def claim_round(
        self, tenant: str, agent: str, types: Sequence[str], now: float, wanted: int, lease: Lease
    ) -> tuple[list[Delivery], int]:
        type_filter = ""
        if types:
            type_filter = f" AND type IN ({','.join('?' * len(types))})"
        sql = (
            "SELECT * FROM mb_messages WHERE tenant=? AND to_agent=? AND state=?"
            f" AND visible_time <= ?{type_filter} ORDER BY visible_time, rowid LIMIT ?"
        )

        def work(db: sqlite3.Connection) -> tuple[list[Delivery], int]:
            with db:
                rows = db.execute(sql, (tenant, agent, READY, now, *types, wanted)).fetchall()
                delivered = [_deliver(db, tenant, row, now, lease) for row in rows]
            return [delivery for delivery in delivered if delivery is not None], len(rows)

        return await self._storage.run(work)

    async def settle_rows(self, tenant: str, ids: list[str], decide: Decide) -> Settlement:
        def work(db: sqlite3.Connection) -> Settlement:
            with db:
                rows = {m: dict(row) for m in ids if (row := _row(db, tenant, m)) is not None}
                done = decide(rows)
                db.executemany(_UPDATE_CHANGED, changed_values(tenant, done.changed.values()))
                for record in done.records:
                    _insert_audit(db, tenant, record)
            return done

        return await self._storage.run(work)

    async def receipt_rows(self, tenant: str, ids: list[str]) -> dict[str, Row]:
        def work(db: sqlite3.Connection) -> dict[str, Row]:
            return {m: row for m in ids if (row := _row(db, tenant, m)) is not None}

        return await self._storage.run(work)

    async def next_visible_time(self, tenant: str, agent: str, now: float) -> float | None:
        def work(db: sqlite3.Connection) -> float | None:
            row = db.execute(
                "SELECT min(visible_time) FROM mb_messages WHERE tenant=? AND to_agent=?"
                " AND state=? AND visible_time > ?",
                (tenant, agent, READY, now),
            ).fetchone()
            return None if row is None or row[0] is None else float(row[0])

        return await self._storage.run(work)

    async def get(self, tenant: str, message_id: str) -> AgentMessage | None:
        def work(db: sqlite3.Connection) -> AgentMessage | None:
            row = _row(db, tenant, message_id)
            return None if row is None else message_from_row(row)

        return await self._storage.run(work)

    async def list_dead_letters(
        self, tenant: str, agent: str, after: DeadLetterCursor | None, limit: int
    ) -> list[DeadLetter]:
        after_time, after_id = after if after is not None else (-1.0, "")

        def work(db: sqlite3.Connection) -> list[DeadLetter]:
            rows = db.execute(
                "SELECT * FROM mb_messages WHERE tenant=? AND to_agent=? AND state=?"
                " AND (state_time > ? OR (state_time = ? AND message_id > ?))"
                " ORDER BY state_time, message_id LIMIT ?",
                (tenant, agent, DEAD, after_time, after_time, after_id, limit),
            ).fetchall()
            return [dead_letter_from_row(row) for row in rows]

        return await self._storage.run(work)

    async def move_dead_letters(
        self, tenant: str, agent: str, message_ids: Sequence[str], now: float, audit: Audit
    ) -> set[str]:
        def work(db: sqlite3.Connection) -> set[str]:
            with db:
                moved = _redrive(db, tenant, agent, message_ids, now)
                _insert_audit(db, tenant, redrive_record(audit, agent, len(moved)))
            return moved

        return await self._storage.run(work)

    async def sweep(self, now: float, acked_retention: float, max_deliveries: int) -> int:
        def work(db: sqlite3.Connection) -> int:
            with db:
                dropped = db.execute(
                    "DELETE FROM mb_messages WHERE expire_time IS NOT NULL AND expire_time <= ?"
                    " AND state=?",
                    (now, READY),
                ).rowcount
                exhausted = db.execute(
                    "UPDATE mb_messages SET state=?, state_time=?, dead_reason=?, receipt=NULL"
                    " WHERE state=? AND receipt IS NOT NULL AND visible_time <= ?"
                    " AND delivery_count >= (CASE WHEN max_deliveries > 0 THEN max_deliveries"
                    " ELSE ? END)",
                    (DEAD, now, int(DeadLetterReason.MAX_DELIVERIES), READY, now, max_deliveries),
                ).rowcount
                forgotten = db.execute(
                    "DELETE FROM mb_messages WHERE state=? AND state_time <= ?",
                    (ACKED, now - acked_retention),
                ).rowcount
                db.execute("DELETE FROM mb_dedup WHERE expire_time <= ?", (now,))
            return int(dropped + exhausted + forgotten)

        return await self._storage.run(work)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        erasure = await run_steps(self._storage, messagebus_steps(tenant, subject), dry_run)
        return erasure.counts


_INSERT = f"INSERT INTO mb_messages ({INSERT_COLUMNS}, delivery_count) VALUES ({'?,' * 20}0)"
# Writes back the fields an ack, nack or extend changed (changed_values).
_UPDATE_CHANGED = (
    f"UPDATE mb_messages SET {', '.join(f'{name}=?' for name in CHANGED_COLUMNS)}"
    " WHERE tenant=? AND message_id=?"
)
_REDRIVE = (
    "UPDATE mb_messages SET state=?, visible_time=?, state_time=?, delivery_count=0,"
    " receipt=NULL, dead_reason=NULL, dead_detail=NULL"
)


# ----- helpers (all run on the database thread) ------------------------------------


def _migrate(db: sqlite3.Connection) -> None:
    apply_migrations(db, "messagebus_schema", SCHEMA)


def _row(db: sqlite3.Connection, tenant: str, message_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = db.execute(
        "SELECT * FROM mb_messages WHERE tenant=? AND message_id=?", (tenant, message_id)
    ).fetchone()
    return row


def _dedup_hit(
    db: sqlite3.Connection, tenant: str, message: AgentMessage, now: float
) -> AgentMessage | None:
    if not message.idempotency_key:
        return None
    row = db.execute(
        "SELECT message_id FROM mb_dedup WHERE tenant=? AND to_agent=? AND idempotency_key=?"
        " AND expire_time > ?",
        (tenant, message.to_agent, message.idempotency_key, now),
    ).fetchone()
    if row is None:
        return None
    earlier = _row(db, tenant, row["message_id"])
    return earlier_message(row["message_id"], message.to_agent, earlier)


def _check_inbox_room(db: sqlite3.Connection, tenant: str, agent: str, limit: int) -> None:
    count = db.execute(
        "SELECT count(*) FROM mb_messages WHERE tenant=? AND to_agent=? AND state=?",
        (tenant, agent, READY),
    ).fetchone()[0]
    if count >= limit:
        raise inbox_full(agent, limit)


def _deliver(
    db: sqlite3.Connection, tenant: str, row: sqlite3.Row, now: float, lease: Lease
) -> Delivery | None:
    message_id = row["message_id"]
    if row["expire_time"] is not None and row["expire_time"] <= now:
        db.execute("DELETE FROM mb_messages WHERE tenant=? AND message_id=?", (tenant, message_id))
        return None
    if row["delivery_count"] >= max_of(row, lease.max_deliveries):
        _to_dead_letters(db, tenant, message_id, now, DeadLetterReason.MAX_DELIVERIES, "")
        return None
    receipt = Receipt.fresh(message_id)
    deadline = now + lease.visibility_timeout
    db.execute(
        "UPDATE mb_messages SET delivery_count = delivery_count + 1, receipt=?, visible_time=?"
        " WHERE tenant=? AND message_id=?",
        (receipt.nonce, deadline, tenant, message_id),
    )
    return Delivery(receipt, message_from_row(row), row["delivery_count"] + 1, deadline)


def _to_dead_letters(
    db: sqlite3.Connection,
    tenant: str,
    message_id: str,
    now: float,
    reason: DeadLetterReason,
    detail: str,
) -> None:
    db.execute(
        "UPDATE mb_messages SET state=?, state_time=?, dead_reason=?, dead_detail=?,"
        " receipt=NULL WHERE tenant=? AND message_id=?",
        (DEAD, now, int(reason), detail, tenant, message_id),
    )


def _redrive(
    db: sqlite3.Connection, tenant: str, agent: str, message_ids: Sequence[str], now: float
) -> set[str]:
    sql = _REDRIVE + " WHERE tenant=? AND to_agent=? AND state=?"
    params = (READY, now, now, tenant, agent, DEAD)
    if not message_ids:
        return {row[0] for row in db.execute(sql + " RETURNING message_id", params).fetchall()}
    return {m for m in message_ids if db.execute(sql + " AND message_id=?", (*params, m)).rowcount}


def _insert_audit(db: sqlite3.Connection, tenant: str, record: AuditRecord | None) -> None:
    if record is not None:
        insert_audit_rows(db, [audit_values(record, tenant)])


# ----- in-process wake-ups and waiters ------------------------------------------------


class InProcessInboxNotifier(InboxNotifier):
    """One event per armed inbox; a notify sets it and forgets it, so the
    next arm gets a fresh one."""

    def __init__(self) -> None:
        self._events: dict[tuple[str, str], asyncio.Event] = {}
        self._closed = False

    def arm(self, tenant: str, agent: str) -> asyncio.Event:
        event = self._events.setdefault((tenant, agent), asyncio.Event())
        if self._closed:
            event.set()
        return event

    async def notify(self, tenant: str, agent: str) -> None:
        self.wake(tenant, agent)

    def wake(self, tenant: str, agent: str) -> None:
        """Wakes the inbox's receivers in this process (what notify does,
        callable where no coroutine can run, such as a pub/sub handler)."""
        event = self._events.pop((tenant, agent), None)
        if event is not None:
            event.set()

    def close(self) -> None:
        self._closed = True
        for event in self._events.values():
            event.set()
        self._events.clear()


class InProcessReplyWaiters(ReplyWaiters):
    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str, str], asyncio.Future[AgentMessage]] = {}

    async def register(
        self, tenant: str, agent: str, correlation_id: str
    ) -> asyncio.Future[AgentMessage]:
        key = (tenant, agent, correlation_id)
        if key in self._waiting:
            raise AlreadyExistsError(
                f"agent {agent!r} already waits for a reply on {correlation_id!r}"
            )
        future: asyncio.Future[AgentMessage] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        return future

    async def unregister(self, tenant: str, agent: str, correlation_id: str) -> None:
        self._waiting.pop((tenant, agent, correlation_id), None)

    async def is_waiting(self, tenant: str, agent: str, correlation_id: str) -> bool:
        future = self._waiting.get((tenant, agent, correlation_id))
        return future is not None and not future.done()

    def close(self, error: Exception) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(error)
        self._waiting.clear()

    async def offer(self, tenant: str, message: AgentMessage) -> bool:
        future = self._waiting.get((tenant, message.to_agent, message.correlation_id))
        if future is None or future.done():
            return False
        future.set_result(message)
        return True
