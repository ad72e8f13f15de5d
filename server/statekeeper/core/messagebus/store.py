"""Message bus storage contract.

Three parts: `MessageStore` keeps inboxes, deliveries and dead letters
(embedded: SQLite; production: PostgreSQL, durable across restarts),
`InboxNotifier` wakes receivers when an inbox may have something for them
(embedded: in process; production: Redis pub/sub, so that a send on one
replica wakes a receiver on another), and `ReplyWaiters` tracks RequestReply
calls waiting for their reply (production: a Redis key per waiter plus a
channel to the replica that holds it). tests/contract/test_messagebus_store.py
checks these rules on every backend. `MessageStore` holds the steps of
sending, claiming, settling and redriving once (the outcome of a send, the
claim rounds, what an ack, nack or extend asks for, the redrive's outcome);
a backend implements the abstract methods, each one transaction of its own
database.

General rules: every method touches only the tenant it is given; a method
that returns normally has made its change durable; `now` is the caller's
clock and the only time a method compares with. A method given an `audit`
template writes the records of what it changed (`audit_entry`) in the same
transaction as the change; without one (internal and test callers) it
writes none: a stored message, one record (entity "message", "sent to
AGENT"; none for a duplicate); an ack or nack, one per message it settled
("acked", "nacked" or "dead-lettered"); a redrive that moved N > 0 dead
letters, one (entity "inbox", "redrove N dead letters"). Receiving and
extending a lease are delivery bookkeeping, not audited.

Notes for the production backend: `claim` is one PostgreSQL statement
(`UPDATE ... WHERE message_id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT
n) RETURNING ...`) so that receivers on several replicas compete without
blocking each other; deduplication is a unique index on (tenant, to_agent,
idempotency_key) with an expiry column; every message is committed in
PostgreSQL before SendMessage returns, so a restart loses nothing.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    Delivery,
    Receipt,
    ReceiptOutcome,
    ReceiptStatus,
    SendOutcome,
)
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject

DeadLetterCursor = tuple[float, str]
Audit = AuditRecord | None

MESSAGE_ENTITY = "message"
INBOX_ENTITY = "inbox"


def audit_entry(
    template: AuditRecord | None, entity_type: str, entity_id: str, summary: str
) -> AuditRecord | None:
    """The record of one change, from the caller's template (None: not
    audited). Both backends word their records through this function."""
    if template is None:
        return None
    return replace(template, entity_type=entity_type, entity_id=entity_id, summary=summary)


def settled_summary(verb: str, outcome: ReceiptOutcome) -> str:
    """What an ack or nack did to one message."""
    return "dead-lettered" if outcome.status == ReceiptStatus.DEAD_LETTERED else verb


def redrive_record(audit: AuditRecord | None, agent: str, moved: int) -> AuditRecord | None:
    """The record of a redrive, None when it moved nothing."""
    if not moved:
        return None
    return audit_entry(audit, INBOX_ENTITY, agent, f"redrove {moved} dead letters")


# Claim rounds per call at most: a round that hit only expired or exhausted
# messages is followed by another.
CLAIM_ROUNDS = 8


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


@dataclass(frozen=True)
class Ack:
    """A valid delivery's message becomes ACKED."""

    now: float
    verb = "acked"


@dataclass(frozen=True)
class Nack:
    """A valid delivery goes to the dead letters (REJECTED if
    `dead_letter`, with `reason`; MAX_DELIVERIES if it reached its maximum
    deliveries), else becomes visible again after `delay`, its receipt
    revoked."""

    now: float
    delay: float
    dead_letter: bool
    reason: str
    max_deliveries: int
    verb = "nacked"


@dataclass(frozen=True)
class Extend:
    """A valid delivery's visibility deadline moves to now + `timeout`
    (delivery bookkeeping: not audited)."""

    now: float
    timeout: float
    verb = ""


ReceiptChange = Ack | Nack | Extend


