"""AdminService: the audit trail of the caller's tenant."""

from __future__ import annotations

import grpc

from statekeeper.api import audit_convert
from statekeeper.api.interceptor import current_tenant
from statekeeper.core.audit.service import AuditLog
from statekeeper_client.v1 import admin_pb2 as pb
from statekeeper_client.v1 import admin_pb2_grpc


class AdminServicer(admin_pb2_grpc.AdminServiceServicer):
    def __init__(self, audit: AuditLog) -> None:
        self._audit = audit

    async def ListAuditRecords(
        self, request: pb.ListAuditRecordsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListAuditRecordsResponse:
        records, next_token = await self._audit.list_records(
            current_tenant(),
            audit_convert.audit_filter(request),
            request.page_size,
            request.page_token,
        )
        return pb.ListAuditRecordsResponse(
            audit_records=[audit_convert.audit_to_proto(r) for r in records],
            next_page_token=next_token,
        )
