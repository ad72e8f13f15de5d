"""AdminService on a live server: served, healthy and reflected like every
service; audit records are per tenant and need credentials."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2

from statekeeper_client.v1 import admin_pb2, admin_pb2_grpc
from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import ServerProcess, auth
from tests.e2e.errors import bad_field, error_info
from tests.e2e.test_health_reflection import reflect

ADMIN = "statekeeper.v1.AdminService"


def test_admin_service_is_healthy_and_reflected(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        reply = health.Check(health_pb2.HealthCheckRequest(service=ADMIN))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        [listing] = reflect(channel, reflection_pb2.ServerReflectionRequest(list_services=""))
        assert ADMIN in {s.name for s in listing.list_services_response.service}


def test_audit_records_are_per_tenant(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        sessions = SessionServiceStub(channel)
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        sessions.CreateSession(
            pb.CreateSessionRequest(session_id="audited", session=pb.Session(user_id="u")),
            metadata=auth("key-beta"),
        )
        mine = admin.ListAuditRecords(
            admin_pb2.ListAuditRecordsRequest(entity_id="audited"), metadata=auth("key-beta")
        ).audit_records
        assert [(r.method, r.revision, r.summary) for r in mine] == [
            ("CreateSession", 1, "created")
        ]
        theirs = admin.ListAuditRecords(
            admin_pb2.ListAuditRecordsRequest(entity_id="audited"), metadata=auth("key-alpha")
        ).audit_records
        assert list(theirs) == []


def test_audit_listing_errors(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        with pytest.raises(grpc.RpcError) as anonymous:
            admin.ListAuditRecords(admin_pb2.ListAuditRecordsRequest())
        assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
        for request, field in [
            (admin_pb2.ListAuditRecordsRequest(page_size=-1), "page_size"),
            (admin_pb2.ListAuditRecordsRequest(page_token="garbage!"), "page_token"),
            (admin_pb2.ListAuditRecordsRequest(entity_id="has space"), "entity_id"),
        ]:
            with pytest.raises(grpc.RpcError) as failure:
                admin.ListAuditRecords(request, metadata=auth())
            assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert error_info(failure.value).reason == "INVALID_FIELD"
            assert bad_field(failure.value) == field
