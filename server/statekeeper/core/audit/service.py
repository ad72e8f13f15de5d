"""The audit trail: who changed what, when, to which revision.

Every mutation of durable state leaves one `AuditRecord`, written by the
store in the same transaction as the change, so that the trail and the data
can never disagree. The caller (`Actor`) reaches the domain as an argument:
the transport builds it from the authenticated principal and the RPC name,
and the domain never learns about gRPC.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from statekeeper.core import paging
from statekeeper.core.audit.models import AuditFilter, AuditRecord, ChainLink
from statekeeper.core.audit.store import AuditStore
from statekeeper.core.blackboard.models import EventType, RevisionBatch
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.core.limits import Limits
from statekeeper.core.tenancy import Principal
from statekeeper.core.validation import check_id, check_text, page_size

SYSTEM_SERVICE = "statekeeper.internal"


@dataclass(frozen=True)
class Actor:
    """Who makes a change and through which operation."""

    principal: Principal
    service: str
    method: str

    @property
    def tenant(self) -> str:
        return self.principal.tenant


def system_actor(method: str, tenant: str = "") -> Actor:
    """The server itself, e.g. the sweeper deleting expired state."""
    return Actor(Principal(tenant, "system"), SYSTEM_SERVICE, method)


def record_for(
    actor: Actor, entity_type: str, entity_id: str, revision: int, time: float, summary: str
) -> AuditRecord:
    return AuditRecord(
        tenant=actor.tenant,
        principal=actor.principal.key_id,
        service=actor.service,
        method=actor.method,
        entity_type=entity_type,
        entity_id=entity_id,
        revision=revision,
        time=time,
        summary=summary,
    )


BLACKBOARD_ENTITY = "blackboard"
# Keys named in one blackboard record's summary; a transaction may touch
# many, and the history (by revision) has them all.
SUMMARY_KEYS = 8
_EVENT_VERBS = {EventType.PUT: "put", EventType.DELETE: "deleted", EventType.EXPIRE: "expired"}


def blackboard_record(template: AuditRecord | None, batch: RevisionBatch) -> AuditRecord | None:
    """The one record of a committed blackboard revision: the board is the
    entity and the tenant's blackboard revision the record's revision, so a
    record leads to its events in the history. The caller's `template`
    (None: not audited, e.g. store tests) names who; a revision of expiry
    events is the server's own, always recorded."""
    expired = all(event.type == EventType.EXPIRE for event in batch.events)
    if expired:
        template = record_for(
            system_actor("ExpireEntries", batch.tenant), BLACKBOARD_ENTITY, "", 0, 0.0, ""
        )
    if template is None:
        return None
    named = [f"{_EVENT_VERBS[e.type]} {e.key}" for e in batch.events[:SUMMARY_KEYS]]
    if len(batch.events) > SUMMARY_KEYS:
        named.append(f"and {len(batch.events) - SUMMARY_KEYS} more")
    return replace(
        template,
        tenant=batch.tenant,
        entity_type=BLACKBOARD_ENTITY,
        entity_id=batch.board,
        revision=batch.revision,
        time=batch.commit_time,
        summary="; ".join(named),
    )


class ArchivedRecords(Protocol):
    """Audit records moved to the archive tier, read through
    (core/archive/audit.py: ArchivedAudit)."""

    async def merge_page(
        self,
        tenant: str | None,
        audit_filter: AuditFilter,
        before_id: int,
        limit: int,
        hot: list[AuditRecord],
    ) -> list[AuditRecord]:
        """The first `limit` records (audit_id descending, below `before_id`
        when > 0) of `hot` and the archived records of the filter."""


