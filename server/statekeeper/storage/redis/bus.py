"""The message bus over Redis: inbox notifications (pub/sub) and request/reply
waiters shared by every replica."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

import redis.asyncio as redis

from statekeeper.core.errors import AlreadyExistsError
from statekeeper.core.messagebus.models import AgentMessage
from statekeeper.core.messagebus.store import InboxNotifier, ReplyWaiters
from statekeeper.storage.embedded.messagebus import InProcessInboxNotifier
from statekeeper.storage.redis.codec import (
    decode_message,
    encode_message,
    text,
)
from statekeeper.storage.redis.feeds import FAILURES, Background, Breaker, connect, stop_tasks

log = logging.getLogger(__name__)


WaiterKey = tuple[str, str, str]


class _Subscriber:
    """Keeps a pub/sub subscription to `channels` alive (resubscribing after
    a failure) and hands every message's data to `handler`."""

    def __init__(
        self,
        url: str,
        channels: list[str],
        handler: Callable[[bytes], None],
        what: str,
        name: str,
    ) -> None:
        self._url = url
        self._name = name
        self._channels = channels
        self._handler = handler
        self._breaker = Breaker(what)
        self._client: redis.Redis | None = None
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._stopping = False

    async def start(self, wait_seconds: float = 1.0) -> None:
        """Subscribes; waits (a bounded while) for the subscription so that
        messages published right after start reach this replica."""
        self._client = redis.Redis.from_url(
            self._url, client_name=self._name, socket_connect_timeout=0.5, health_check_interval=10
        )
        self._task = asyncio.create_task(self._run(), name="redis-subscriber")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), wait_seconds)

    async def stop(self) -> None:
        self._stopping = True
        await stop_tasks([self._task], self._disconnect)
        self._task = None
        await _close(self._client)
        self._client = None

    async def _disconnect(self) -> None:
        if self._client is not None:
            await self._client.connection_pool.disconnect()

    async def _run(self) -> None:
        assert self._client is not None
        failures = 0
        while not self._stopping:
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(*self._channels)
                self._subscribed.set()
                self._breaker.succeeded()
                failures = 0
                while not self._stopping:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self._dispatch(message["data"])
            except FAILURES as exc:
                if self._stopping:
                    return  # our own stop cut the read
                failures += 1
                self._breaker.failed(exc)
            finally:
                with contextlib.suppress(*FAILURES):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
            await asyncio.sleep(min(2.0, 0.05 * 2 ** min(failures, 6)))

    def _dispatch(self, data: bytes) -> None:
        try:
            self._handler(data)
        except Exception:
            log.exception("Redis subscription handler failed")


async def _release(subscriber: _Subscriber | None, client: redis.Redis | None) -> None:
    """Ends `subscriber`, then closes `client` (either may be None)."""
    if subscriber is not None:
        await subscriber.stop()
    await _close(client)


async def _close(client: redis.Redis | None) -> None:
    """Closes `client`, if any; a failure is ignored: the connection is
    dropped either way."""
    if client is not None:
        with contextlib.suppress(*FAILURES):
            await client.aclose()


class RedisInboxNotifier(InboxNotifier):
    """Wakes receivers here at once and on other replicas through one
    channel (`{prefix}:mb:inbox`). Without Redis it is the in-process
    notifier: other replicas' receivers then wake at their idle poll."""

    def __init__(self, redis_url: str | None, prefix: str = "sk", timeout: float = 0.5) -> None:
        self._url = redis_url
        self._prefix = prefix
        self._channel = f"{prefix}:mb:inbox"
        self._timeout = timeout
        self._origin = uuid.uuid4().hex
        self._local = InProcessInboxNotifier()
        self._client: redis.Redis | None = None
        self._subscriber: _Subscriber | None = None
        self._breaker = Breaker("message bus wake-ups")

    async def start(self) -> None:
        if self._url is None:
            return
        self._client = connect(self._url, self._timeout, f"{self._prefix}:mb-notify")
        self._subscriber = _Subscriber(
            self._url,
            [self._channel],
            self._on_message,
            "message bus wake-ups (subscription)",
            f"{self._prefix}:mb-notify-sub",
        )
        await self._subscriber.start()

    async def stop(self) -> None:
        """Ends the subscription and releases Redis (after `close`)."""
        await _release(self._subscriber, self._client)
        self._subscriber, self._client = None, None

    def arm(self, tenant: str, agent: str) -> asyncio.Event:
        return self._local.arm(tenant, agent)

    async def notify(self, tenant: str, agent: str) -> None:
        self._local.wake(tenant, agent)
        client = self._client
        if client is None or not self._breaker.allows():
            return
        try:
            await client.publish(self._channel, json.dumps([self._origin, tenant, agent]))
        except FAILURES as exc:
            self._breaker.failed(exc)
            return
        self._breaker.succeeded()

    def close(self) -> None:
        self._local.close()

    def _on_message(self, data: bytes) -> None:
        origin, tenant, agent = json.loads(data)
        if origin != self._origin:
            self._local.wake(tenant, agent)