class MessageStore(abc.ABC):
    """Inboxes with at-least-once delivery."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Prepares the schema (versioned migrations)."""

    async def close(self) -> None:
        """Releases what `start` acquired (the stores hold nothing of their
        own: their database belongs to the storage they were given)."""
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
        """Stores a message in `message.to_agent`'s inbox, atomically with
        its deduplication record.

        If `message.idempotency_key` is set and a record for (to_agent, key)
        lives past `now`, nothing is stored: returns the earlier message with
        `duplicate`. Else the message is stored READY (deliverable from
        `message.visible_time`) or, with `held`, already ACKED (handed to a
        waiter), and a record living until `dedup_until` is kept. MUST raise
        `LimitExceededError("to_agent")` if the inbox holds
        `max_inbox_messages` READY messages already.
        """
        record = audit_entry(
            audit, MESSAGE_ENTITY, message.message_id, f"sent to {message.to_agent}"
        )
        send = Send(now, dedup_until, held, max_inbox_messages)
        earlier = await self.store_message(tenant, message, send, record)
        if earlier is not None:
            return SendOutcome(earlier, duplicate=True)
        return SendOutcome(message, duplicate=False)

    @abc.abstractmethod
    async def store_message(
        self, tenant: str, message: AgentMessage, send: Send, record: AuditRecord | None
    ) -> AgentMessage | None:
        """`insert`'s change, in one transaction: stores `message` with its
        deduplication record and `record`, and returns None; or returns the
        earlier message of a live deduplication record, storing nothing."""

    @abc.abstractmethod
    async def release(self, tenant: str, message_id: str) -> None:
        """Makes a held message READY (its waiter left before taking it)."""

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
        """Delivers up to `limit` READY messages of the inbox that are
        visible at `now` (of `types`, if any), oldest visible first.

        Atomically per message, so that competing receivers never get the
        same delivery: a message whose `expire_time <= now` is deleted; a
        message already delivered `max(its max_deliveries or
        max_deliveries)` times goes to the dead-letter list (reason
        MAX_DELIVERIES) instead; any other gets delivery_count + 1, a fresh
        receipt and `visible_time = now + visibility_timeout`.
        """
        lease = Lease(visibility_timeout, max_deliveries)
        deliveries: list[Delivery] = []
        for _ in range(CLAIM_ROUNDS):
            wanted = limit - len(deliveries)
            delivered, picked = await self.claim_round(tenant, agent, types, now, wanted, lease)
            deliveries.extend(delivered)
            if len(deliveries) >= limit or picked < wanted:
                break
        return deliveries

    @abc.abstractmethod
    async def claim_round(
        self, tenant: str, agent: str, types: Sequence[str], now: float, wanted: int, lease: Lease
    ) -> tuple[list[Delivery], int]:
        """One round of `claim` for up to `wanted` messages: the deliveries
        and how many visible READY messages it looked at."""

    async def ack(
        self,
        tenant: str,
        receipts: Sequence[Receipt | None],
        now: float,
        audit: AuditRecord | None = None,
    ) -> list[ReceiptOutcome]:
        """Acknowledges deliveries, one outcome per receipt in order (None =
        malformed handle: NOT_FOUND).

        OK if the receipt is the message's latest and its visibility
        deadline is after `now`: the message becomes ACKED. ALREADY_ACKED if
        the message was acked with this receipt. EXPIRED if the receipt is
        stale (redelivered, nacked, or past its deadline). NOT_FOUND if the
        message is unknown or dead-lettered.
        """
        return await self.settle(tenant, receipts, Ack(now), audit)

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
        """Gives deliveries back; validity as in `ack`. A valid one goes to
        the dead-letter list (DEAD_LETTERED) if `dead_letter` (reason
        REJECTED, detail `reason`) or if it reached its maximum deliveries;
        else it becomes visible at `now + delay` with its receipt revoked
        (OK, `next_visible_time`)."""
        change = Nack(now, delay, dead_letter, reason, max_deliveries)
        return await self.settle(tenant, receipts, change, audit)

    async def extend(
        self, tenant: str, receipts: Sequence[Receipt | None], now: float, timeout: float
    ) -> list[ReceiptOutcome]:
        """Moves the visibility deadline of valid deliveries to `now +
        timeout` (OK, `next_visible_time`); validity as in `ack`."""
        return await self.settle(tenant, receipts, Extend(now, timeout), None)

    @abc.abstractmethod
    async def settle(
        self, tenant: str, receipts: Sequence[Receipt | None], change: ReceiptChange, audit: Audit
    ) -> list[ReceiptOutcome]:
        """Applies `change` to the message of each valid receipt, atomically,
        one outcome per receipt in order, validity as in `ack` at
        `change.now`; a later receipt of the same call sees the change of an
        earlier one. With `audit`, one record per change worded by
        `change.verb` (`settled_summary`)."""

    @abc.abstractmethod
    async def in_flight(
        self, tenant: str, receipts: Sequence[Receipt], now: float
    ) -> list[Receipt]:
        """The receipts that are still valid, in flight past `now`."""

    @abc.abstractmethod
    async def next_visible_time(self, tenant: str, agent: str, now: float) -> float | None:
        """When the next READY message of the inbox that is invisible at
        `now` becomes visible, or None."""

    @abc.abstractmethod
    async def get(self, tenant: str, message_id: str) -> AgentMessage | None:
        """A message in any state (READY, ACKED within retention, DEAD)."""

    @abc.abstractmethod
    async def list_dead_letters(
        self, tenant: str, agent: str, after: DeadLetterCursor | None, limit: int
    ) -> list[DeadLetter]:
        """Dead letters of the inbox, oldest first (dead_letter_time, then
        message id), strictly after `after`."""

    async def redrive(
        self,
        tenant: str,
        agent: str,
        message_ids: Sequence[str],
        now: float,
        audit: AuditRecord | None = None,
    ) -> tuple[int, list[str]]:
        """Moves dead letters back to READY, visible at `now`, delivery
        count 0. Empty `message_ids`: all of the inbox. Returns how many
        moved and the requested ids that are not dead letters of it."""
        moved = await self.move_dead_letters(tenant, agent, message_ids, now, audit)
        return len(moved), [m for m in message_ids if m not in moved]

    @abc.abstractmethod
    async def move_dead_letters(
        self, tenant: str, agent: str, message_ids: Sequence[str], now: float, audit: Audit
    ) -> set[str]:
        """`redrive`'s change with its `redrive_record`, in one
        transaction; the ids it moved."""

    @abc.abstractmethod
    async def sweep(self, now: float, acked_retention: float, max_deliveries: int) -> int:
        """Background upkeep of every tenant: deletes READY messages past
        their `expire_time`, dead-letters in-flight messages whose deadline
        passed at their maximum deliveries, forgets ACKED messages older
        than `acked_retention` and expired deduplication records. Returns
        how many messages it changed."""

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """Deletes every message addressed to one of
        `subject.all_agent_ids` (in any state, dead letters included) and
        their idempotency keys, in bounded batches. Returns the rows deleted
        per kind; `dry_run` deletes nothing. Idempotent."""


