"""Messagebus: what the SQLite and PostgreSQL stores share: the row
mappers and receipt rules, the values of a stored message, what an ack,
nack or extend decides, and `SqlMessageStore`, the store's steps written
once over a backend's statements."""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import LimitExceededError
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    DeadLetterReason,
    Delivery,
    MessageState,
    Payload,
    Receipt,
    ReceiptOutcome,
    ReceiptStatus,
    SendOutcome,
)
from statekeeper.core.messagebus.store import (
    INBOX_ENTITY,
    MESSAGE_ENTITY,
    MessageStore,
    audit_entry,
    settled_summary,
)
from statekeeper.storage.sql import Row

Audit = AuditRecord | None

READY, ACKED, DEAD = (int(s) for s in MessageState)


def max_of(row: Row, default_max: int) -> int:
    own: int = row["max_deliveries"]
    return own if own > 0 else default_max


def status_of(row: Row, receipt: Receipt, now: float) -> ReceiptStatus | None:
    """Why `receipt` cannot be used on `row`; None if it is a live delivery."""
    same = row["receipt"] == receipt.nonce
    if row["state"] == ACKED:
        return ReceiptStatus.ALREADY_ACKED if same else ReceiptStatus.EXPIRED
    if row["state"] == DEAD:
        return ReceiptStatus.NOT_FOUND
    if not same or row["visible_time"] <= now:
        return ReceiptStatus.EXPIRED
    return None


def message_from_row(row: Row) -> AgentMessage:
    return AgentMessage(
        message_id=row["message_id"],
        to_agent=row["to_agent"],
        from_agent=row["from_agent"],
        type=row["type"],
        payload=Payload(row["content_type"], row["schema_version"], bytes(row["data"])),
        reply_to=row["reply_to"],
        correlation_id=row["correlation_id"],
        in_reply_to=row["in_reply_to"],
        headers=json.loads(row["headers"]),
        idempotency_key=row["idempotency_key"],
        send_time=row["send_time"],
        visible_time=row["first_visible_time"],
        expire_time=row["expire_time"],
        max_deliveries=row["max_deliveries"],
    )


def dead_letter_from_row(row: Row) -> DeadLetter:
    return DeadLetter(
        message=message_from_row(row),
        delivery_count=row["delivery_count"],
        reason=DeadLetterReason(row["dead_reason"]),
        detail=row["dead_detail"] or "",
        dead_letter_time=row["state_time"],
    )


# ----- sending --------------------------------------------------------------------------

# The columns of a stored message, in the order of `message_values`.
INSERT_COLUMNS = (
    "tenant, message_id, to_agent, from_agent, type, content_type, schema_version, data,"
    " reply_to, correlation_id, in_reply_to, headers, idempotency_key, send_time,"
    " first_visible_time, visible_time, expire_time, max_deliveries, state, state_time"
)


def message_values(tenant: str, message: AgentMessage, held: bool, now: float) -> list[object]:
    """The values of INSERT_COLUMNS: READY, or ACKED when `held` (handed
    to a waiter)."""
    payload = message.payload
    return [
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
        ACKED if held else READY,
        now,
    ]


def inbox_full(agent: str, limit: int) -> LimitExceededError:
    return LimitExceededError("to_agent", limit, f"the inbox of {agent!r} is full")


def earlier_message(message_id: str, to_agent: str, row: Row | None) -> AgentMessage:
    """The message a duplicate send stands for. It may be gone (acked and
    forgotten): its id stands."""
    if row is None:
        return AgentMessage(message_id=message_id, to_agent=to_agent)
    return message_from_row(row)


@dataclass(frozen=True)
class Send:
    """How `MessageStore.insert` stores one message."""

    now: float
    dedup_until: float | None
    held: bool
    max_inbox_messages: int


@dataclass(frozen=True)
class Lease:
    """What a claim gives each delivery: its visibility timeout, and the
    deliveries a message without its own maximum may have."""

    visibility_timeout: float
    max_deliveries: int


# ----- settling deliveries (ack, nack, extend) ------------------------------------------

