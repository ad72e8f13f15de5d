"""Audit records: one per mutation, and the hash chain that makes them tamper-evident."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class AuditRecord:
    """One mutation. `audit_id` is assigned by the store (0 before)."""

    tenant: str
    principal: str
    service: str
    method: str
    entity_type: str
    entity_id: str
    revision: int
    time: float
    summary: str
    audit_id: int = 0

    def for_entity(self, tenant: str, entity_id: str, revision: int) -> AuditRecord:
        """This record, about another entity (used for batch deletes)."""
        return replace(self, tenant=tenant, entity_id=entity_id, revision=revision)


@dataclass(frozen=True)
class AuditFilter:
    """Filters of an audit listing; empty or zero means any."""

    entity_type: str = ""
    entity_id: str = ""
    principal: str = ""
    service: str = ""
    method: str = ""
    start_time: float = 0.0  # inclusive
    end_time: float = 0.0  # exclusive

    def key(self) -> list[object]:
        return [
            self.entity_type,
            self.entity_id,
            self.principal,
            self.service,
            self.method,
            self.start_time,
            self.end_time,
        ]


@dataclass(frozen=True)
class ChainLink:
    """One record as stored, with `recomputed`: the digest of its stored
    prev_hash and content, computed afresh by the store."""

    audit_id: int
    tenant: str
    chain_seq: int | None
    prev_hash: str | None
    hash: str | None
    recomputed: str
