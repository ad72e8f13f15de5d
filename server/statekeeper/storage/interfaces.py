"""Storage contracts.

Every backend (embedded SQLite, PostgreSQL + Redis) implements these
interfaces, and one contract test suite (tests/contract) runs against each.
The rules below are MUST rules: the domain relies on them and on nothing else.

General rules for every method:

* Every record belongs to exactly one tenant. A method MUST only read or
  change records of the tenant it is given; ids are unique per tenant only.
* A method that returns normally has made its change durable: after a crash
  of the server process, a reader MUST see it.
* Methods raise `StorageUnavailableError` when the backing store cannot be
  reached, and never leave a partial change behind. If the answer of a
  commit was lost, the change may or may not be stored; callers make such
  retries safe with idempotency keys (append receipts) or etags.
* Audit: a method that changes state and is given an `AuditRecord` MUST
  store it (with the tenant of the change and a fresh `audit_id`) in the
  same transaction as the change: both are stored or neither is. A change
  that fails (not found, version conflict, duplicate) stores no record.
* A backend with a cache (production: Redis in front of PostgreSQL) MUST
  behave exactly like one without: no method may return state older than
  what an earlier, returned mutation stored, from any process sharing the
  backend. How the production backend keeps this promise is explained in
  storage/production.py.
"""

from __future__ import annotations

import abc

from statekeeper.core.audit.store import AuditStore
from statekeeper.core.sessions.store import SessionStore


class Storage(abc.ABC):
    """One backend: the set of stores plus its lifecycle."""

    sessions: SessionStore
    audit: AuditStore

    @abc.abstractmethod
    async def start(self) -> None:
        """Opens connections and prepares the schema. Idempotent."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Releases every connection; later calls are not allowed."""

    @abc.abstractmethod
    async def healthy(self) -> bool:
        """True if the durable tier answers now.

        Called periodically by the server's health monitor; a backend may use
        the call to probe and recover its other tiers (a cache) as well.
        """

    @property
    @abc.abstractmethod
    def description(self) -> str:
        """Human-readable description for the startup log (no secrets)."""
