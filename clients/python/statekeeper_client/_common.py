"""Pieces shared by the sync and the async client: retry policy, auth
metadata, the table of services, and request preparation."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from statekeeper_client.errors import error_info
from statekeeper_client.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    blackboard_pb2,
    blackboard_pb2_grpc,
    checkpoint_pb2,
    checkpoint_pb2_grpc,
    items_pb2,
    items_pb2_grpc,
    memory_pb2,
    memory_pb2_grpc,
    message_pb2,
    message_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)

Metadata = Sequence[tuple[str, str | bytes]]

#: Status codes the client retries. Only UNAVAILABLE: the server was not
#: reached or asked to be retried. Everything else (DEADLINE_EXCEEDED, ABORTED,
#: RESOURCE_EXHAUSTED, ...) is returned to the caller, who knows whether a
#: retry makes sense. Which methods are retried: see `retry_safety`.
RETRYABLE_CODES = frozenset({grpc.StatusCode.UNAVAILABLE})

#: ErrorInfo reasons with which the server says that the call changed
#: nothing and may be repeated as is (common.proto): retried for every method
#: whatever its code, like UNAVAILABLE for a safe method.
RETRYABLE_REASONS = frozenset({"CONCURRENT_MODIFICATION", "INDEX_LOADING"})

#: The idempotency key field (AIP-155) of a request.
IDEMPOTENCY_FIELD = "request_id"

#: How safe a method is to send again after UNAVAILABLE, when the first
#: attempt may have reached the server:
#: READ: it changes nothing (Get*, List*, Search*, Query*, Recall,
#: BuildContext, the health check);
#: KEYED: its request has a `request_id` (idempotency key), which the client
#: fills when empty, so a repeat returns the first call's outcome
#: (AppendMessages, SendMessage, RequestReply, SendReply);
#: IDEMPOTENT: the contract makes a repeat harmless (AckMessages: "twice is
#: harmless"; NackMessages and ExtendVisibility: the same handle again;
#: PullMessages: the deliveries of a lost answer come back after their
#: visibility timeout, as at-least-once delivery already allows);
#: UNSAFE: every other mutation. It is not retried once sent; instead it is
#: sent with wait_for_ready, so that a call made while the server is away
#: (restarting) waits for it, within the deadline, rather than failing.
READ, KEYED, IDEMPOTENT, UNSAFE = "read", "keyed", "idempotent", "unsafe"

_READ_PREFIXES = ("Get", "List", "Search", "Query")
_READ_METHODS = frozenset({"Recall", "BuildContext", "Check"})
_IDEMPOTENT_METHODS = frozenset(
    {"AckMessages", "NackMessages", "ExtendVisibility", "PullMessages", "EraseUser"}
)


def retry_safety(method: str, request: Message | None = None) -> str:
    """READ, KEYED, IDEMPOTENT or UNSAFE for `method` (its name, e.g.
    "PutEntry"); KEYED when `request`'s type has an idempotency key field."""
    if method in _READ_METHODS or method.startswith(_READ_PREFIXES):
        return READ
    if request is not None and IDEMPOTENCY_FIELD in request.DESCRIPTOR.fields_by_name:
        return KEYED
    if method in _IDEMPOTENT_METHODS:
        return IDEMPOTENT
    return UNSAFE


def retryable(error: grpc.RpcError, safety: str, codes: frozenset[grpc.StatusCode]) -> bool:
    """Whether a failed attempt of a method of `safety` may be sent again."""
    info = error_info(error)
    if info is not None and info.reason in RETRYABLE_REASONS:
        return True
    code = error.code() if callable(getattr(error, "code", None)) else None
    return code in codes and safety != UNSAFE


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff for UNAVAILABLE.

    Attempt n (n >= 1 counts the retries) waits
    min(max_backoff, initial_backoff * multiplier ** (n - 1)), spread by
    +/- `jitter` (a fraction). The whole call, retries and waits included,
    stays within the call's deadline.
    """

    max_attempts: int = 5
    initial_backoff: float = 0.1
    max_backoff: float = 5.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.multiplier < 1:
            raise ValueError("backoffs must be >= 0 and multiplier >= 1")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter must be in [0, 1)")

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        base = min(self.max_backoff, self.initial_backoff * self.multiplier ** (retry - 1))
        if self.jitter:
            base *= 1 + random.uniform(-self.jitter, self.jitter)
        return max(0.0, base)


#: A policy that never retries.
NO_RETRY = RetryPolicy(max_attempts=1)


def auth_metadata(api_key: str | None, bearer_token: str | None) -> tuple[tuple[str, str], ...]:
    """The metadata entries that carry the caller's credentials."""
    if api_key and bearer_token:
        raise ValueError("pass api_key or bearer_token, not both")
    if api_key:
        return (("x-api-key", api_key),)
    if bearer_token:
        return (("authorization", f"Bearer {bearer_token}"),)
    return ()


def merge_metadata(auth: Metadata, extra: Metadata | None) -> list[tuple[str, Any]]:
    """Auth entries first, then the caller's (which cannot remove them)."""
    merged: list[tuple[str, Any]] = list(auth)
    if extra:
        merged.extend(extra)
    return merged


def with_request_id(request: Message) -> Message:
    """A copy of `request` with its idempotency key filled with a random id,
    or `request` itself when it has no such field or it is already set."""
    if IDEMPOTENCY_FIELD not in request.DESCRIPTOR.fields_by_name:
        return request
    if getattr(request, IDEMPOTENCY_FIELD):
        return request
    copy = type(request)()
    copy.CopyFrom(request)
    setattr(copy, IDEMPOTENCY_FIELD, uuid.uuid4().hex)
    return copy


@dataclass(frozen=True)
class ServiceSpec:
    """One service: the client attribute it is reached by, its generated stub,
    and the methods that stream responses (taken from the descriptor)."""

    attribute: str
    descriptor: ServiceDescriptor
    stub: type

    @property
    def full_name(self) -> str:
        return str(self.descriptor.full_name)

    def is_streaming(self, method: str) -> bool:
        found = self.descriptor.methods_by_name.get(method)
        return bool(found is not None and found.server_streaming)


#: The statekeeper.v1 services, by client attribute.
SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec(
        "sessions",
        session_pb2.DESCRIPTOR.services_by_name["SessionService"],
        session_pb2_grpc.SessionServiceStub,
    ),
    ServiceSpec(
        "memory",
        memory_pb2.DESCRIPTOR.services_by_name["MemoryService"],
        memory_pb2_grpc.MemoryServiceStub,
    ),
    ServiceSpec(
        "checkpoints",
        checkpoint_pb2.DESCRIPTOR.services_by_name["CheckpointService"],
        checkpoint_pb2_grpc.CheckpointServiceStub,
    ),
    ServiceSpec(
        "blackboard",
        blackboard_pb2.DESCRIPTOR.services_by_name["BlackboardService"],
        blackboard_pb2_grpc.BlackboardServiceStub,
    ),
    ServiceSpec(
        "messages",
        message_pb2.DESCRIPTOR.services_by_name["MessageService"],
        message_pb2_grpc.MessageServiceStub,
    ),
    ServiceSpec(
        "items",
        items_pb2.DESCRIPTOR.services_by_name["ItemService"],
        items_pb2_grpc.ItemServiceStub,
    ),
    ServiceSpec(
        "admin",
        admin_pb2.DESCRIPTOR.services_by_name["AdminService"],
        admin_pb2_grpc.AdminServiceStub,
    ),
)
