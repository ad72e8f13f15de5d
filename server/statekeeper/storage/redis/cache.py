"""Redis hot tier: session records cached for every replica (redis-py asyncio).

Redis holds copies only. Every entry can be rebuilt from PostgreSQL, so a
flushed, restarted or unreachable Redis costs latency, never data. The
protocol that keeps the copies from going stale is described in
storage/production.py; this module implements its four steps as Lua
scripts, each atomic on the Redis server:

* READ: return the entry and refresh its TTL; on a miss take a read lease
  (a random token) that a later BACKFILL must still find.
* BACKFILL: store a record read from PostgreSQL, only if the reader's lease
  is still there.
* BEGIN_WRITE (before the PostgreSQL commit): delete the entry and take a
  write lease. READ_FOR_WRITE does READ's lookup and BEGIN_WRITE in one
  step, for a writer that reads the record it is about to change (appends).
* FINISH_WRITE (after the commit): delete whatever lease is there (so every
  reader that started before the commit fails to backfill); store the new
  record if the writer's own lease survived, or else update an entry of the
  same session incarnation (its create_time) only to a newer version.

Every entry and lease records the Redis run_id it was written under; one
written before a Redis restart (restored from an RDB/AOF file) is treated as
absent, so a persisted, outdated cache never comes back to life.

Keys: `{prefix}:{<tenant>}:s:<session_id>` (hash: boot, inc, ver, rec) and
`{prefix}:{<tenant>}:l:<session_id>` (lease). The tenant is the Redis Cluster
hash tag, so a session's keys live in one slot and each tenant's keys can be
placed together.

When a call fails, the cache is bypassed for a short while (reads go to
PostgreSQL, writes remember the key as owed). The server's health monitor
calls `probe()`; once Redis answers again, owed keys are invalidated first
and only then is the cache used again.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import NoScriptError

from statekeeper import logs
from statekeeper.core import observations
from statekeeper.core.bounded_cache import BoundedCache
from statekeeper.core.sessions.models import SessionRecord
from statekeeper.storage.codec import record_from_json, record_to_json

log = logging.getLogger(__name__)

_BOOT = "local boot = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')\n"

_READ = (
    _BOOT
    + """
local entry = redis.call('HMGET', KEYS[1], 'boot', 'rec')
if entry[2] and entry[1] == boot then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return entry[2]
end
if entry[2] then redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[2], ARGV[2] .. '@' .. boot, 'PX', ARGV[3])
return false
"""
)

_BACKFILL = (
    _BOOT
    + """
if redis.call('GET', KEYS[2]) ~= ARGV[1] .. '@' .. boot then return 0 end
redis.call('DEL', KEYS[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'boot', boot, 'inc', ARGV[2], 'ver', ARGV[3], 'rec', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"""
)

_BEGIN_WRITE = (
    _BOOT
    + """
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1] .. '@' .. boot, 'PX', ARGV[2])
return 1
"""
)

# READ and BEGIN_WRITE in one step, for a writer that reads the record it is
# about to change: return the entry (if of this run), delete it, take a write
# lease.
_READ_FOR_WRITE = (
    _BOOT
    + """
local entry = redis.call('HMGET', KEYS[1], 'boot', 'rec')
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1] .. '@' .. boot, 'PX', ARGV[2])
if entry[2] and entry[1] == boot then return entry[2] end
return false
"""
)

_FINISH_WRITE = (
    _BOOT
    + """
