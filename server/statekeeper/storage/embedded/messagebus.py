"""Embedded message bus: SQLite inboxes on the shared database thread, and
in-process wake-ups and reply waiters.

Every method runs as one unit of work on the database thread, so a claim,
an ack or a nack is atomic with respect to every other one: competing
receivers never get the same delivery.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Sequence

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import AlreadyExistsError, LimitExceededError
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    DeadLetterReason,
    Delivery,
    Receipt,
    ReceiptOutcome,
    ReceiptStatus,
    SendOutcome,
)
from statekeeper.core.messagebus.store import (
    INBOX_ENTITY,
    MESSAGE_ENTITY,
    DeadLetterCursor,
    InboxNotifier,
    MessageStore,
    ReplyWaiters,
    audit_entry,
    settled_summary,
)
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.migrations import apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.erasure import messagebus_steps
from statekeeper.storage.shared.messagebus import (
    ACKED,
    DEAD,
    READY,
    dead_letter_from_row,
    max_of,
    message_from_row,
    status_of,
)
from statekeeper.storage.sql import audit_values

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

# What an ack, nack or extend does to a message whose receipt is valid.
_Apply = Callable[[sqlite3.Connection, sqlite3.Row], ReceiptOutcome]
# Rows looked at per round while claiming; a claim makes a few rounds at most.
_CLAIM_ROUNDS = 8


class EmbeddedMessageStore(MessageStore):
    """The message bus on the embedded SQLite store."""

    def __init__(self, storage: EmbeddedStorage) -> None:
        self._storage = storage

    async def start(self) -> None:
        await self._storage.run(_migrate)

    async def close(self) -> None:
        return None

    async def insert(
        self,
        tenant: str,
        message: AgentMessage,
        now: float,
        dedup_until: float | None,
        held: bool,
        max_inbox_messages: int,
        audit: AuditRecord | None = None,
    ) -> SendOutcome:
        record = audit_entry(
            audit, MESSAGE_ENTITY, message.message_id, f"sent to {message.to_agent}"
        )

        def work(db: sqlite3.Connection) -> SendOutcome:
            with db:
                earlier = _dedup_hit(db, tenant, message, now)
                if earlier is not None:
                    return SendOutcome(earlier, duplicate=True)
                if not held:
                    _check_inbox_room(db, tenant, message.to_agent, max_inbox_messages)
                _insert_message(db, tenant, message, ACKED if held else READY, now)
                if message.idempotency_key and dedup_until is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO mb_dedup (tenant, to_agent, idempotency_key,"
                        " message_id, expire_time) VALUES (?,?,?,?,?)",
                        (
                            tenant,
                            message.to_agent,
                            message.idempotency_key,
                            message.message_id,
                            dedup_until,
                        ),
                    )
                _insert_audit(db, tenant, record)
            return SendOutcome(message, duplicate=False)

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

    async def claim(
        self,
        tenant: str,
        agent: str,
        types: Sequence[str],
        now: float,
        visibility_timeout: float,
        limit: int,
        max_deliveries: int,
    ) -> list[Delivery]:
        type_filter = ""
        if types:
            type_filter = f" AND type IN ({','.join('?' * len(types))})"
        sql = (
            "SELECT * FROM mb_messages WHERE tenant=? AND to_agent=? AND state=?"
            f" AND visible_time <= ?{type_filter} ORDER BY visible_time, rowid LIMIT ?"
        )

        def work(db: sqlite3.Connection) -> list[Delivery]:
            deliveries: list[Delivery] = []
            with db:
                for _ in range(_CLAIM_ROUNDS):
                    wanted = limit - len(deliveries)
                    rows = db.execute(sql, (tenant, agent, READY, now, *types, wanted)).fetchall()
                    for row in rows:
                        delivery = _deliver(
                            db, tenant, row, now, visibility_timeout, max_deliveries
                        )
                        if delivery is not None:
                            deliveries.append(delivery)
                    if len(deliveries) >= limit or len(rows) < wanted:
                        break
            return deliveries

        return await self._storage.run(work)

    async def ack(
        self,
        tenant: str,
        receipts: Sequence[Receipt | None],
        now: float,
        audit: AuditRecord | None = None,
    ) -> list[ReceiptOutcome]:
        def apply(db: sqlite3.Connection, row: sqlite3.Row) -> ReceiptOutcome:
            db.execute(
                "UPDATE mb_messages SET state=?, state_time=? WHERE tenant=? AND message_id=?",
                (ACKED, now, tenant, row["message_id"]),
            )
            outcome = ReceiptOutcome(ReceiptStatus.OK, row["to_agent"])
            return _settled(db, tenant, row, outcome, audit, "acked")

        return await self._storage.run(lambda db: _each_receipt(db, tenant, receipts, now, apply))

    async def nack(
        self,
        tenant: str,
        receipts: Sequence[Receipt | None],
        now: float,
        delay: float,
        dead_letter: bool,
        reason: str,
        max_deliveries: int,
        audit: AuditRecord | None = None,
    ) -> list[ReceiptOutcome]:
        def apply(db: sqlite3.Connection, row: sqlite3.Row) -> ReceiptOutcome:
            if dead_letter or row["delivery_count"] >= max_of(row, max_deliveries):
                why = DeadLetterReason.REJECTED if dead_letter else DeadLetterReason.MAX_DELIVERIES
                _to_dead_letters(db, tenant, row["message_id"], now, why, reason)
                outcome = ReceiptOutcome(ReceiptStatus.DEAD_LETTERED, row["to_agent"])
            else:
                db.execute(
                    "UPDATE mb_messages SET visible_time=?, receipt=NULL WHERE tenant=?"
                    " AND message_id=?",
                    (now + delay, tenant, row["message_id"]),
                )
                outcome = ReceiptOutcome(ReceiptStatus.OK, row["to_agent"], now + delay)
            return _settled(db, tenant, row, outcome, audit, "nacked")

        return await self._storage.run(lambda db: _each_receipt(db, tenant, receipts, now, apply))

    async def extend(
        self, tenant: str, receipts: Sequence[Receipt | None], now: float, timeout: float
    ) -> list[ReceiptOutcome]:
        def apply(db: sqlite3.Connection, row: sqlite3.Row) -> ReceiptOutcome:
            db.execute(
                "UPDATE mb_messages SET visible_time=? WHERE tenant=? AND message_id=?",
                (now + timeout, tenant, row["message_id"]),
            )
            return ReceiptOutcome(ReceiptStatus.OK, row["to_agent"], now + timeout)

        return await self._storage.run(lambda db: _each_receipt(db, tenant, receipts, now, apply))

    async def in_flight(
        self, tenant: str, receipts: Sequence[Receipt], now: float
    ) -> list[Receipt]:
        def work(db: sqlite3.Connection) -> list[Receipt]:
            live: list[Receipt] = []
            for receipt in receipts:
                row = _row(db, tenant, receipt.message_id)
                if row is not None and status_of(row, receipt, now) is None:
                    live.append(receipt)
            return live

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

    async def redrive(
        self,
        tenant: str,
        agent: str,
        message_ids: Sequence[str],
        now: float,
        audit: AuditRecord | None = None,
    ) -> tuple[int, list[str]]:
        def work(db: sqlite3.Connection) -> tuple[int, list[str]]:
            with db:
                moved, missing = _redrive(db, tenant, agent, message_ids, now)
                if moved:
                    summary = f"redrove {moved} dead letters"
                    _insert_audit(db, tenant, audit_entry(audit, INBOX_ENTITY, agent, summary))
                return moved, missing

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
    # The first message may be gone (acked and forgotten): its id stands.
    if earlier is None:
        return AgentMessage(message_id=row["message_id"], to_agent=message.to_agent)
    return message_from_row(earlier)


def _check_inbox_room(db: sqlite3.Connection, tenant: str, agent: str, limit: int) -> None:
    count = db.execute(
        "SELECT count(*) FROM mb_messages WHERE tenant=? AND to_agent=? AND state=?",
        (tenant, agent, READY),
    ).fetchone()[0]
    if count >= limit:
        raise LimitExceededError("to_agent", limit, f"the inbox of {agent!r} is full")


def _insert_message(
    db: sqlite3.Connection, tenant: str, message: AgentMessage, state: int, now: float
) -> None:
    payload = message.payload
    db.execute(
        "INSERT INTO mb_messages (tenant, message_id, to_agent, from_agent, type, content_type,"
        " schema_version, data, reply_to, correlation_id, in_reply_to, headers,"
        " idempotency_key, send_time, first_visible_time, visible_time, expire_time,"
        " max_deliveries, delivery_count, receipt, state, state_time)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,NULL,?,?)",
        (
            tenant,
            message.message_id,
            message.to_agent,
            message.from_agent,
            message.type,
            payload.content_type,
            payload.schema_version,
            payload.data,
            message.reply_to,
            message.correlation_id,
            message.in_reply_to,
            json.dumps(message.headers, sort_keys=True),
            message.idempotency_key,
            message.send_time,
            message.visible_time,
            message.visible_time,
            message.expire_time,
            message.max_deliveries,
            state,
            now,
        ),
    )


def _deliver(
    db: sqlite3.Connection,
    tenant: str,
    row: sqlite3.Row,
    now: float,
    visibility_timeout: float,
    max_deliveries: int,
) -> Delivery | None:
    message_id = row["message_id"]
    if row["expire_time"] is not None and row["expire_time"] <= now:
        db.execute("DELETE FROM mb_messages WHERE tenant=? AND message_id=?", (tenant, message_id))
        return None
    if row["delivery_count"] >= max_of(row, max_deliveries):
        _to_dead_letters(db, tenant, message_id, now, DeadLetterReason.MAX_DELIVERIES, "")
        return None
    receipt = Receipt.fresh(message_id)
    deadline = now + visibility_timeout
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
) -> tuple[int, list[str]]:
    if not message_ids:
        cursor = db.execute(
            _REDRIVE + " WHERE tenant=? AND to_agent=? AND state=?",
            (READY, now, now, tenant, agent, DEAD),
        )
        return cursor.rowcount, []
    moved, missing = 0, []
    for message_id in message_ids:
        cursor = db.execute(
            _REDRIVE + " WHERE tenant=? AND to_agent=? AND state=? AND message_id=?",
            (READY, now, now, tenant, agent, DEAD, message_id),
        )
        if cursor.rowcount:
            moved += 1
        else:
            missing.append(message_id)
    return moved, missing


def _settled(
    db: sqlite3.Connection,
    tenant: str,
    row: sqlite3.Row,
    outcome: ReceiptOutcome,
    audit: AuditRecord | None,
    verb: str,
) -> ReceiptOutcome:
    """Records what an ack or nack did to the message of `row`, in the
    transaction that did it."""
    summary = settled_summary(verb, outcome)
    _insert_audit(db, tenant, audit_entry(audit, MESSAGE_ENTITY, row["message_id"], summary))
    return outcome


def _insert_audit(db: sqlite3.Connection, tenant: str, record: AuditRecord | None) -> None:
    if record is not None:
        insert_audit_rows(db, [audit_values(record, tenant)])


def _each_receipt(
    db: sqlite3.Connection,
    tenant: str,
    receipts: Sequence[Receipt | None],
    now: float,
    apply: _Apply,
) -> list[ReceiptOutcome]:
    outcomes: list[ReceiptOutcome] = []
    with db:
        for receipt in receipts:
            row = None if receipt is None else _row(db, tenant, receipt.message_id)
            if receipt is None or row is None:
                outcomes.append(ReceiptOutcome(ReceiptStatus.NOT_FOUND))
                continue
            status = status_of(row, receipt, now)
            if status is not None:
                outcomes.append(ReceiptOutcome(status, row["to_agent"]))
            else:
                outcomes.append(apply(db, row))
    return outcomes


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