class InboxNotifier(abc.ABC):
    """Wakes receivers of an inbox. A receiver arms before it looks at the
    store, then waits: a notify in between is never lost."""

    @abc.abstractmethod
    def arm(self, tenant: str, agent: str) -> asyncio.Event:
        """An event set by the next `notify` of this inbox (or `close`)."""

    @abc.abstractmethod
    async def notify(self, tenant: str, agent: str) -> None:
        """Something may be deliverable in the inbox (sent, nacked, acked,
        redriven). MUST reach receivers on every replica."""

    @abc.abstractmethod
    def close(self) -> None:
        """Wakes every armed receiver (the server is shutting down)."""


class ReplyWaiters(abc.ABC):
    """RequestReply calls waiting for a reply, by (tenant, agent,
    correlation id)."""

    @abc.abstractmethod
    async def register(
        self, tenant: str, agent: str, correlation_id: str
    ) -> asyncio.Future[AgentMessage]:
        """A future that receives the reply. MUST raise
        `AlreadyExistsError` if that agent already waits on that id."""

    @abc.abstractmethod
    async def unregister(self, tenant: str, agent: str, correlation_id: str) -> None:
        """The waiter has left (reply taken, timeout or cancellation)."""

    @abc.abstractmethod
    async def is_waiting(self, tenant: str, agent: str, correlation_id: str) -> bool:
        """Whether a waiter exists, on any replica."""

    @abc.abstractmethod
    def close(self, error: Exception) -> None:
        """Ends every wait on this replica with `error` (shutdown)."""

    @abc.abstractmethod
    async def offer(self, tenant: str, message: AgentMessage) -> bool:
        """Hands `message` to the waiter of (message.to_agent,
        message.correlation_id); False if there is none any more."""
