"""statekeeper client for Python.

    from statekeeper_client import Client
    from statekeeper_client.v1 import session_pb2

    with Client("127.0.0.1:50051", api_key="sk-dev") as sk:
        created = sk.sessions.CreateSession(
            session_pb2.CreateSessionRequest(session=session_pb2.Session(user_id="u1"))
        )

`Client` (sync) and `statekeeper_client.aio.AsyncClient` add the API key to
every call, give each unary call a deadline (DEFAULT_TIMEOUT), retry
UNAVAILABLE with exponential backoff where that is safe (reads, and
mutations with an idempotency key, which they set), connect over TLS or mTLS
when given `tls=TlsOptions(...)`, raise one exception class per ErrorInfo
reason (`statekeeper_client.errors`), and offer a blackboard `watch()` that
resumes from the last revision seen and an `inbox()` consumer (ack/nack,
visibility extension, redelivery backoff). The generated stubs live in
`statekeeper_client.v1`.
"""

from statekeeper_client._common import NO_RETRY, RETRYABLE_CODES, RetryPolicy
from statekeeper_client.aio import AsyncClient
from statekeeper_client.client import DEFAULT_TIMEOUT, Client
from statekeeper_client.errors import (
    REASON_CLASSES,
    ServiceNotImplementedError,
    StatekeeperRpcError,
    error_class,
    error_info,
)
from statekeeper_client.inbox import AsyncInboxConsumer, InboxConsumer, InboxStats, Nack
from statekeeper_client.tls import TlsOptions
from statekeeper_client.watch import AsyncWatch, Watch, WatchResync

__all__ = [
    "DEFAULT_TIMEOUT",
    "NO_RETRY",
    "REASON_CLASSES",
    "RETRYABLE_CODES",
    "AsyncClient",
    "AsyncInboxConsumer",
    "AsyncWatch",
    "Client",
    "InboxConsumer",
    "InboxStats",
    "Nack",
    "RetryPolicy",
    "ServiceNotImplementedError",
    "StatekeeperRpcError",
    "TlsOptions",
    "Watch",
    "WatchResync",
    "error_class",
    "error_info",
]

__version__ = "1.0.0"
