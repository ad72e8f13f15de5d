"""The audit store contract: reading the audit trail and its hash chain.

Records are written by the mutating stores in the same transaction as their
change (the general rules are in statekeeper/storage/interfaces.py).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

from statekeeper.core.audit.models import AuditFilter, AuditRecord

if TYPE_CHECKING:
    from statekeeper.core.audit.models import ChainLink


class AuditStore(abc.ABC):
    """Reads the audit trail; records are written by the mutating stores."""

    @abc.abstractmethod
    async def list_audit(
        self, tenant: str | None, audit_filter: AuditFilter, before_id: int, limit: int
    ) -> list[AuditRecord]:
        """Returns up to `limit` records matching the filter, newest first
        (`audit_id` descending), with `audit_id < before_id` when
        `before_id > 0`.

        `audit_id` is unique per backend and increases with commit order
        within one session's changes. `tenant` None means every tenant
        (operator tools only; no RPC passes None). Filters are equality
        filters, except `start_time` (inclusive) and `end_time` (exclusive).
        """

    @abc.abstractmethod
    async def audit_chain(
        self, tenant: str | None
    ) -> tuple[list[ChainLink], dict[str, tuple[int, str]]]:
        """Every record of `tenant` (None: every tenant) as a link of its
        tenant's hash chain, by tenant then chain_seq (records older than
        the chain first), each with its digest recomputed by the store; and
        the stored chain heads, (seq, hash) by tenant. One snapshot.
        Operator tools only (`statekeeper audit verify`)."""

    @abc.abstractmethod
    async def record_audit(self, record: AuditRecord) -> None:
        """Appends one record of `record.tenant` (to its hash chain) in a
        transaction of its own: for operations that span many transactions
        and are recorded once they complete (EraseUser)."""
