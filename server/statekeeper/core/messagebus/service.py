"""Message bus: agent inboxes with at-least-once delivery, visibility
timeouts, dead letters, deduplication and request-reply.

The store makes each claim, ack and nack atomic; this module validates,
decides defaults and limits, and turns store polling into streams that
sleep until something can change: a wake-up from the notifier (send, nack,
ack, redrive), the next visibility deadline, or an idle re-check.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace

from statekeeper.core import observations, paging
from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import Actor, record_for
from statekeeper.core.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    LimitExceededError,
    NotFoundError,
    StorageUnavailableError,
)
from statekeeper.core.limits import Limits
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    Delivery,
    MessageBusLimits,
    Payload,
    Receipt,
    ReceiptOutcome,
    ReceiptResult,
    ReplyTimeoutError,
    new_message_id,
)
from statekeeper.core.messagebus.store import InboxNotifier, MessageStore, ReplyWaiters
from statekeeper.core.tasks import cancel_and_wait, repeat_every
from statekeeper.core.validation import check_id, check_metadata, check_non_negative, check_text

log = logging.getLogger(__name__)

Clock = Callable[[], float]

# RequestReply answers REPLY_TIMEOUT this long before the call's own
# deadline, so the caller gets the reason instead of a bare deadline.
REPLY_DEADLINE_MARGIN_SECONDS = 0.05
# A request whose wait is (nearly) zero still lives this long.
MIN_REQUEST_TTL_SECONDS = 0.001


@dataclass(frozen=True)
class SendDraft:
    """Caller-supplied fields of a message."""

    to_agent: str
    from_agent: str = ""
    type: str = ""
    payload: Payload = field(default_factory=Payload)
    reply_to: str = ""
    correlation_id: str = ""
    in_reply_to: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    idempotency_key: str = ""
    ttl_seconds: float | None = None
    delay_seconds: float | None = None
    max_deliveries: int = 0


@dataclass(frozen=True)
class SendResult:
    message_id: str
    duplicate: bool
    visible_time: float
    delivered_to_waiter: bool = False


@dataclass(frozen=True)
class ReceiveOptions:
    agent_id: str
    max_in_flight: int = 0
    visibility_timeout_seconds: float | None = None
    types: tuple[str, ...] = ()


@dataclass
class _InFlight:
    """Deliveries a stream has outstanding, with their deadlines."""

    deadlines: dict[Receipt, float] = field(default_factory=dict)

    def forget_expired(self, now: float) -> None:
        self.deadlines = {r: d for r, d in self.deadlines.items() if d > now}

    def earliest(self) -> float | None:
        return min(self.deadlines.values(), default=None)


class MessageBus:
    """The message bus capability, independent of transport and storage."""

    def __init__(
        self,
        store: MessageStore,
        notifier: InboxNotifier,
        waiters: ReplyWaiters,
        limits: MessageBusLimits | None = None,
        id_limits: Limits | None = None,
        clock: Clock = time.time,
    ) -> None:
        self._store = store
        self._notifier = notifier
        self._waiters = waiters
        self._limits = limits or MessageBusLimits()
        self._ids = id_limits or Limits()
        self._clock = clock
        self._receivers: dict[tuple[str, str], int] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def limits(self) -> MessageBusLimits:
        return self._limits

    # ----- lifecycle -----------------------------------------------------------

    async def start(self) -> None:
        self._closing = False
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="messagebus-sweeper")

    async def stop(self) -> None:
        """Stops the sweeper and ends every open stream (UNAVAILABLE)."""
        self._closing = True
        self._notifier.close()
        self._waiters.close(StorageUnavailableError("the server is shutting down; ask again"))
        sweeper, self._sweeper = self._sweeper, None
        await cancel_and_wait([sweeper])

    async def _sweep_forever(self) -> None:
        async def sweep() -> None:
            await self.sweep()
            observations.swept("bus")

        await repeat_every(self._limits.sweep_interval_seconds, sweep, "message bus sweep", log)

    async def sweep(self) -> int:
        return await self._store.sweep(
            self._clock(), self._limits.acked_retention_seconds, self._limits.max_deliveries
        )

    # ----- sending ---------------------------------------------------------------

    async def send(self, tenant: str, draft: SendDraft, actor: Actor | None = None) -> SendResult:
        self._check_draft(draft)
        return await self._deliver(tenant, self._build(draft, new_message_id()), actor)

    async def _deliver(self, tenant: str, message: AgentMessage, actor: Actor | None) -> SendResult:
        """Stores `message`, or hands it to a RequestReply waiting for it."""
        dedup_until = None
        if message.idempotency_key:
            dedup_until = message.send_time + self._limits.dedup_window_seconds
        held = bool(message.correlation_id) and await self._waiters.is_waiting(
            tenant, message.to_agent, message.correlation_id
        )
        outcome = await self._store.insert(
            tenant,
            message,
            message.send_time,
            dedup_until,
            held,
            self._limits.max_inbox_messages,
            _audit_template(actor, message.send_time),
        )
        stored = outcome.message
        if outcome.duplicate:
            return SendResult(stored.message_id, True, stored.visible_time)
        if held:
            if await self._waiters.offer(tenant, message):
                return SendResult(message.message_id, False, message.visible_time, True)
            # The waiter left in between: the reply goes to the inbox.
            await self._store.release(tenant, message.message_id)
        await self._notifier.notify(tenant, message.to_agent)
        return SendResult(message.message_id, False, message.visible_time)

    def _build(self, draft: SendDraft, message_id: str) -> AgentMessage:
        now = self._clock()
        ttl = draft.ttl_seconds
        if ttl is None:
            ttl = self._limits.default_ttl_seconds
        max_deliveries = min(draft.max_deliveries, self._limits.max_deliveries)
        return AgentMessage(
            message_id=message_id,
            to_agent=draft.to_agent,
            from_agent=draft.from_agent,
            type=draft.type,
            payload=draft.payload,
            reply_to=draft.reply_to,
            correlation_id=draft.correlation_id,
            in_reply_to=draft.in_reply_to,
            headers=dict(draft.headers),
            idempotency_key=draft.idempotency_key,
            send_time=now,
            visible_time=now + (draft.delay_seconds or 0.0),
            expire_time=now + ttl if ttl else None,
            max_deliveries=max_deliveries,
        )

    # ----- receiving -------------------------------------------------------------

    async def receive(self, tenant: str, options: ReceiveOptions) -> AsyncIterator[list[Delivery]]:
        """Streams deliveries, at most `max_in_flight` unacknowledged."""
        max_in_flight, timeout = self._check_receive(options)
        inbox = (tenant, options.agent_id)
        if self._receivers.get(inbox, 0) >= self._limits.max_receivers_per_inbox:
            raise LimitExceededError(
                "agent_id", self._limits.max_receivers_per_inbox, "the inbox has too many receivers"
            )
        self._receivers[inbox] = self._receivers.get(inbox, 0) + 1
        try:
            in_flight = _InFlight()
            while True:
                deliveries = await self._receive_once(
                    tenant, options, max_in_flight, timeout, in_flight
                )
                if deliveries:
                    yield deliveries
        finally:
            self._receivers[inbox] -= 1
            if not self._receivers[inbox]:
                del self._receivers[inbox]

    async def _receive_once(
        self,
        tenant: str,
        options: ReceiveOptions,
        max_in_flight: int,
        timeout: float,
        in_flight: _InFlight,
    ) -> list[Delivery]:
        """One claim when there is room, else (or when nothing came) one
        wait for whatever can change that."""
        self._raise_if_closing()
        now = self._clock()
        in_flight.forget_expired(now)
        if len(in_flight.deadlines) >= max_in_flight:
            live = await self._store.in_flight(tenant, list(in_flight.deadlines), now)
            in_flight.deadlines = {r: in_flight.deadlines[r] for r in live}
        signal = self._notifier.arm(tenant, options.agent_id)
        room = max_in_flight - len(in_flight.deadlines)
        if room > 0:
            deliveries = await self._claim(tenant, options, now, timeout, room)
            if deliveries:
                for delivery in deliveries:
                    in_flight.deadlines[delivery.receipt] = delivery.visibility_deadline
                return deliveries
        wake_at = now + self._limits.idle_poll_seconds
        earliest = in_flight.earliest()
        if earliest is not None:
            wake_at = min(wake_at, earliest)
        if room > 0:
            visible = await self._store.next_visible_time(tenant, options.agent_id, now)
            if visible is not None:
                wake_at = min(wake_at, visible)
        await _wait(signal, wake_at - self._clock())
        return []

    async def pull(
        self,
        tenant: str,
        options: ReceiveOptions,
        max_messages: int,
        wait_seconds: float | None,
    ) -> list[Delivery]:
        """Up to `max_messages` deliveries, waiting up to `wait_seconds`."""
        _, timeout = self._check_receive(options)
        check_non_negative("max_messages", max_messages)
        count = min(max_messages or 1, self._limits.max_pull_messages)
        if wait_seconds is not None:
            check_non_negative("wait_timeout", wait_seconds)
        give_up = self._clock() + (wait_seconds or 0.0)
        for _ in range(100_000):  # bounded: each round waits or returns
            self._raise_if_closing()
            signal = self._notifier.arm(tenant, options.agent_id)
            now = self._clock()
            deliveries = await self._claim(tenant, options, now, timeout, count)
            if deliveries or now >= give_up:
                return deliveries
            wake_at = give_up
            visible = await self._store.next_visible_time(tenant, options.agent_id, now)
            if visible is not None:
                wake_at = min(wake_at, visible)
            await _wait(signal, min(wake_at - now, self._limits.idle_poll_seconds))
        return []

    async def _claim(
        self, tenant: str, options: ReceiveOptions, now: float, timeout: float, limit: int
    ) -> list[Delivery]:
        """Up to `limit` deliveries of the receiver's inbox, each leased for
        `timeout` seconds."""
        return await self._store.claim(
            tenant,
            options.agent_id,
            options.types,
            now,
            timeout,
            limit,
            self._limits.max_deliveries,
        )

    def _check_receive(self, options: ReceiveOptions) -> tuple[int, float]:
        check_id("agent_id", options.agent_id, self._ids)
        check_non_negative("max_in_flight", options.max_in_flight)
        for index, kind in enumerate(options.types):
            check_text(f"types[{index}]", kind, self._limits.max_type_bytes)
        max_in_flight = min(
            options.max_in_flight or self._limits.default_max_in_flight,
            self._limits.max_max_in_flight,
        )
        timeout = options.visibility_timeout_seconds
        if timeout is None:
            timeout = self._limits.default_visibility_timeout_seconds
        check_non_negative("visibility_timeout", timeout)
        return max_in_flight, min(timeout, self._limits.max_visibility_timeout_seconds)

    def _raise_if_closing(self) -> None:
        if self._closing:
            raise StorageUnavailableError("the server is shutting down; reconnect")

    # ----- acknowledgements --------------------------------------------------------

    async def ack(
        self, tenant: str, handles: Sequence[str], actor: Actor | None = None
    ) -> list[ReceiptResult]:
        receipts = self._parse_handles(handles)
        now = self._clock()
        outcomes = await self._store.ack(tenant, receipts, now, _audit_template(actor, now))
        return await self._report(tenant, handles, outcomes)

    async def nack(
        self,
        tenant: str,
        handles: Sequence[str],
        delay_seconds: float,
        dead_letter: bool,
        reason: str,
        actor: Actor | None = None,
    ) -> list[ReceiptResult]:
        receipts = self._parse_handles(handles)
        check_non_negative("delay", delay_seconds)
        if delay_seconds > self._limits.max_delay_seconds:
            raise LimitExceededError(
                "delay", int(self._limits.max_delay_seconds), f"is {delay_seconds:.0f} seconds"
            )
        check_text("reason", reason, self._limits.max_reason_bytes)
        now = self._clock()
        outcomes = await self._store.nack(
            tenant,
            receipts,
            now,
            delay_seconds,
            dead_letter,
            reason,
            self._limits.max_deliveries,
            _audit_template(actor, now),
        )
        return await self._report(tenant, handles, outcomes)

    async def extend(
        self, tenant: str, handles: Sequence[str], timeout_seconds: float | None
    ) -> list[ReceiptResult]:
        receipts = self._parse_handles(handles)
        if timeout_seconds is None:
            raise InvalidArgumentError("visibility_timeout", "is required")
        check_non_negative("visibility_timeout", timeout_seconds)
        if timeout_seconds > self._limits.max_visibility_timeout_seconds:
            raise LimitExceededError(
                "visibility_timeout",
                int(self._limits.max_visibility_timeout_seconds),
                f"is {timeout_seconds:.0f} seconds",
            )
        outcomes = await self._store.extend(tenant, receipts, self._clock(), timeout_seconds)
        return await self._report(tenant, handles, outcomes)

    def _parse_handles(self, handles: Sequence[str]) -> list[Receipt | None]:
        if not handles:
            raise InvalidArgumentError("receipt_handles", "must not be empty")
        if len(handles) > self._limits.max_receipt_handles:
            raise LimitExceededError(
                "receipt_handles", self._limits.max_receipt_handles, f"has {len(handles)} items"
            )
        for index, handle in enumerate(handles):
            if not handle:
                raise InvalidArgumentError(f"receipt_handles[{index}]", "must not be empty")
        # A malformed handle is reported NOT_FOUND, not as an error of the call.
        return [Receipt.parse(handle) for handle in handles]

    async def _report(
        self, tenant: str, handles: Sequence[str], outcomes: list[ReceiptOutcome]
    ) -> list[ReceiptResult]:
        # A stream at its in-flight cap may now have room.
        for agent in {o.to_agent for o in outcomes if o.to_agent}:
            await self._notifier.notify(tenant, agent)
        return [
            ReceiptResult(handle, outcome.status, outcome.next_visible_time)
            for handle, outcome in zip(handles, outcomes, strict=True)
        ]

    # ----- request-reply -------------------------------------------------------------

    async def request_reply(
        self,
        tenant: str,
        draft: SendDraft,
        timeout_seconds: float | None,
        call_deadline_seconds: float | None,
        actor: Actor | None = None,
    ) -> tuple[str, AgentMessage]:
        """Sends a request and waits for the first reply to its correlation
        id; DEADLINE_EXCEEDED (REPLY_TIMEOUT) if none comes in time."""
        check_id("from_agent", draft.from_agent, self._ids)
        if draft.to_agent == draft.from_agent:
            # The request itself would be taken for its reply.
            raise InvalidArgumentError("to_agent", "must differ from from_agent")
        wait = self._reply_wait(timeout_seconds, call_deadline_seconds)
        message_id = new_message_id()
        correlation = draft.correlation_id or message_id
        ttl = draft.ttl_seconds if draft.ttl_seconds is not None else wait
        request = replace(
            draft,
            reply_to=draft.from_agent,
            correlation_id=correlation,
            ttl_seconds=max(ttl, MIN_REQUEST_TTL_SECONDS),
        )
        self._check_draft(request)
        future = await self._waiters.register(tenant, draft.from_agent, correlation)
        try:
            result = await self._deliver(tenant, self._build(request, message_id), actor)
            if result.duplicate and not draft.correlation_id:
                # The earlier request used its own id as correlation id.
                await self._waiters.unregister(tenant, draft.from_agent, correlation)
                correlation = result.message_id
                future = await self._waiters.register(tenant, draft.from_agent, correlation)
            try:
                reply = await asyncio.wait_for(future, wait)
            except TimeoutError:
                raise ReplyTimeoutError(result.message_id, wait) from None
            return result.message_id, reply
        finally:
            await self._waiters.unregister(tenant, draft.from_agent, correlation)

    def _reply_wait(self, timeout: float | None, call_deadline: float | None) -> float:
        if timeout is not None:
            check_non_negative("timeout", timeout)
        wait = timeout if timeout else self._limits.default_reply_timeout_seconds
        wait = min(wait, self._limits.max_reply_timeout_seconds)
        if call_deadline is not None:
            wait = min(wait, call_deadline - REPLY_DEADLINE_MARGIN_SECONDS)
        return max(wait, 0.0)

    async def send_reply(
        self,
        tenant: str,
        request_message_id: str,
        draft: SendDraft,
        actor: Actor | None = None,
    ) -> SendResult:
        """Answers a message: to its reply_to (or sender), with its
        correlation id (or its id). `draft.to_agent` is ignored."""
        check_id("request_message_id", request_message_id, self._ids)
        original = await self._store.get(tenant, request_message_id)
        if original is None:
            raise NotFoundError(f"message {request_message_id!r} not found")
        to_agent = original.reply_to or original.from_agent
        if not to_agent:
            raise FailedPreconditionError(
                f"message {request_message_id!r} has neither reply_to nor a sender to answer"
            )
        reply = replace(
            draft,
            to_agent=to_agent,
            from_agent=draft.from_agent or original.to_agent,
            correlation_id=original.correlation_id or original.message_id,
            in_reply_to=original.message_id,
        )
        return await self.send(tenant, reply, actor)

    # ----- dead letters ---------------------------------------------------------------

    async def list_dead_letters(
        self, tenant: str, agent_id: str, requested_page_size: int, page_token: str
    ) -> tuple[list[DeadLetter], str]:
        check_id("agent_id", agent_id, self._ids)
        check_non_negative("page_size", requested_page_size)
        size = min(
            requested_page_size or self._limits.default_dead_letter_page_size,
            self._limits.max_dead_letter_page_size,
        )
        position = paging.decode(page_token, "dead_letters", [agent_id])
        after = None
        if position is not None:
            try:
                after = (float(position[0]), str(position[1]))
            except (TypeError, ValueError, IndexError, KeyError) as exc:
                raise InvalidArgumentError("page_token", "is malformed") from exc
        letters = await self._store.list_dead_letters(tenant, agent_id, after, size + 1)
        next_token = ""
        if len(letters) > size:
            letters = letters[:size]
            last = letters[-1]
            next_token = paging.encode(
                "dead_letters", [agent_id], [last.dead_letter_time, last.message.message_id]
            )
        return letters, next_token

    async def redrive(
        self,
        tenant: str,
        agent_id: str,
        message_ids: Sequence[str],
        actor: Actor | None = None,
    ) -> tuple[int, list[str]]:
        check_id("agent_id", agent_id, self._ids)
        if len(message_ids) > self._limits.max_receipt_handles:
            raise LimitExceededError(
                "message_ids", self._limits.max_receipt_handles, f"has {len(message_ids)} items"
            )
        now = self._clock()
        audit = _audit_template(actor, now)
        moved, missing = await self._store.redrive(tenant, agent_id, message_ids, now, audit)
        if moved:
            await self._notifier.notify(tenant, agent_id)
        return moved, missing

    # ----- validation ----------------------------------------------------------------

    def _check_draft(self, draft: SendDraft) -> None:
        limits = self._limits
        check_id("to_agent", draft.to_agent, self._ids)
        check_id("from_agent", draft.from_agent, self._ids, required=False)
        check_id("reply_to", draft.reply_to, self._ids, required=False)
        check_text("type", draft.type, limits.max_type_bytes)
        check_text("correlation_id", draft.correlation_id, limits.max_correlation_bytes)
        check_text("in_reply_to", draft.in_reply_to, limits.max_correlation_bytes)
        check_text("request_id", draft.idempotency_key, limits.max_idempotency_key_bytes)
        check_metadata("headers", draft.headers, self._ids)
        size = len(draft.payload.data) + len(draft.payload.content_type.encode())
        if size > limits.max_payload_bytes:
            raise LimitExceededError("payload", limits.max_payload_bytes, f"is {size} bytes")
        check_non_negative("max_deliveries", draft.max_deliveries)
        self._check_times(draft.ttl_seconds, draft.delay_seconds)

    def _check_times(self, ttl: float | None, delay: float | None) -> None:
        limits = self._limits
        if ttl is not None:
            check_non_negative("ttl", ttl)
            if ttl > limits.max_ttl_seconds:
                raise LimitExceededError(
                    "ttl", int(limits.max_ttl_seconds), f"is {ttl:.0f} seconds"
                )
        if delay is not None:
            check_non_negative("delay", delay)
            if delay > limits.max_delay_seconds:
                raise LimitExceededError(
                    "delay", int(limits.max_delay_seconds), f"is {delay:.0f} seconds"
                )
            if ttl and delay >= ttl:
                raise InvalidArgumentError("delay", "must be shorter than ttl")


def _audit_template(actor: Actor | None, now: float) -> AuditRecord | None:
    """Who makes a change, for the records the store writes of it (it names
    the message or inbox and what happened). Without an actor (internal and
    test callers) nothing is audited."""
    if actor is None:
        return None
    return record_for(actor, "", "", 0, now, "")


async def _wait(signal: asyncio.Event, seconds: float) -> None:
    """Waits for `signal`, at most `seconds` (at least a scheduler tick)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(signal.wait(), max(seconds, 0.001))