# The fields an ack, nack or extend may change, written back per changed row.
CHANGED_COLUMNS = ("state", "state_time", "visible_time", "receipt", "dead_reason", "dead_detail")

# What an ack, nack or extend does to (an in-memory copy of) the row of a
# message whose receipt is valid.
Apply = Callable[[dict[str, Any]], ReceiptOutcome]


@dataclass
class Settlement:
    """What one ack, nack or extend call decided: an outcome per receipt,
    the rows it changed (final state, by message id) and their records."""

    outcomes: list[ReceiptOutcome] = field(default_factory=list)
    changed: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: list[AuditRecord | None] = field(default_factory=list)


def settle(
    rows: dict[str, dict[str, Any]],
    receipts: Sequence[Receipt | None],
    now: float,
    apply: Apply,
    audited: tuple[AuditRecord | None, str] | None,
) -> Settlement:
    """Runs `apply` on each message whose receipt is valid, in receipt
    order, on the copies in `rows` (so a later receipt of the same call sees
    the change), with one audit record per change (`audited`: the template
    and the verb; None: not audited)."""
    done = Settlement()
    for receipt in receipts:
        row = None if receipt is None else rows.get(receipt.message_id)
        if receipt is None or row is None:
            done.outcomes.append(ReceiptOutcome(ReceiptStatus.NOT_FOUND))
            continue
        status = status_of(row, receipt, now)
        if status is not None:
            done.outcomes.append(ReceiptOutcome(status, row["to_agent"]))
            continue
        outcome = apply(row)
        done.outcomes.append(outcome)
        done.changed[row["message_id"]] = row
        if audited is not None:
            summary = settled_summary(audited[1], outcome)
            done.records.append(audit_entry(audited[0], MESSAGE_ENTITY, row["message_id"], summary))
    return done


