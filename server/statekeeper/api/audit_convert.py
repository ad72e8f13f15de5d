"""proto <-> domain conversions for the audit trail."""

from __future__ import annotations

from statekeeper.api.convert import timestamp
from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper_client.v1 import admin_pb2 as pb


def audit_filter(request: pb.ListAuditRecordsRequest) -> AuditFilter:
    """The filters of a listing; unset timestamps mean no bound."""
    return AuditFilter(
        entity_type=request.entity_type,
        entity_id=request.entity_id,
        principal=request.principal,
        service=request.service,
        method=request.method,
        start_time=_seconds(request, "start_time"),
        end_time=_seconds(request, "end_time"),
    )


def _seconds(request: pb.ListAuditRecordsRequest, field: str) -> float:
    if not request.HasField(field):
        return 0.0
    return float(getattr(request, field).ToNanoseconds()) / 1e9


def audit_to_proto(record: AuditRecord) -> pb.AuditRecord:
    return pb.AuditRecord(
        audit_id=record.audit_id,
        principal=record.principal,
        service=record.service,
        method=record.method,
        entity_type=record.entity_type,
        entity_id=record.entity_id,
        revision=record.revision,
        create_time=timestamp(record.time),
        summary=record.summary,
    )