class AuditLog:
    """Reads the audit trail, newest first, a page at a time (AIP-158).
    Archived days are read through and merged in the same order, with the
    same page tokens (the audit_id each record keeps in the archive)."""

    def __init__(
        self, store: AuditStore, limits: Limits, archived: ArchivedRecords | None = None
    ) -> None:
        self._store = store
        self._limits = limits
        self.archived = archived

    async def list_records(
        self,
        tenant: str | None,
        audit_filter: AuditFilter,
        requested_page_size: int,
        page_token: str,
    ) -> tuple[list[AuditRecord], str]:
        """`tenant` None lists every tenant: for operator tools only."""
        self._check(audit_filter)
        size = page_size("page_size", requested_page_size, self._limits)
        filters = [tenant, *audit_filter.key()]
        before = paging.decode(page_token, "audit", filters)
        if before is not None and not isinstance(before, int):
            raise InvalidArgumentError("page_token", "is malformed")
        # Hot first: a day the archiver moves out meanwhile is then found in
        # the archive (its manifest is written before its rows are deleted).
        records = await self._store.list_audit(tenant, audit_filter, before or 0, size + 1)
        if self.archived is not None:
            records = await self.archived.merge_page(
                tenant, audit_filter, before or 0, size + 1, records
            )
        next_token = ""
        if len(records) > size:
            records = records[:size]
            next_token = paging.encode("audit", filters, records[-1].audit_id)
        return records, next_token

    def _check(self, audit_filter: AuditFilter) -> None:
        check_id("entity_id", audit_filter.entity_id, self._limits, required=False)
        for name in ("entity_type", "principal", "service", "method"):
            check_text(name, getattr(audit_filter, name), self._limits.max_metadata_key_bytes)
        if audit_filter.start_time < 0 or audit_filter.end_time < 0:
            raise InvalidArgumentError("start_time", "must not be before 1970")
        if audit_filter.end_time and audit_filter.start_time >= audit_filter.end_time:
            raise InvalidArgumentError("end_time", "must be after start_time")


# ----- tamper evidence ------------------------------------------------------------
#
# Each tenant's records form a hash chain, kept by the store in the
# transaction that writes them: record n stores its place in the chain
# (`chain_seq`), the hash of record n-1 of its tenant (`prev_hash`, "" for the
# first) and its own `hash`, a digest of prev_hash and its content. The head
# (last seq and hash per tenant) is kept apart, so that dropping the newest
# records shows too. Rewriting a record and every later one of its tenant
# consistently is not detected: anchor the head elsewhere for that.


@dataclass(frozen=True)
class ChainBreak:
    audit_id: int
    tenant: str
    reason: str


@dataclass(frozen=True)
class ChainReport:
    records: int
    tenants: int
    unchained: int  # written before the store kept a chain (older schema)
    broken: ChainBreak | None


def verify_chain(links: list[ChainLink], heads: dict[str, tuple[int, str]]) -> ChainReport:
    """Checks the chains; `links` come by tenant, then chain_seq (unchained
    records first), and `heads` are the stored (seq, hash) per tenant.
    Reports the first broken record."""
    by_tenant: dict[str, list[ChainLink]] = {}
    for link in links:
        by_tenant.setdefault(link.tenant, []).append(link)
    unchained = sum(1 for link in links if link.chain_seq is None)
    for tenant, chain in by_tenant.items():
        broken = _verify_tenant(tenant, chain, heads.get(tenant))
        if broken is not None:
            return ChainReport(len(links), len(by_tenant), unchained, broken)
    return ChainReport(len(links), len(by_tenant), unchained, None)


def _verify_tenant(
    tenant: str, chain: list[ChainLink], head: tuple[int, str] | None
) -> ChainBreak | None:
    seq, previous = 0, ""
    for link in chain:
        if link.chain_seq is None:
            # Older than the chain; a record taken out of it later leaves a
            # gap in the sequence, reported below.
            continue
        if link.chain_seq != seq + 1:
            return ChainBreak(link.audit_id, tenant, f"record {seq + 1} of the chain is missing")
        if link.prev_hash != previous:
            return ChainBreak(link.audit_id, tenant, "does not follow the record before it")
        if link.hash != link.recomputed:
            return ChainBreak(link.audit_id, tenant, "content does not match its hash")
        seq, previous = link.chain_seq, link.hash
    if seq and head != (seq, previous):
        last = chain[-1].audit_id
        return ChainBreak(last, tenant, "newer records of the chain are missing")
    return None
