"""Reading AIP-193 error details from a failed call."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, f"error carries no rich status: {error}"
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    raise AssertionError("no ErrorInfo in status details")


def bad_field(error: grpc.RpcError) -> str:
    """The field named by a BadRequest detail (INVALID_ARGUMENT) or by
    ErrorInfo.metadata["field"] (RESOURCE_EXHAUSTED)."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            request = error_details_pb2.BadRequest()
            detail.Unpack(request)
            return request.field_violations[0].field
    return error_info(error).metadata["field"]
