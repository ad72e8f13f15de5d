"""Errors raised by the client layer.

Every failed call made through `Client` or `AsyncClient` raises a
`StatekeeperRpcError`, which is a `grpc.RpcError` (so `except grpc.RpcError`
keeps working) that also exposes the AIP-193 `google.rpc.ErrorInfo` the server
attaches: `reason` (e.g. "ETAG_MISMATCH", "NOT_FOUND"), `reason_code` (the
generated `common_pb2.ErrorReason` value) and `error_metadata` (e.g.
{"field": "session_id"}).

An error that carries a reason is raised as the subclass of that reason, one
per value of the proto's `ErrorReason` enum, named in CamelCase with an
`Error` suffix and built from the generated enum when this module is
imported (so a reason added to the proto gets its class with no edit here):

    from statekeeper_client import errors

    try:
        sk.blackboard.PutEntry(request)
    except errors.RevisionMismatchError as error:    # reason REVISION_MISMATCH
        current = error.error_metadata["current_revision"]
    except errors.EtagMismatchError:                  # reason ETAG_MISMATCH
        ...

or switch on the reason:

    match error.reason_code:
        case common_pb2.ERROR_REASON_ETAG_MISMATCH: ...

`errors.error_class("ETAG_MISMATCH")` is `errors.EtagMismatchError`;
`errors.REASON_CLASSES` maps every reason to its class. A reason this client
does not know (a newer server) is a plain `StatekeeperRpcError` whose
`reason` is still set (and `reason_code` is ERROR_REASON_UNSPECIFIED).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from statekeeper_client.v1 import common_pb2

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
        #: The reason as the generated enum (ERROR_REASON_UNSPECIFIED when
        #: there is none or this client does not know it).
        self.reason_code: int = _REASON_CODES.get(self.reason, common_pb2.ERROR_REASON_UNSPECIFIED)
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


_PREFIX = "ERROR_REASON_"

#: Wire reason (e.g. "ETAG_MISMATCH") -> generated enum value.
_REASON_CODES: dict[str, int] = {
    name.removeprefix(_PREFIX): value
    for name, value in common_pb2.ErrorReason.items()
    if value != common_pb2.ERROR_REASON_UNSPECIFIED
}


def class_name(reason: str) -> str:
    """The exception class name of a wire reason: "ETAG_MISMATCH" ->
    "EtagMismatchError"."""
    return "".join(part.capitalize() for part in reason.split("_")) + "Error"


def _reason_class(reason: str, value: int) -> type[StatekeeperRpcError]:
    doc = (
        f"The server's ErrorInfo reason is {reason} "
        f"(statekeeper.v1.ErrorReason {_PREFIX}{reason} = {value})."
    )
    cls = type(class_name(reason), (StatekeeperRpcError,), {"__doc__": doc, "REASON": reason})
    cls.__module__ = __name__
    return cls


#: Every reason of the proto's ErrorReason enum -> its exception class.
REASON_CLASSES: dict[str, type[StatekeeperRpcError]] = {
    reason: _reason_class(reason, value) for reason, value in _REASON_CODES.items()
}
globals().update({cls.__name__: cls for cls in REASON_CLASSES.values()})


def error_class(reason: str) -> type[StatekeeperRpcError]:
    """The exception class of a wire reason (StatekeeperRpcError if unknown)."""
    return REASON_CLASSES.get(reason, StatekeeperRpcError)


if TYPE_CHECKING:
    # The reason classes are made at import time from the generated enum; to
    # a type checker each one is a StatekeeperRpcError class.
    def __getattr__(name: str) -> type[StatekeeperRpcError]: ...


def wrap(error: grpc.RpcError, method: str = "") -> StatekeeperRpcError:
    """The client-layer error for a raw grpc error (idempotent): the class of
    its ErrorInfo reason, ServiceNotImplementedError for UNIMPLEMENTED, else
    StatekeeperRpcError."""
    if isinstance(error, StatekeeperRpcError):
        return error
    code = error.code() if callable(getattr(error, "code", None)) else None
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return ServiceNotImplementedError(error, method=method)
    info = error_info(error)
    cls = error_class(info.reason) if info is not None else StatekeeperRpcError
    return cls(error, method=method)