def changed_values(tenant: str, rows: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(CHANGED_COLUMNS..., tenant, message_id) of each changed row."""
    return [(*(row[name] for name in CHANGED_COLUMNS), tenant, row["message_id"]) for row in rows]


def acked(now: float) -> Apply:
    def apply(row: dict[str, Any]) -> ReceiptOutcome:
        row.update(state=ACKED, state_time=now)
        return ReceiptOutcome(ReceiptStatus.OK, row["to_agent"])

    return apply


def nacked(now: float, delay: float, dead_letter: bool, reason: str, max_deliveries: int) -> Apply:
    def apply(row: dict[str, Any]) -> ReceiptOutcome:
        if dead_letter or row["delivery_count"] >= max_of(row, max_deliveries):
            why = DeadLetterReason.REJECTED if dead_letter else DeadLetterReason.MAX_DELIVERIES
            row.update(
                state=DEAD, state_time=now, dead_reason=int(why), dead_detail=reason, receipt=None
            )
            return ReceiptOutcome(ReceiptStatus.DEAD_LETTERED, row["to_agent"])
        row.update(visible_time=now + delay, receipt=None)
        return ReceiptOutcome(ReceiptStatus.OK, row["to_agent"], now + delay)

    return apply


def extended(now: float, timeout: float) -> Apply:
    def apply(row: dict[str, Any]) -> ReceiptOutcome:
        row.update(visible_time=now + timeout)
        return ReceiptOutcome(ReceiptStatus.OK, row["to_agent"], now + timeout)

    return apply


def redrive_record(audit: AuditRecord | None, agent: str, moved: int) -> AuditRecord | None:
    """The record of a redrive, None when it moved nothing."""
    if not moved:
        return None
    return audit_entry(audit, INBOX_ENTITY, agent, f"redrove {moved} dead letters")


# ----- the store's steps, written once -------------------------------------------------

# Claim rounds per call at most: a round that hit only expired or exhausted
# messages is followed by another.
CLAIM_ROUNDS = 8

Decide = Callable[[dict[str, dict[str, Any]]], Settlement]


class SqlMessageStore(MessageStore):
    """The steps of the message store both backends take alike; a backend
    supplies the statements of each (abstract methods below)."""

    @abc.abstractmethod
    async def store_message(
        self, tenant: str, message: AgentMessage, send: Send, record: AuditRecord | None
    ) -> AgentMessage | None:
        """Stores `message` with its deduplication record and `record`, in
        one transaction, and returns None; or, if (to_agent, idempotency
        key) has a live record, stores nothing and returns the earlier
        message (`earlier_message`). Raises `inbox_full` as `insert` says."""

    @abc.abstractmethod
    async def claim_round(
        self, tenant: str, agent: str, types: Sequence[str], now: float, wanted: int, lease: Lease
    ) -> tuple[list[Delivery], int]:
        """One round of `claim` for up to `wanted` messages: the deliveries
        and how many visible READY messages it looked at."""

    @abc.abstractmethod
    async def settle_rows(self, tenant: str, ids: list[str], decide: Decide) -> Settlement:
        """In one transaction: reads (and locks) the rows of the messages
        `ids` (all columns, as dicts by message id), runs `decide` on them,
        and writes the changed rows and the records of what it decided."""

    @abc.abstractmethod
    async def receipt_rows(self, tenant: str, ids: list[str]) -> dict[str, Row]:
        """The rows (state, visible_time, receipt) of the messages `ids`."""

    @abc.abstractmethod
    async def move_dead_letters(
        self, tenant: str, agent: str, message_ids: Sequence[str], now: float, audit: Audit
    ) -> set[str]:
        """Moves dead letters back as `redrive` says, with `redrive_record`,
        in one transaction; the ids it moved."""

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
        send = Send(now, dedup_until, held, max_inbox_messages)
        earlier = await self.store_message(tenant, message, send, record)
        if earlier is not None:
            return SendOutcome(earlier, duplicate=True)
        return SendOutcome(message, duplicate=False)

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
        lease = Lease(visibility_timeout, max_deliveries)
        deliveries: list[Delivery] = []
        for _ in range(CLAIM_ROUNDS):
            wanted = limit - len(deliveries)
            delivered, picked = await self.claim_round(tenant, agent, types, now, wanted, lease)
            deliveries.extend(delivered)
            if len(deliveries) >= limit or picked < wanted:
                break
        return deliveries

    async def ack(
        self,
        tenant: str,
        receipts: Sequence[Receipt | None],
        now: float,
        audit: AuditRecord | None = None,
    ) -> list[ReceiptOutcome]:
        return await self._settle(tenant, receipts, now, acked(now), (audit, "acked"))

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
        apply = nacked(now, delay, dead_letter, reason, max_deliveries)
        return await self._settle(tenant, receipts, now, apply, (audit, "nacked"))

    async def extend(
        self, tenant: str, receipts: Sequence[Receipt | None], now: float, timeout: float
    ) -> list[ReceiptOutcome]:
        return await self._settle(tenant, receipts, now, extended(now, timeout), None)

    async def _settle(
        self,
        tenant: str,
        receipts: Sequence[Receipt | None],
        now: float,
        apply: Apply,
        audited: tuple[Audit, str] | None,
    ) -> list[ReceiptOutcome]:
        ids = sorted({r.message_id for r in receipts if r is not None})

        def decide(rows: dict[str, dict[str, Any]]) -> Settlement:
            return settle(rows, receipts, now, apply, audited)

        return (await self.settle_rows(tenant, ids, decide)).outcomes

    async def in_flight(
        self, tenant: str, receipts: Sequence[Receipt], now: float
    ) -> list[Receipt]:
        found = await self.receipt_rows(tenant, sorted({r.message_id for r in receipts}))
        return [
            receipt
            for receipt in receipts
            if receipt.message_id in found
            and status_of(found[receipt.message_id], receipt, now) is None
        ]

    async def redrive(
        self,
        tenant: str,
        agent: str,
        message_ids: Sequence[str],
        now: float,
        audit: AuditRecord | None = None,
    ) -> tuple[int, list[str]]:
        moved = await self.move_dead_letters(tenant, agent, message_ids, now, audit)
        return len(moved), [m for m in message_ids if m not in moved]
