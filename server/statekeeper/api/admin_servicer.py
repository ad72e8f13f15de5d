"""AdminService: the audit trail of the caller's tenant, erasing a user, and
bringing archived sessions back."""

from __future__ import annotations

import grpc

from statekeeper.api import audit_convert
from statekeeper.api.interceptor import current_actor, current_tenant
from statekeeper.core.archive.service import Archive
from statekeeper.core.audit.service import AuditLog
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.privacy.service import UserEraser
from statekeeper_client.v1 import admin_pb2 as pb
from statekeeper_client.v1 import admin_pb2_grpc


class AdminServicer(admin_pb2_grpc.AdminServiceServicer):
    def __init__(
        self, audit: AuditLog, eraser: UserEraser | None = None, archive: Archive | None = None
    ) -> None:
        self._audit = audit
        self._eraser = eraser
        self._archive = archive

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

    async def EraseUser(
        self, request: pb.EraseUserRequest, context: grpc.aio.ServicerContext
    ) -> pb.EraseUserResponse:
        if self._eraser is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "EraseUser is not wired here")
            raise AssertionError("abort raises")
        subject = ErasureSubject(
            user_id=request.user_id,
            blackboard_key_prefixes=tuple(request.blackboard_key_prefixes),
            agent_ids=tuple(request.agent_ids),
            item_namespaces=tuple(tuple(ns.labels) for ns in request.item_namespaces),
        )
        result = await self._eraser.erase(current_actor(), subject, request.dry_run)
        return pb.EraseUserResponse(
            counts=[
                pb.ErasedCount(capability=capability, kind=kind, count=count)
                for (capability, kind), count in sorted(result.counts.counts.items())
                if count
            ],
            dry_run=result.dry_run,
            user_hash=result.user_hash,
        )

    async def RestoreArchived(
        self, request: pb.RestoreArchivedRequest, context: grpc.aio.ServicerContext
    ) -> pb.RestoreArchivedResponse:
        tenant = current_tenant()
        if self._archive is None:
            return pb.RestoreArchivedResponse(restored_sessions=0)
        restored = await self._archive.restore_all(tenant, request.user_id)
        return pb.RestoreArchivedResponse(
            restored_sessions=restored.get("sessions", 0),
            restored=[
                pb.RestoredCount(capability=capability, count=count)
                for capability, count in sorted(restored.items())
            ],
        )
