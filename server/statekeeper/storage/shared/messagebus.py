"""Messagebus: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

import json

from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    DeadLetterReason,
    MessageState,
    Payload,
    Receipt,
    ReceiptStatus,
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