local mine = redis.call('GET', KEYS[2]) == ARGV[1] .. '@' .. boot
redis.call('DEL', KEYS[2])
local cur = redis.call('HMGET', KEYS[1], 'boot', 'inc', 'ver')
local same = cur[1] == boot and cur[2] == ARGV[2]
if (mine and not cur[1]) or (same and tonumber(cur[3]) < tonumber(ARGV[3])) then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'boot', boot, 'inc', ARGV[2], 'ver', ARGV[3], 'rec', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
if cur[1] and not same then redis.call('DEL', KEYS[1]) end
return 0
"""
)

# A script call waiting for the next pipeline: script, keys, args, caller.
_ScriptCall = tuple[Any, list[str], list[str], "asyncio.Future[Any]"]

_OWED_LIMIT = 100_000
# Records this process last stored or read, with the encoding Redis holds:
# an entry read back byte for byte (the common case: the replica that wrote
# a session reads it next) is not decoded again. Bounded by count and bytes.
_DECODED_SESSIONS = 4096
_DECODED_MAX_BYTES = 32 * 2**20
_DECODED_MAX_ENTRY_BYTES = 256 * 2**10
# What a Redis call raises when Redis cannot serve it.
_FAILURES = (redis.RedisError, OSError, TimeoutError)


def redact(url: str) -> str:
    """Its password (user info or `password=` parameter) replaced by ***."""
    return logs.redact(url)


def incarnation(record: SessionRecord) -> str:
    """Tells a session apart from an earlier one with the same id."""
    return repr(record.create_time)


class SessionCache:
    """The Redis hot tier of session records, shared by all replicas."""

    def __init__(
        self,
        url: str,
        prefix: str = "sk",
        ttl_seconds: float = 300.0,
        timeout_seconds: float = 0.5,
        lease_seconds: float = 5.0,
    ) -> None:
        self._url = url
        self._prefix = prefix
        self._ttl_ms = str(int(ttl_seconds * 1000))
        self._lease_ms = str(int(lease_seconds * 1000))
        self._timeout = timeout_seconds
        self._client: redis.Redis | None = None
        self._scripts: dict[str, Any] = {}
        self._down_until = 0.0
        self._down = False
        self._owed: set[tuple[str, str]] = set()
        self._flush_needed = False
        self._probing = asyncio.Lock()
        self._batch: list[_ScriptCall] = []
        self._batch_tasks: set[asyncio.Task[None]] = set()
        self._batch_in_flight = False
        self._waiting_context: contextvars.Context | None = None
        self._decoded: BoundedCache[tuple[str, str], tuple[str, SessionRecord]] = BoundedCache(
            _decoded_bytes, _DECODED_SESSIONS, _DECODED_MAX_BYTES, _DECODED_MAX_ENTRY_BYTES
        )

    @property
    def description(self) -> str:
        return f"Redis cache at {redact(self._url)} (prefix {self._prefix!r})"

    async def start(self) -> None:
        self._client = redis.Redis.from_url(
            self._url,
            socket_timeout=self._timeout,
            socket_connect_timeout=self._timeout,
            retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False,
        )
        for name, source in (
            ("read", _READ),
            ("backfill", _BACKFILL),
            ("begin", _BEGIN_WRITE),
            ("read_for_write", _READ_FOR_WRITE),
            ("finish", _FINISH_WRITE),
        ):
            self._scripts[name] = self._client.register_script(source)
        if await self.probe():
            await self._warn_if_persistent()

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def keys(self, tenant: str, session_id: str) -> list[str]:
        """The entry key and the lease key of one session."""
        base = f"{self._prefix}:{{{tenant}}}"
        return [f"{base}:s:{session_id}", f"{base}:l:{session_id}"]

    async def usable(self) -> bool:
        """False while Redis is failing or owed invalidations are pending;
        retries Redis (settling what is owed first) once a second."""
        if self._client is None:
            return False
        if not self._down and not self._owed and not self._flush_needed:
            return True
        if time.monotonic() < self._down_until or self._probing.locked():
            return False
        return await self.probe()

    async def read(self, tenant: str, session_id: str) -> tuple[SessionRecord | None, str]:
        """(record, "") on a hit; (None, lease token) on a miss; (None, "")
        when the cache cannot be used."""
        if not await self.usable():
            return None, ""
        token = secrets.token_hex(8)
        try:
            found = await self._script(
                "read", self.keys(tenant, session_id), [self._ttl_ms, token, self._lease_ms]
            )
        except _FAILURES as exc:
            self._fail(exc)
            return None, ""
        if found is None:
            return None, token
        return self._decode(tenant, session_id, found), ""

    async def backfill(
        self, tenant: str, session_id: str, token: str, record: SessionRecord
    ) -> None:
        if not token or not await self.usable():
            return
        args = [
            token,
            incarnation(record),
            str(record.version),
            record_to_json(record),
            self._ttl_ms,
        ]
        try:
            await self._script("backfill", self.keys(tenant, session_id), args)
        except _FAILURES as exc:
            self._fail(exc)

    # Writes always try Redis, even while reads bypass it: a replica that
    # skipped the cache on a write while Redis was back for the others would
    # leave them a stale entry.

    async def begin_write(self, tenant: str, session_id: str) -> str:
        """Before the durable commit: drop the entry, take a write lease."""
        token = secrets.token_hex(8)
        keys = self.keys(tenant, session_id)
        if self._scripts and await self._attempt(
            lambda: self._script("begin", keys, [token, self._lease_ms])
        ):
            self._owed.discard((tenant, session_id))
            return token
        self._owe(tenant, session_id)
        return ""

    async def read_for_write(
        self, tenant: str, session_id: str
    ) -> tuple[SessionRecord | None, str]:
        """READ and BEGIN_WRITE in one round trip: (the cached record or None
        on a miss, the write lease token), or (None, "") when the cache
        cannot be used (the writer then calls begin_write as usual)."""
        if not await self.usable():
            return None, ""
        token = secrets.token_hex(8)
        try:
            found = await self._script(
                "read_for_write", self.keys(tenant, session_id), [token, self._lease_ms]
            )
        except _FAILURES as exc:
            self._fail(exc)
            return None, ""
        self._owed.discard((tenant, session_id))
        if found is None:
            return None, token
        return self._decode(tenant, session_id, found), token

    def _decode(self, tenant: str, session_id: str, found: bytes | str) -> SessionRecord:
        text = found.decode() if isinstance(found, bytes) else found
        known = self._decoded.get((tenant, session_id))
        if known is not None and known[0] == text:
            return known[1]
        record = record_from_json(text)
        self._decoded.put((tenant, session_id), (text, record))
        return record

    async def finish_write(
        self,
        tenant: str,
        session_id: str,
        token: str,
        record: SessionRecord | None,
        state: str | None = None,
    ) -> None:
        """After the durable commit (or its failure, with record None);
        `state` is the record's encoding when the caller has it already."""
        if record is not None:
            state = state or record_to_json(record)
            self._decoded.put((tenant, session_id), (state, record))
            args = [token, incarnation(record), str(record.version), state, self._ttl_ms]
            keys = self.keys(tenant, session_id)
            if self._scripts and await self._attempt(lambda: self._script("finish", keys, args)):
                self._owed.discard((tenant, session_id))
                return
        await self.invalidate(tenant, session_id)

    async def invalidate(self, tenant: str, session_id: str) -> None:
        """Drops the entry and any lease; remembered as owed if Redis fails.
        The decoded record this process remembers goes too (an erased
        session's content must not stay in memory)."""
        self._decoded.pop((tenant, session_id))
        client = self._client
        if client is not None and await self._attempt(
            lambda: client.delete(*self.keys(tenant, session_id))
        ):
            self._owed.discard((tenant, session_id))
            return
        self._owe(tenant, session_id)

    async def _script(self, name: str, keys: list[str], args: list[str]) -> Any:
        """Runs one of the scripts. Calls made in the same turn of the event
        loop, or while the previous pipeline is on its way (many clients'
        appends at once), share one pipeline: one round trip and one write
        to the socket for all of them, and far less client work per call."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._batch.append((self._scripts[name], keys, args, future))
        if len(self._batch) == 1:
            if self._batch_in_flight:
                # Sent when the pipeline out returns: in this caller's
                # context if it is still alone then.
                self._waiting_context = contextvars.copy_context()
            else:
                loop.call_soon(self._send_batch)
        return await future

    def _send_batch(self) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        self._batch_in_flight = True
        # One caller: its own context (call_soon ran this in it, or it waited
        # behind the previous pipeline), so its spans stay in its trace;
        # several: none of theirs (a span per trace is wrong).
        waiting, self._waiting_context = self._waiting_context, None
        context = waiting if len(batch) == 1 else contextvars.Context()
        task = asyncio.create_task(self._run_batch(batch), context=context)
        self._batch_tasks.add(task)
        task.add_done_callback(self._batch_sent)

    def _batch_sent(self, task: asyncio.Task[None]) -> None:
        """The next pipeline takes whatever queued meanwhile."""
        self._batch_tasks.discard(task)
        self._batch_in_flight = False
        self._send_batch()

    async def _run_batch(self, batch: list[_ScriptCall]) -> None:
        try:
            results = await self._execute(batch)
        except asyncio.CancelledError:
            for *_, future in batch:
                future.cancel()
            raise
        except Exception as exc:
            results = [exc] * len(batch)
        for (*_, future), result in zip(batch, results, strict=True):
            if future.done():
                continue  # its caller was cancelled
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _execute(self, batch: list[_ScriptCall]) -> list[Any]:
        if len(batch) == 1:
            script, keys, args, _ = batch[0]
            return [await script(keys=keys, args=args)]
        assert self._client is not None
        # EVALSHA straight into the pipeline (a pipeline that knows its
        # scripts checks them with SCRIPT EXISTS first: a round trip more);
        # a script Redis has lost is loaded and run again on its own.
        pipe = self._client.pipeline(transaction=False)
        for script, keys, args, _ in batch:
            pipe.evalsha(script.sha, len(keys), *keys, *args)
        results: list[Any] = await pipe.execute(raise_on_error=False)
        for index, result in enumerate(results):
            if isinstance(result, NoScriptError):
                script, keys, args, _ = batch[index]
                results[index] = await script(keys=keys, args=args)
        return results

    async def _attempt(self, call: Callable[[], Awaitable[object]]) -> bool:
        try:
            await call()
            return True
        except _FAILURES as exc:
            self._fail(exc)
            return False

    def _owe(self, tenant: str, session_id: str) -> None:
        if len(self._owed) >= _OWED_LIMIT:
            self._flush_needed = True
            self._owed.clear()
        if not self._flush_needed:
            self._owed.add((tenant, session_id))

    def _fail(self, exc: BaseException) -> None:
        observations.store_error("redis", exc)
        if not self._down:
            log.warning(
                "Redis cache unavailable (%s: %s); serving from PostgreSQL until it answers again",
                type(exc).__name__,
                exc,
            )
        self._down = True
        self._down_until = time.monotonic() + 1.0

    async def probe(self) -> bool:
        """Checks Redis; after an outage settles what is owed, then resumes."""
        if self._client is None:
            return False
        async with self._probing:
            try:
                await self._client.ping()
                await self._settle_owed()
            except _FAILURES as exc:
                self._fail(exc)
                return False
            if self._down:
                log.warning("Redis cache available again")
            self._down = False
            return True

    async def _settle_owed(self) -> None:
        assert self._client is not None
        if self._flush_needed:
            await self._flush_namespace()
            self._flush_needed = False
        while self._owed:
            batch = [self._owed.pop() for _ in range(min(500, len(self._owed)))]
            try:
                await self._client.delete(*(k for t, s in batch for k in self.keys(t, s)))
            except BaseException:
                self._owed.update(batch)
                raise

    async def _flush_namespace(self) -> None:
        assert self._client is not None
        async for keys in _batched(self._client.scan_iter(match=f"{self._prefix}:*", count=1000)):
            await self._client.unlink(*keys)

    async def _warn_if_persistent(self) -> None:
        assert self._client is not None
        try:
            save = await self._client.config_get("save")
            aof = await self._client.config_get("appendonly")
        except redis.RedisError:
            return  # CONFIG may be disabled (managed Redis); nothing to check
        if save.get("save") or aof.get("appendonly") == "yes":
            log.info(
                "Redis persistence is on; the cache does not need it (entries written"
                " before a Redis restart are ignored)"
            )


def _decoded_bytes(entry: tuple[str, SessionRecord]) -> int:
    """Approximate memory of a remembered record: its text, and its decoded
    copy, about as large."""
    return 2 * len(entry[0]) + 512


async def _batched(keys: Any, size: int = 500) -> Any:
    batch: list[Any] = []
    async for key in keys:
        batch.append(key)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
