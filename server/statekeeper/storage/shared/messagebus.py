"""Messagebus: what the SQLite and PostgreSQL stores share: the row
mappers and receipt rules, the values of a stored message, what an ack,
nack or extend decides, and `SqlMessageStore`, the settling and in-flight steps
written once over a backend's statements."""

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
    MessageState,
    Payload,
    Receipt,
    ReceiptOutcome,
    ReceiptStatus,
)
from statekeeper.core.messagebus.store import (
    MESSAGE_ENTITY,
    Ack,
    Audit,
    Extend,
    MessageStore,
    Nack,
    ReceiptChange,
    audit_entry,
    settled_summary,
)
from statekeeper.storage.sql import Row

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


def apply_of(change: ReceiptChange) -> Apply:
    """What `change` does to (an in-memory copy of) a valid delivery's row."""
    now = change.now

    def apply(row: dict[str, Any]) -> ReceiptOutcome:
        if isinstance(change, Ack):
            row.update(state=ACKED, state_time=now)
            return ReceiptOutcome(ReceiptStatus.OK, row["to_agent"])
        if isinstance(change, Extend):
            row.update(visible_time=now + change.timeout)
            return ReceiptOutcome(ReceiptStatus.OK, row["to_agent"], now + change.timeout)
        return _nacked(row, change)

    return apply


def _nacked(row: dict[str, Any], nack: Nack) -> ReceiptOutcome:
    if nack.dead_letter or row["delivery_count"] >= max_of(row, nack.max_deliveries):
        why = DeadLetterReason.REJECTED if nack.dead_letter else DeadLetterReason.MAX_DELIVERIES
        row.update(
            state=DEAD,
            state_time=nack.now,
            dead_reason=int(why),
            dead_detail=nack.reason,
            receipt=None,
        )
        return ReceiptOutcome(ReceiptStatus.DEAD_LETTERED, row["to_agent"])
    row.update(visible_time=nack.now + nack.delay, receipt=None)
    return ReceiptOutcome(ReceiptStatus.OK, row["to_agent"], nack.now + nack.delay)


# ----- the steps both backends take alike ------------------------------------------------

Decide = Callable[[dict[str, dict[str, Any]]], Settlement]


class SqlMessageStore(MessageStore):
    """What an ack, nack or extend decides and the in-flight check, written
    once; a backend supplies the statements (the abstract methods here and
    those of MessageStore)."""

    @abc.abstractmethod
    async def settle_rows(self, tenant: str, ids: list[str], decide: Decide) -> Settlement:
        """In one transaction: reads (and locks) the rows of the messages
        `ids` (all columns, as dicts by message id), runs `decide` on them,
        and writes the changed rows and the records of what it decided."""

    @abc.abstractmethod
    async def receipt_rows(self, tenant: str, ids: list[str]) -> dict[str, Row]:
        """The rows (state, visible_time, receipt) of the messages `ids`."""

    async def settle(
        self, tenant: str, receipts: Sequence[Receipt | None], change: ReceiptChange, audit: Audit
    ) -> list[ReceiptOutcome]:
        ids = sorted({r.message_id for r in receipts if r is not None})
        audited = (audit, change.verb) if change.verb else None

        def decide(rows: dict[str, dict[str, Any]]) -> Settlement:
            return settle(rows, receipts, change.now, apply_of(change), audited)

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
