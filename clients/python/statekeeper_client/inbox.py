"""Inbox consumers: the receive loop of the message bus, done once.

`MessageService` delivers at least once: a delivered message stays invisible
to other receivers for its visibility timeout, Ack removes it, Nack (or the
timeout passing) makes it deliverable again, and every delivery has its own
receipt handle. An `InboxConsumer` runs that protocol for a handler:

* it keeps a `ReceiveMessages` stream open (`max_in_flight` deliveries
  outstanding), and reopens it after a lost connection, a server restart or
  SLOW_CONSUMER, with exponential backoff, until `reconnect_timeout` seconds
  pass without a working stream (counted from the first failure of the
  current run; a stream that delivered something or stayed open for
  `STREAM_WORKING_AFTER` seconds, even on an idle inbox, ends the run);
* for each delivery it calls `handler(delivery)` while a helper extends the
  delivery's visibility every `extend_every` seconds (a third of
  `visibility_timeout` by default), so a long handler keeps its lease;
* the handler's outcome settles the delivery: returning None (or anything
  but a `Nack`) acks it; returning `Nack(...)` gives it back (after `delay`,
  or to the dead letters with `dead_letter=True`); raising nacks it with a
  delay that grows with the delivery count (`redelivery_backoff`), then
  calls `on_error(exception, delivery)`;
* a settle call that fails (server away) is tried again until the lease
  ends (the deadline of the last successful extension); after that the
  message is redelivered anyway.

A message may therefore be handled more than once (a lease lost to a server
restart, an ack that never arrived): make handlers idempotent, e.g. keyed on
`delivery.message.message_id`. The consumer never calls the handler twice for
the same delivery, and skips a delivery whose lease already ended before
its turn came (it will come again).

    def handle(delivery):
        print(delivery.message.type, delivery.message.payload.data)

    with Client(target, api_key=key) as sk:
        sk.inbox("agent-7", handle).run(timeout=60)   # or .run() until .stop()
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf.duration_pb2 import Duration

from statekeeper_client._common import RetryPolicy, merge_metadata
from statekeeper_client.errors import StatekeeperRpcError, wrap
from statekeeper_client.v1 import message_pb2

if TYPE_CHECKING:
    from statekeeper_client.aio import AsyncClient
    from statekeeper_client.client import Client

_METHOD = "statekeeper.v1.MessageService/ReceiveMessages"

#: Seconds an inbox consumer keeps reconnecting without a working stream.
DEFAULT_RECONNECT_TIMEOUT = 60.0

#: Seconds a ReceiveMessages stream must stay open to count as working (it
#: then ends a run of failures even if no delivery came: the server sends
#: nothing on an idle inbox).
STREAM_WORKING_AFTER = 1.0

#: The delay of a nack after the handler raised, by delivery count.
DEFAULT_REDELIVERY_BACKOFF = RetryPolicy(
    max_attempts=1_000_000, initial_backoff=1.0, max_backoff=60.0, multiplier=2.0, jitter=0.2
)


@dataclass(frozen=True)
class Nack:
    """A handler's answer that gives the delivery back instead of acking it:
    deliverable again after `delay` seconds (None: the consumer's
    redelivery backoff for the delivery count), or moved to the dead
    letters at once with `dead_letter=True` (recording `reason`)."""

    delay: float | None = None
    dead_letter: bool = False
    reason: str = ""


@dataclass
class InboxStats:
    """What a consumer did (counts since it was made)."""

    #: Handler calls.
    handled: int = 0
    #: Deliveries acknowledged (status OK or ALREADY_ACKED).
    acked: int = 0
    #: Deliveries given back (handler returned Nack or raised).
    nacked: int = 0
    #: Handler calls that raised.
    failed: int = 0
    #: Deliveries whose lease ended before they were settled (skipped, or
    #: settled too late): the server delivers them again.
    expired: int = 0
    #: ExtendVisibility calls made.
    extensions: int = 0
    #: ReceiveMessages streams opened (1 + reconnects).
    streams_opened: int = 0
    #: Streams the server ended with SLOW_CONSUMER.
    slow_consumer: int = 0


Handler = Callable[[message_pb2.Delivery], Any]
AsyncHandler = Callable[[message_pb2.Delivery], Awaitable[Any] | Any]

_SETTLED_OK = frozenset({message_pb2.RECEIPT_STATUS_OK, message_pb2.RECEIPT_STATUS_ALREADY_ACKED})


def _duration(seconds: float) -> Duration:
    duration = Duration()
    duration.FromNanoseconds(int(seconds * 1e9))
    return duration


class _Lease:
    """Until when a delivery is ours: its visibility deadline, moved by every
    successful ExtendVisibility (the delivery itself is left as received)."""

    def __init__(self, delivery: message_pb2.Delivery) -> None:
        self.until: datetime | None = None
        if delivery.HasField("visibility_deadline"):
            self.until = delivery.visibility_deadline.ToDatetime(tzinfo=timezone.utc)

    def left(self) -> float:
        """Seconds until the visibility deadline (inf if unknown)."""
        if self.until is None:
            return float("inf")
        return (self.until - datetime.now(timezone.utc)).total_seconds()

    def extended(self, answer: message_pb2.ExtendVisibilityResponse) -> bool:
        """Takes note of an ExtendVisibility answer; False when the lease is
        gone (the message will come again)."""
        if not answer.results:
            return True
        result = answer.results[0]
        if result.status != message_pb2.RECEIPT_STATUS_OK:
            return False
        if result.HasField("next_visible_time"):
            self.until = result.next_visible_time.ToDatetime(tzinfo=timezone.utc)
        return True


class _Loop:
    """The options and the decisions shared by the sync and async consumer."""

    def __init__(
        self,
        agent_id: str,
        *,
        types: Iterable[str],
        visibility_timeout: float,
        extend_every: float | None,
        max_in_flight: int,
        retry: RetryPolicy,
        redelivery_backoff: RetryPolicy,
        reconnect_timeout: float | None,
    ) -> None:
        if not agent_id:
            raise ValueError("agent_id is required")
        if visibility_timeout <= 0:
            raise ValueError("visibility_timeout must be > 0")
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be >= 1")
        self.agent_id = agent_id
        self.types = list(types)
        self.visibility_timeout = visibility_timeout
        self.extend_every = extend_every if extend_every is not None else visibility_timeout / 3
        if self.extend_every <= 0:
            raise ValueError("extend_every must be > 0")
        self.max_in_flight = max_in_flight
        self.retry = retry
        self.redelivery_backoff = redelivery_backoff
        self.reconnect_timeout = reconnect_timeout
        self.stats = InboxStats()
        self.failures = 0
        self.failing_since: float | None = None

    def request(self) -> message_pb2.ReceiveMessagesRequest:
        return message_pb2.ReceiveMessagesRequest(
            agent_id=self.agent_id,
            max_in_flight=self.max_in_flight,
            visibility_timeout=_duration(self.visibility_timeout),
            types=self.types,
        )

    def received(self) -> None:
        self.failures = 0
        self.failing_since = None

    def ended(
        self, error: StatekeeperRpcError | None, deadline: float | None, opened_at: float
    ) -> float | None:
        """The pause before reopening the stream that was opened at
        `opened_at` (monotonic), None to stop (the run's deadline passed);
        raises an error that is not worth a reconnect."""
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return None
        if now - opened_at >= STREAM_WORKING_AFTER:
            # The stream worked (an idle inbox sends nothing): a new run of
            # failures starts here.
            self.received()
        if error is not None:
            if error.reason == "SLOW_CONSUMER":
                self.stats.slow_consumer += 1
            elif error.code() != grpc.StatusCode.UNAVAILABLE:
                raise error
        if self.failing_since is None:
            self.failing_since = now
        self.failures += 1
        pause = self.retry.backoff(self.failures)
        if (
            self.reconnect_timeout is not None
            and now + pause - self.failing_since > self.reconnect_timeout
        ):
            if error is not None:
                raise error
            raise RuntimeError("ReceiveMessages streams kept ending without an error")
        if deadline is not None:
            pause = min(pause, max(0.0, deadline - now))
        return pause

    def outcome(self, result: Any, delivery: message_pb2.Delivery) -> Nack | None:
        if isinstance(result, Nack):
            return result
        return None

    def nack_for_failure(self, delivery: message_pb2.Delivery) -> Nack:
        return Nack(delay=self.redelivery_backoff.backoff(max(1, delivery.delivery_count)))

    def nack_request(self, delivery: message_pb2.Delivery, nack: Nack) -> Any:
        delay = nack.delay
        if delay is None:
            delay = self.redelivery_backoff.backoff(max(1, delivery.delivery_count))
        return message_pb2.NackMessagesRequest(
            receipt_handles=[delivery.receipt_handle],
            delay=_duration(max(0.0, delay)),
            dead_letter=nack.dead_letter,
            reason=nack.reason,
        )

    def extend_request(self, delivery: message_pb2.Delivery) -> Any:
        return message_pb2.ExtendVisibilityRequest(
            receipt_handles=[delivery.receipt_handle],
            visibility_timeout=_duration(self.visibility_timeout),
        )

    def count_settled(self, nack: Nack | None, status: int) -> None:
        if status in _SETTLED_OK or (
            nack is not None and status == message_pb2.RECEIPT_STATUS_DEAD_LETTERED
        ):
            if nack is None:
                self.stats.acked += 1
            else:
                self.stats.nacked += 1
        else:
            self.stats.expired += 1


class InboxConsumer:
    """The inbox consumer over the sync `Client` (see the module docstring).
    Made by `Client.inbox(agent_id, handler, ...)`."""

    def __init__(
        self,
        client: Client,
        agent_id: str,
        handler: Handler,
        *,
        types: Iterable[str] = (),
        visibility_timeout: float = 30.0,
        extend_every: float | None = None,
        max_in_flight: int = 1,
        retry: RetryPolicy | None = None,
        redelivery_backoff: RetryPolicy = DEFAULT_REDELIVERY_BACKOFF,
        reconnect_timeout: float | None = DEFAULT_RECONNECT_TIMEOUT,
        on_error: Callable[[BaseException, message_pb2.Delivery], Any] | None = None,
    ) -> None:
        self._client = client
        self._handler = handler
        self._on_error = on_error
        self._loop = _Loop(
            agent_id,
            types=types,
            visibility_timeout=visibility_timeout,
            extend_every=extend_every,
            max_in_flight=max_in_flight,
            retry=retry or client.retry,
            redelivery_backoff=redelivery_backoff,
            reconnect_timeout=reconnect_timeout,
        )
        self._stopped = threading.Event()
        self._call: Any = None
        self._lock = threading.Lock()

    @property
    def stats(self) -> InboxStats:
        return self._loop.stats

    def stop(self) -> None:
        """Ends `run` (from another thread or a handler): the delivery being
        handled is settled first."""
        self._stopped.set()
        with self._lock:
            if self._call is not None:
                self._call.cancel()

    def run(self, *, timeout: float | None = None, max_messages: int | None = None) -> InboxStats:
        """Consumes until `stop()`, `timeout` seconds, or `max_messages`
        handler calls; returns the stats. Raises the typed error of a
        stream that ended for a reason a reconnect cannot fix (e.g.
        INVALID_FIELD, UNAUTHENTICATED), or the last error once reconnecting
        took longer than `reconnect_timeout`."""
        loop = self._loop
        deadline = None if timeout is None else time.monotonic() + timeout
        raw = self._client._services["messages"]._raw
        metadata = merge_metadata(self._client._auth, None)
        self._stopped.clear()
        while not self._stopped.is_set():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            with self._lock:
                call = raw.ReceiveMessages(loop.request(), metadata=metadata, timeout=remaining)
                self._call = call
            opened_at = time.monotonic()
            loop.stats.streams_opened += 1
            error: StatekeeperRpcError | None = None
            try:
                for response in call:
                    loop.received()
                    for delivery in response.deliveries:
                        self._handle(delivery)
                        if max_messages is not None and loop.stats.handled >= max_messages:
                            self.stop()
                            return loop.stats
            except grpc.RpcError as failure:
                if self._stopped.is_set():
                    break
                error = wrap(failure, _METHOD)
            if self._stopped.is_set():
                break
            pause = loop.ended(error, deadline, opened_at)
            if pause is None:
                break
            self._stopped.wait(pause)
        return loop.stats

    def _handle(self, delivery: message_pb2.Delivery) -> None:
        loop = self._loop
        lease = _Lease(delivery)
        if lease.left() <= 0:
            loop.stats.expired += 1
            return
        done = threading.Event()
        extender = threading.Thread(target=self._extend, args=(delivery, lease, done), daemon=True)
        extender.start()
        nack: Nack | None
        try:
            loop.stats.handled += 1
            try:
                nack = loop.outcome(self._handler(delivery), delivery)
            except Exception as exception:
                loop.stats.failed += 1
                nack = loop.nack_for_failure(delivery)
                if self._on_error is not None:
                    self._on_error(exception, delivery)
        finally:
            done.set()
            extender.join()
        self._settle(delivery, lease, nack)

    def _extend(self, delivery: message_pb2.Delivery, lease: _Lease, done: threading.Event) -> None:
        messages = self._client.messages
        while not done.wait(self._loop.extend_every):
            try:
                answer = messages.ExtendVisibility(
                    self._loop.extend_request(delivery), timeout=self._loop.extend_every
                )
                self._loop.stats.extensions += 1
                if not lease.extended(answer):
                    return  # the lease is gone; the message will come again
            except grpc.RpcError:
                continue  # server away: try again at the next tick

    def _settle(self, delivery: message_pb2.Delivery, lease: _Lease, nack: Nack | None) -> None:
        loop = self._loop
        messages = self._client.messages
        attempt = 0
        while True:
            attempt += 1
            try:
                if nack is None:
                    answer = messages.AckMessages(
                        message_pb2.AckMessagesRequest(receipt_handles=[delivery.receipt_handle])
                    )
                else:
                    answer = messages.NackMessages(loop.nack_request(delivery, nack))
                loop.count_settled(nack, answer.results[0].status if answer.results else 0)
                return
            except grpc.RpcError:
                pause = loop.retry.backoff(attempt)
                if lease.left() <= pause:
                    loop.stats.expired += 1
                    return
                time.sleep(pause)


class AsyncInboxConsumer:
    """The asyncio twin of `InboxConsumer`, made by `AsyncClient.inbox`. The
    handler may be a coroutine function (awaited) or a plain function (run in
    a worker thread, so that the lease extension keeps running)."""

    def __init__(
        self,
        client: AsyncClient,
        agent_id: str,
        handler: AsyncHandler,
        *,
        types: Iterable[str] = (),
        visibility_timeout: float = 30.0,
        extend_every: float | None = None,
        max_in_flight: int = 1,
        retry: RetryPolicy | None = None,
        redelivery_backoff: RetryPolicy = DEFAULT_REDELIVERY_BACKOFF,
        reconnect_timeout: float | None = DEFAULT_RECONNECT_TIMEOUT,
        on_error: Callable[[BaseException, message_pb2.Delivery], Any] | None = None,
    ) -> None:
        self._client = client
        self._handler = handler
        self._on_error = on_error
        self._loop = _Loop(
            agent_id,
            types=types,
            visibility_timeout=visibility_timeout,
            extend_every=extend_every,
            max_in_flight=max_in_flight,
            retry=retry or client.retry,
            redelivery_backoff=redelivery_backoff,
            reconnect_timeout=reconnect_timeout,
        )
        self._stopped = asyncio.Event()
        self._call: Any = None

    @property
    def stats(self) -> InboxStats:
        return self._loop.stats

    def stop(self) -> None:
        """Ends `run`; the delivery being handled is settled first."""
        self._stopped.set()
        if self._call is not None:
            self._call.cancel()

    async def run(
        self, *, timeout: float | None = None, max_messages: int | None = None
    ) -> InboxStats:
        """As `InboxConsumer.run`."""
        loop = self._loop
        deadline = None if timeout is None else time.monotonic() + timeout
        raw = self._client._services["messages"]._raw
        metadata = merge_metadata(self._client._auth, None)
        self._stopped.clear()
        while not self._stopped.is_set():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            call = raw.ReceiveMessages(loop.request(), metadata=metadata, timeout=remaining)
            self._call = call
            opened_at = time.monotonic()
            loop.stats.streams_opened += 1
            error: StatekeeperRpcError | None = None
            try:
                async for response in call:
                    loop.received()
                    for delivery in response.deliveries:
                        await self._handle(delivery)
                        if max_messages is not None and loop.stats.handled >= max_messages:
                            self.stop()
                            return loop.stats
            except asyncio.CancelledError:
                if self._stopped.is_set() and not _task_cancelling():
                    break
                call.cancel()
                raise
            except grpc.RpcError as failure:
                if self._stopped.is_set():
                    break
                error = wrap(failure, _METHOD)
            if self._stopped.is_set():
                break
            pause = loop.ended(error, deadline, opened_at)
            if pause is None:
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), pause)
        return loop.stats

    async def _call_handler(self, delivery: message_pb2.Delivery) -> Any:
        handler = self._handler
        # A coroutine function, or an object whose __call__ is one.
        if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
            type(handler).__call__
        ):
            return await handler(delivery)
        result = await asyncio.to_thread(handler, delivery)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _handle(self, delivery: message_pb2.Delivery) -> None:
        loop = self._loop
        lease = _Lease(delivery)
        if lease.left() <= 0:
            loop.stats.expired += 1
            return
        extender = asyncio.ensure_future(self._extend(delivery, lease))
        nack: Nack | None
        try:
            loop.stats.handled += 1
            try:
                nack = loop.outcome(await self._call_handler(delivery), delivery)
            except Exception as exception:
                loop.stats.failed += 1
                nack = loop.nack_for_failure(delivery)
                if self._on_error is not None:
                    result = self._on_error(exception, delivery)
                    if inspect.isawaitable(result):
                        await result
        finally:
            extender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await extender
        await self._settle(delivery, lease, nack)

    async def _extend(self, delivery: message_pb2.Delivery, lease: _Lease) -> None:
        messages = self._client.messages
        while True:
            await asyncio.sleep(self._loop.extend_every)
            try:
                answer = await messages.ExtendVisibility(
                    self._loop.extend_request(delivery), timeout=self._loop.extend_every
                )
                self._loop.stats.extensions += 1
                if not lease.extended(answer):
                    return
            except grpc.RpcError:
                continue

    async def _settle(
        self, delivery: message_pb2.Delivery, lease: _Lease, nack: Nack | None
    ) -> None:
        loop = self._loop
        messages = self._client.messages
        attempt = 0
        while True:
            attempt += 1
            try:
                if nack is None:
                    answer = await messages.AckMessages(
                        message_pb2.AckMessagesRequest(receipt_handles=[delivery.receipt_handle])
                    )
                else:
                    answer = await messages.NackMessages(loop.nack_request(delivery, nack))
                loop.count_settled(nack, answer.results[0].status if answer.results else 0)
                return
            except grpc.RpcError:
                pause = loop.retry.backoff(attempt)
                if lease.left() <= pause:
                    loop.stats.expired += 1
                    return
                await asyncio.sleep(pause)


def _task_cancelling() -> bool:
    """Whether the current task itself is being cancelled (not just the
    stream call we cancelled in `stop`)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if callable(cancelling) else False
