"""Health, reflection and the UNIMPLEMENTED answers of services not built yet."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.e2e.conftest import ServerProcess, auth
from tests.e2e.errors import error_info

STATEKEEPER_SERVICES = {
    "statekeeper.v1.SessionService",
    "statekeeper.v1.MemoryService",
    "statekeeper.v1.CheckpointService",
    "statekeeper.v1.BlackboardService",
    "statekeeper.v1.MessageService",
}


def reflect(channel: grpc.Channel, request: reflection_pb2.ServerReflectionRequest) -> list:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    return list(stub.ServerReflectionInfo(iter([request])))


def test_health_serving_overall_and_per_service(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ["", *STATEKEEPER_SERVICES]:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, service


def test_reflection_lists_and_describes_all_services(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        [listing] = reflect(channel, reflection_pb2.ServerReflectionRequest(list_services=""))
        names = {s.name for s in listing.list_services_response.service}
        assert names >= STATEKEEPER_SERVICES | {"grpc.health.v1.Health"}
        [described] = reflect(
            channel,
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="statekeeper.v1.SessionService"
            ),
        )
        protos = described.file_descriptor_response.file_descriptor_proto
        files = [descriptor_pb2.FileDescriptorProto.FromString(raw) for raw in protos]
        session_file = next(f for f in files if f.name == "statekeeper/v1/session.proto")
        methods = {m.name for m in session_file.service[0].method}
        assert {"CreateSession", "GetContextWindow", "RollbackSession"} <= methods


@pytest.mark.parametrize(
    ("method", "field"),
    [
        ("/statekeeper.v1.MemoryService/Recall", "user_id"),
        ("/statekeeper.v1.CheckpointService/SaveCheckpoint", "checkpoint"),
        ("/statekeeper.v1.BlackboardService/PutEntry", "board"),
        ("/statekeeper.v1.MessageService/SendMessage", "to_agent"),
    ],
)
def test_every_service_is_served_and_validates(
    server: ServerProcess, method: str, field: str
) -> None:
    """On the embedded store every service is built: an empty request is
    rejected by validation (naming a field), not answered UNIMPLEMENTED."""
    with grpc.insecure_channel(server.address) as channel:
        call = channel.unary_unary(method)
        with pytest.raises(grpc.RpcError) as failure:
            call(b"", metadata=auth())
    assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT, failure.value.details()
    info = error_info(failure.value)
    assert info.reason == "INVALID_FIELD"
    assert info.metadata["field"].startswith(field)