class RedisReplyWaiters(ReplyWaiters):
    """RequestReply waiters shared by every replica (see the module
    docstring). Without Redis (or while it is down) waiters are local: a
    reply sent through another replica then goes to the requester's inbox."""

    def __init__(
        self,
        redis_url: str | None,
        prefix: str = "sk",
        key_ttl_seconds: float = 30.0,
        offer_timeout_seconds: float = 2.0,
        timeout: float = 0.5,
    ) -> None:
        self._url = redis_url
        self._prefix = prefix
        self._ttl_ms = int(key_ttl_seconds * 1000)
        self._offer_timeout = offer_timeout_seconds
        self._timeout = timeout
        self._origin = uuid.uuid4().hex
        self._waiting: dict[WaiterKey, asyncio.Future[AgentMessage]] = {}
        self._offers: dict[str, asyncio.Future[bool]] = {}
        self._ended: list[WaiterKey] = []
        self._stopping = False
        self._client: redis.Redis | None = None
        self._subscriber: _Subscriber | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._background = Background()
        self._breaker = Breaker("reply waiters")

    def _channel(self, replica: str) -> str:
        return f"{self._prefix}:mb:replica:{replica}"

    def key(self, tenant: str, agent: str, correlation_id: str) -> str:
        """The waiter's key; hashed, since correlation ids are free text."""
        digest = hashlib.sha256(json.dumps([tenant, agent, correlation_id]).encode()).hexdigest()
        return f"{self._prefix}:{{{tenant}}}:mb:w:{digest[:40]}"

    async def start(self) -> None:
        if self._url is None:
            return
        self._client = connect(self._url, self._timeout, f"{self._prefix}:mb-waiters")
        self._subscriber = _Subscriber(
            self._url,
            [self._channel(self._origin)],
            self._on_message,
            "reply waiters (channel)",
            f"{self._prefix}:mb-waiters-sub",
        )
        await self._subscriber.start()
        self._heartbeat = asyncio.create_task(self._refresh_forever(), name="reply-waiters")

    async def stop(self) -> None:
        """Forgets this replica's waiter keys and releases Redis (call it
        after `close`, which ends the waits)."""
        self._stopping = True
        await stop_tasks([self._heartbeat])
        self._heartbeat = None
        await self._background.cancel_all()
        ended, self._ended = self._ended, []
        for waiter in [*self._waiting, *ended]:
            await self._forget(waiter)
        await _release(self._subscriber, self._client)
        self._subscriber, self._client = None, None

    async def register(
        self, tenant: str, agent: str, correlation_id: str
    ) -> asyncio.Future[AgentMessage]:
        waiter = (tenant, agent, correlation_id)
        if waiter in self._waiting:
            raise _already_waiting(agent, correlation_id)
        client = self._client
        if client is not None and self._breaker.allows():
            try:
                taken = await client.set(self.key(*waiter), self._origin, nx=True, px=self._ttl_ms)
            except FAILURES as exc:
                self._breaker.failed(exc)  # degraded: a local waiter only
            else:
                self._breaker.succeeded()
                if not taken:
                    raise _already_waiting(agent, correlation_id)
        if waiter in self._waiting:  # registered here while we asked Redis
            raise _already_waiting(agent, correlation_id)
        future: asyncio.Future[AgentMessage] = asyncio.get_running_loop().create_future()
        self._waiting[waiter] = future
        return future

    async def unregister(self, tenant: str, agent: str, correlation_id: str) -> None:
        waiter = (tenant, agent, correlation_id)
        if self._waiting.pop(waiter, None) is not None:
            await self._forget(waiter)

    async def _forget(self, waiter: WaiterKey) -> None:
        """Deletes the waiter's key if this replica still holds it."""
        if self._client is None:
            return
        try:
            await self._client.eval(_DELETE_IF_MINE, 1, self.key(*waiter), self._origin)
        except FAILURES as exc:
            self._breaker.failed(exc)  # the key expires by itself

    async def is_waiting(self, tenant: str, agent: str, correlation_id: str) -> bool:
        waiter = (tenant, agent, correlation_id)
        future = self._waiting.get(waiter)
        if future is not None:
            return not future.done()
        holder = await self._holder(waiter)
        return holder is not None

    def close(self, error: Exception) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(error)
        self._ended.extend(self._waiting)  # their keys go at `stop`
        self._waiting.clear()
        for offer in self._offers.values():
            if not offer.done():
                offer.set_result(False)

    async def offer(self, tenant: str, message: AgentMessage) -> bool:
        waiter = (tenant, message.to_agent, message.correlation_id)
        if waiter in self._waiting:
            return self._take(waiter, message)
        holder = await self._holder(waiter)
        if holder is None:
            return False
        try:
            return await self._offer_remote(holder, tenant, message)
        except FAILURES as exc:
            self._breaker.failed(exc)
            return False

    async def _holder(self, waiter: WaiterKey) -> str | None:
        """The other replica that holds this waiter, if any."""
        client = self._client
        if client is None or not self._breaker.allows():
            return None
        try:
            raw = await client.get(self.key(*waiter))
        except FAILURES as exc:
            self._breaker.failed(exc)
            return None
        holder = None if raw is None else text(raw)
        return None if holder in (None, self._origin) else holder

    async def _offer_remote(self, holder: str, tenant: str, message: AgentMessage) -> bool:
        """Asks the holder's replica to take `message`; False unless it
        answers that it did (a lost answer makes a duplicate, never a loss)."""
        assert self._client is not None
        token = uuid.uuid4().hex
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._offers[token] = answer
        body = {
            "k": "offer",
            "from": self._origin,
            "token": token,
            "tenant": tenant,
            "message": encode_message(message),
        }
        try:
            receivers = await self._client.publish(self._channel(holder), json.dumps(body))
            if not receivers:
                return False  # that replica is gone; its key will expire
            return await asyncio.wait_for(answer, self._offer_timeout)
        except TimeoutError:
            log.warning("replica %s did not answer a reply offer in time", holder)
            return False
        finally:
            self._offers.pop(token, None)

    def _take(self, waiter: WaiterKey, message: AgentMessage) -> bool:
        future = self._waiting.get(waiter)
        if future is None or future.done():
            return False
        future.set_result(message)
        return True

    def _on_message(self, data: bytes) -> None:
        body = json.loads(data)
        if body["k"] == "answer":
            answer = self._offers.get(body["token"])
            if answer is not None and not answer.done():
                answer.set_result(bool(body["taken"]))
            return
        message = decode_message(body["message"])
        taken = self._take((body["tenant"], message.to_agent, message.correlation_id), message)
        reply = {"k": "answer", "token": body["token"], "taken": taken}
        self._background.spawn(self._answer(body["from"], reply), "reply-answer")

    async def _answer(self, replica: str, reply: dict[str, Any]) -> None:
        if self._client is not None:
            await self._client.publish(self._channel(replica), json.dumps(reply))

    async def _refresh_forever(self) -> None:
        """Keeps this replica's waiter keys alive; a crashed replica's keys
        expire after key_ttl_seconds."""
        while not self._stopping:
            await asyncio.sleep(self._ttl_ms / 3000)
            client, waiters = self._client, list(self._waiting)
            if client is None or not waiters:
                continue
            try:
                async with client.pipeline(transaction=False) as pipe:
                    for waiter in waiters:
                        pipe.set(self.key(*waiter), self._origin, px=self._ttl_ms)
                    await pipe.execute()
            except FAILURES as exc:
                self._breaker.failed(exc)


# Deletes a waiter key only if this replica still holds it.
_DELETE_IF_MINE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _already_waiting(agent: str, correlation_id: str) -> AlreadyExistsError:
    return AlreadyExistsError(f"agent {agent!r} already waits for a reply on {correlation_id!r}")
