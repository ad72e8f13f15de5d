"""Production backend: PostgreSQL (durable tier) behind Redis (hot tier).

What each tier holds:

* PostgreSQL holds everything durable: sessions, messages, versions, append
  receipts, the audit trail. A write is acknowledged only after its
  PostgreSQL transaction has committed.
* Redis holds copies of session records (the hot read of every RPC), with a
  TTL refreshed on each read. It is never the only copy of anything: losing
  it (FLUSHALL, restart, outage) loses no data, and reads fall back to
  PostgreSQL and backfill the cache.

No stale reads across replicas. After any replica acknowledges a write of
version v, no replica returns an older version of that session from the
cache. The protocol (the scripts are in storage/redis/cache.py):

1. Before its transaction, a writer deletes the cached entry and takes a
   write lease (BEGIN_WRITE). A writer that reads the record it is about to
   change (AppendMessages, through `read_for_change`) does both in the same
   atomic step as its read (READ_FOR_WRITE), saving a round trip; on a miss
   it reads PostgreSQL and backfills nothing (its own FINISH_WRITE stores
   the new record).
2. After the commit, and before acknowledging, it runs FINISH_WRITE, which
   atomically deletes whatever lease exists, then stores the new record if
   its own lease survived (nobody else touched the key), or else updates an
   existing entry of the same session incarnation only if the entry's
   version is older. Entries of another incarnation are deleted.
3. A reader that misses takes a read lease in the same atomic step, reads
   PostgreSQL, and backfills only if its lease is still there.

Why that suffices: once FINISH_WRITE of version v has run, the entry is
absent or holds version >= v. Later, an entry can only be (re)created under a
lease taken after that moment (FINISH_WRITE deleted every earlier one), and
whoever holds such a lease reads PostgreSQL after the commit of v, so it
stores v or newer; updates in place only ever raise the version. FLUSHALL or
a restart deletes entries and leases together, which keeps the argument
intact, and entries or leases restored from a persistence file are ignored
(they carry the run_id of the Redis process that wrote them).

Failure handling:

* The post-commit step runs shielded from cancellation, so a client that
  hangs up cannot leave a committed write uncached-but-stale.
* A failed or conflicting write invalidates the entry (it may be stale).
* When a retried append finds its receipt (the first attempt committed but
  its answer was lost, e.g. the replica was killed between commit and
  FINISH_WRITE), the entry is invalidated before the replay is answered.
* If Redis cannot be reached, reads use PostgreSQL alone; writes still try
  Redis on every call (a replica must never skip invalidating while Redis is
  back for the others), and the keys whose cache step failed are remembered.
  Reads use the cache again only after those keys have been invalidated.
  A Redis that restarts comes back empty, or with entries from its previous
  run_id that are ignored, so nothing stale survives a restart.
* The one case this cannot cover is a replica that cannot reach Redis while
  other replicas can (a network partition between one replica and Redis):
  the others may read the previous version of a session that replica wrote
  meanwhile, until it reaches Redis again and settles what it owes (within
  a second).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import StatekeeperError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.sessions.models import (
    AppendReceipt,
    Message,
    MessageMeta,
    SessionChange,
    SessionCursor,
    SessionFilter,
    SessionRecord,
    SessionVersion,
)
from statekeeper.core.sessions.store import SessionStore
from statekeeper.storage.codec import record_to_json
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.sessions import PostgresSessionStore, PostgresStorage
from statekeeper.storage.redis.cache import SessionCache


@dataclass(frozen=True)
class _WriteLease:
    """The write lease READ_FOR_WRITE took with the record (a change ticket)."""

    token: str


class CachedSessionStore(SessionStore):
    """PostgreSQL session store with the Redis cache in front of its record
    reads (see the module docstring for the protocol)."""

    def __init__(self, durable: PostgresSessionStore, cache: SessionCache) -> None:
        self._durable = durable
        self._cache = cache

    async def create_session(
        self, tenant: str, version: SessionVersion, audit: AuditRecord | None = None
    ) -> None:
        # Nothing to do in the cache: the first read backfills the entry.
        await self._durable.create_session(tenant, version, audit)

    async def get_session(self, tenant: str, session_id: str) -> SessionRecord | None:
        cached, token = await self._cache.read(tenant, session_id)
        if cached is not None:
            return cached
        record = await self._durable.get_session(tenant, session_id)
        if record is not None and token:
            await self._cache.backfill(tenant, session_id, token, record)
        return record

    async def read_for_change(
        self, tenant: str, session_id: str
    ) -> tuple[SessionRecord | None, object | None]:
        cached, token = await self._cache.read_for_write(tenant, session_id)
        record = cached or await self._durable.get_session(tenant, session_id)
        return record, _WriteLease(token) if token else None

    async def list_sessions(
        self,
        tenant: str,
        session_filter: SessionFilter,
        now: float,
        after: SessionCursor | None,
        limit: int,
    ) -> list[SessionRecord]:
        return await self._durable.list_sessions(tenant, session_filter, now, after, limit)

    async def apply_change(self, tenant: str, change: SessionChange) -> None:
        await asyncio.shield(self._write(tenant, change))

    async def _write(self, tenant: str, change: SessionChange) -> None:
        session_id = change.record.session_id
        lease = change.ticket
        if isinstance(lease, _WriteLease):
            token = lease.token  # taken when the record was read
        else:
            token = await self._cache.begin_write(tenant, session_id)
        # Encoded once, for PostgreSQL and for the cache.
        state = record_to_json(change.record)
        try:
            await self._durable.apply_change(tenant, change, state)
        except (StatekeeperError, OSError):
            await self._cache.invalidate(tenant, session_id)
            raise
        await self._cache.finish_write(tenant, session_id, token, change.record, state)

    async def delete_session(
        self,
        tenant: str,
        session_id: str,
        expected_version: int,
        audit: AuditRecord | None = None,
    ) -> None:
        await asyncio.shield(self._delete(tenant, session_id, expected_version, audit))

    async def _delete(
        self, tenant: str, session_id: str, expected_version: int, audit: AuditRecord | None
    ) -> None:
        await self._cache.begin_write(tenant, session_id)
        try:
            await self._durable.delete_session(tenant, session_id, expected_version, audit)
        finally:
            await self._cache.invalidate(tenant, session_id)

    async def list_messages(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        limit: int,
        include_rolled_back: bool,
    ) -> list[Message]:
        return await self._durable.list_messages(
            tenant, session_id, after_sequence, limit, include_rolled_back
        )

    async def get_messages(
        self, tenant: str, session_id: str, sequences: Sequence[int]
    ) -> list[Message]:
        return await self._durable.get_messages(tenant, session_id, sequences)

    async def list_window_tail(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        max_tokens: int,
        max_messages: int,
    ) -> list[MessageMeta]:
        return await self._durable.list_window_tail(
            tenant, session_id, after_sequence, max_tokens, max_messages
        )

    async def list_window_messages(
        self, tenant: str, session_id: str, after_sequence: int, max_tokens: int
    ) -> list[Message]:
        return await self._durable.list_window_messages(
            tenant, session_id, after_sequence, max_tokens
        )

    async def list_recent_messages(
        self, tenant: str, session_id: str, after_sequence: int, before_sequence: int, limit: int
    ) -> list[Message]:
        return await self._durable.list_recent_messages(
            tenant, session_id, after_sequence, before_sequence, limit
        )

    async def get_append_receipt(self, tenant: str, request_id: str) -> AppendReceipt | None:
        receipt = await self._durable.get_append_receipt(tenant, request_id)
        if receipt is not None:
            # A retry: its first attempt may have committed without updating
            # the cache (lost answer, killed replica). Start from PostgreSQL.
            await self._cache.invalidate(tenant, receipt.session_id)
        return receipt

    async def list_versions(
        self, tenant: str, session_id: str, before_version: int, limit: int
    ) -> list[SessionVersion]:
        return await self._durable.list_versions(tenant, session_id, before_version, limit)

    async def get_version(
        self, tenant: str, session_id: str, version: int
    ) -> SessionVersion | None:
        return await self._durable.get_version(tenant, session_id, version)

    async def delete_expired_sessions(
        self, now: float, limit: int, audit: AuditRecord | None = None
    ) -> int:
        deleted = await asyncio.shield(self._durable.delete_expired(now, limit, audit))
        for tenant, session_id in deleted:
            await self._cache.invalidate(tenant, session_id)
        return len(deleted)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        async def invalidate(session_ids: list[str]) -> None:
            for session_id in session_ids:
                await self._cache.invalidate(tenant, session_id)

        counts, _ = await asyncio.shield(
            self._durable.erase_sessions(tenant, subject, dry_run, invalidate)
        )
        return counts


class ProductionStorage(Storage):
    """PostgreSQL for durability, Redis (optional) as the shared hot tier."""

    def __init__(self, durable: PostgresStorage, cache: SessionCache | None) -> None:
        self.durable = durable
        self.cache = cache
        self.sessions: SessionStore = (
            CachedSessionStore(durable.sessions, cache) if cache else durable.sessions
        )
        self.audit = durable.audit
        self._was_healthy = True

    @property
    def description(self) -> str:
        cache = self.cache.description if self.cache else "no cache (Redis not configured)"
        return f"production store: {self.durable.description}; {cache}"

    async def start(self) -> None:
        await self.durable.start()
        if self.cache is not None:
            await self.cache.start()

    async def close(self) -> None:
        if self.cache is not None:
            await self.cache.close()
        await self.durable.close()

    async def healthy(self) -> bool:
        if self.cache is not None:
            await self.cache.probe()
        healthy = await self.durable.healthy()
        if healthy and not self._was_healthy:
            await self.durable.reconnect()
        self._was_healthy = healthy
        return healthy
