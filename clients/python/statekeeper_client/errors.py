"""Errors raised by the client layer.

Every failed call made through `Client` or `AsyncClient` raises a
`StatekeeperRpcError`, which is a `grpc.RpcError` (so `except grpc.RpcError`
keeps working) that also exposes the AIP-193 `google.rpc.ErrorInfo` the server
attaches: `reason` (e.g. "ETAG_MISMATCH", "NOT_FOUND") and
`error_metadata` (e.g. {"field": "session_id"}).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

#: The `domain` of every ErrorInfo the statekeeper server sends.
ERROR_DOMAIN = "statekeeper.dev"

_STATUS_DETAILS_KEY = "grpc-status-details-bin"


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The `google.rpc.ErrorInfo` carried by a failed call, or None."""
    trailers: Sequence[Any] = ()
    trailing = getattr(error, "trailing_metadata", None)
    if callable(trailing):
        try:
            trailers = trailing() or ()
        except Exception:  # a call object that never started has no trailers
            trailers = ()
    for key, value in trailers:
        if key != _STATUS_DETAILS_KEY:
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                return info
    return None


class StatekeeperRpcError(grpc.RpcError):  # type: ignore[misc]
    """A failed RPC, with the server's ErrorInfo reason and metadata."""

    def __init__(self, cause: grpc.RpcError, *, method: str = "") -> None:
        self._cause = cause
        self.method = method
        code = cause.code() if callable(getattr(cause, "code", None)) else None
        self._code: grpc.StatusCode = code or grpc.StatusCode.UNKNOWN
        details = cause.details() if callable(getattr(cause, "details", None)) else None
        self._details: str = details or ""
        info = error_info(cause)
        self.reason: str = info.reason if info is not None else ""
        self.domain: str = info.domain if info is not None else ""
        self.error_metadata: Mapping[str, str] = dict(info.metadata) if info is not None else {}
        super().__init__(str(self))

    def code(self) -> grpc.StatusCode:
        """The canonical status code."""
        return self._code

    def details(self) -> str:
        """The status message."""
        return self._details

    def trailing_metadata(self) -> Any:
        """The trailers of the failed call."""
        trailing = getattr(self._cause, "trailing_metadata", None)
        return trailing() if callable(trailing) else ()

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        reason = f" [{self.reason}]" if self.reason else ""
        return f"{where}{self._code.name}{reason}: {self._details}"


class ServiceNotImplementedError(StatekeeperRpcError):
    """The server answered UNIMPLEMENTED: it does not serve the method (for
    example an older server than the contract this client was built from).
    `capability` is the ErrorInfo metadata["capability"] when a server names
    one, else the status details."""

    @property
    def capability(self) -> str:
        return self.error_metadata.get("capability", "") or self.details()


def wrap(error: grpc.RpcError, method: str = "") -> StatekeeperRpcError:
    """The client-layer error for a raw grpc error (idempotent)."""
    if isinstance(error, StatekeeperRpcError):
        return error
    code = error.code() if callable(getattr(error, "code", None)) else None
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return ServiceNotImplementedError(error, method=method)
    return StatekeeperRpcError(error, method=method)
