"""Domain errors.

The domain raises these; the transport maps each to a canonical status code
and a `google.rpc.ErrorInfo` with the stable `reason` below. The domain never
imports gRPC, so the code is named by its canonical string.
"""

from __future__ import annotations


class StatekeeperError(Exception):
    """Base of every error a caller is meant to see."""

    code = "INTERNAL"
    reason = "INTERNAL"

    def __init__(self, message: str, **metadata: str) -> None:
        super().__init__(message)
        self.message = message
        self.metadata: dict[str, str] = {k: str(v) for k, v in metadata.items()}


class InvalidArgumentError(StatekeeperError):
    """A request field is missing or malformed; `field` names it."""

    code = "INVALID_ARGUMENT"
    reason = "INVALID_FIELD"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", field=field)
        self.field = field


class LimitExceededError(StatekeeperError):
    """A request field is over a configured limit."""

    code = "RESOURCE_EXHAUSTED"
    reason = "LIMIT_EXCEEDED"

    def __init__(self, field: str, limit: int, message: str) -> None:
        super().__init__(f"{field}: {message} (limit {limit})", field=field, limit=str(limit))
        self.field = field


class NotFoundError(StatekeeperError):
    """The addressed record does not exist in the caller's tenant."""

    code = "NOT_FOUND"
    reason = "NOT_FOUND"


class SessionExpiredError(NotFoundError):
    """The session existed but its TTL has passed."""

    reason = "SESSION_EXPIRED"


class AlreadyExistsError(StatekeeperError):
    """A record with the requested id exists already."""

    code = "ALREADY_EXISTS"
    reason = "ALREADY_EXISTS"


class EtagMismatchError(StatekeeperError):
    """The caller's expected etag is stale."""

    code = "ABORTED"
    reason = "ETAG_MISMATCH"


class ConcurrentModificationError(StatekeeperError):
    """Storage-level compare-and-swap failed: another writer got there first.

    The domain retries unconditional writes on this error; a caller only sees
    it (as ABORTED) when retries run out.
    """

    code = "ABORTED"
    reason = "CONCURRENT_MODIFICATION"


class ErasureIncompleteError(StatekeeperError):
    """EraseUser found new records of the user in every pass: the user is
    still being written. What was found is erased; once the user's writers
    stop, the call finishes the job."""

    code = "ABORTED"
    reason = "ERASURE_INCOMPLETE"


class FailedPreconditionError(StatekeeperError):
    """The operation is not allowed in the record's current state."""

    code = "FAILED_PRECONDITION"
    reason = "FAILED_PRECONDITION"


class UnauthenticatedError(StatekeeperError):
    """No credentials, or credentials that map to no tenant."""

    code = "UNAUTHENTICATED"
    reason = "UNAUTHENTICATED"


class StorageUnavailableError(StatekeeperError):
    """A backing store cannot be reached; the caller may retry."""

    code = "UNAVAILABLE"
    reason = "STORAGE_UNAVAILABLE"
