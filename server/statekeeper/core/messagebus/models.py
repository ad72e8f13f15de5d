"""Message bus records, errors and limits.

Times are POSIX seconds (float, UTC). A receipt handle names one delivery:
"<message id>.<nonce>"; each delivery of a message gets a new nonce, and
only the latest one is valid.
"""

from __future__ import annotations

import enum
import re
import secrets
import uuid
from dataclasses import dataclass, field

from statekeeper.core.errors import StatekeeperError

_HANDLE = re.compile(r"^([0-9a-f]{32})\.([0-9a-f]{16})$")


class ReplyTimeoutError(StatekeeperError):
    """A request-reply exchange got no reply before its deadline."""

    code = "DEADLINE_EXCEEDED"
    reason = "REPLY_TIMEOUT"

    def __init__(self, message_id: str, waited: float) -> None:
        super().__init__(f"no reply within {waited:.3f} seconds", message_id=message_id)
        self.message_id = message_id


@dataclass(frozen=True)
class MessageBusLimits:
    """Every limit and timing of the message bus (candidates for
    core/limits.py and the server settings)."""

    max_payload_bytes: int = 1024 * 1024
    max_type_bytes: int = 256
    max_correlation_bytes: int = 256
    max_idempotency_key_bytes: int = 256
    max_reason_bytes: int = 4096
    max_ttl_seconds: float = 14 * 24 * 3600.0
    default_ttl_seconds: float = 0.0  # 0: messages do not expire
    max_delay_seconds: float = 24 * 3600.0
    max_deliveries: int = 10
    max_inbox_messages: int = 100_000
    max_receivers_per_inbox: int = 100
    default_visibility_timeout_seconds: float = 30.0
    max_visibility_timeout_seconds: float = 12 * 3600.0
    default_max_in_flight: int = 10
    max_max_in_flight: int = 1000
    max_pull_messages: int = 100
    max_receipt_handles: int = 100
    dedup_window_seconds: float = 300.0
    default_reply_timeout_seconds: float = 30.0
    max_reply_timeout_seconds: float = 600.0
    acked_retention_seconds: float = 3600.0
    default_dead_letter_page_size: int = 50
    max_dead_letter_page_size: int = 1000
    # A stream re-checks its inbox at least this often, in case a wake-up
    # was lost (production notifications travel over the network).
    idle_poll_seconds: float = 1.0
    sweep_interval_seconds: float = 1.0
    sweep_batch: int = 1000


class MessageState(enum.IntEnum):
    READY = 0  # in the inbox: deliverable, or in flight until visible_time
    ACKED = 1  # acknowledged (or handed to a RequestReply waiter); kept a while
    DEAD = 2  # in the dead-letter list


class ReceiptStatus(enum.IntEnum):
    """Values equal the proto enum numbers."""

    OK = 1
    ALREADY_ACKED = 2
    EXPIRED = 3
    NOT_FOUND = 4
    DEAD_LETTERED = 5


class DeadLetterReason(enum.IntEnum):
    """Values equal the proto enum numbers."""

    MAX_DELIVERIES = 1
    REJECTED = 2


@dataclass(frozen=True)
class Payload:
    content_type: str = ""
    schema_version: int = 0
    data: bytes = b""


@dataclass(frozen=True)
class AgentMessage:
    message_id: str
    to_agent: str
    from_agent: str = ""
    type: str = ""
    payload: Payload = field(default_factory=Payload)
    reply_to: str = ""
    correlation_id: str = ""
    in_reply_to: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    idempotency_key: str = ""
    send_time: float = 0.0
    visible_time: float = 0.0
    expire_time: float | None = None
    max_deliveries: int = 0


@dataclass(frozen=True)
class Receipt:
    """A parsed receipt handle."""

    message_id: str
    nonce: str

    @property
    def handle(self) -> str:
        return f"{self.message_id}.{self.nonce}"

    @staticmethod
    def parse(handle: str) -> Receipt | None:
        match = _HANDLE.match(handle)
        return None if match is None else Receipt(match.group(1), match.group(2))

    @staticmethod
    def fresh(message_id: str) -> Receipt:
        return Receipt(message_id, secrets.token_hex(8))


def new_message_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Delivery:
    receipt: Receipt
    message: AgentMessage
    delivery_count: int
    visibility_deadline: float


@dataclass(frozen=True)
class ReceiptOutcome:
    """The result of an operation on one receipt; `to_agent` names the inbox
    when the message was found."""

    status: ReceiptStatus
    to_agent: str = ""
    next_visible_time: float | None = None


@dataclass(frozen=True)
class ReceiptResult:
    receipt_handle: str
    status: ReceiptStatus
    next_visible_time: float | None = None


@dataclass(frozen=True)
class DeadLetter:
    message: AgentMessage
    delivery_count: int
    reason: DeadLetterReason
    detail: str
    dead_letter_time: float


@dataclass(frozen=True)
class SendOutcome:
    """The stored message (the earlier one when `duplicate`)."""

    message: AgentMessage
    duplicate: bool
