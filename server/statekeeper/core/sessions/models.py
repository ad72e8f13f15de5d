"""Domain records: sessions, messages, versions and the audit trail.

Times are POSIX seconds (float, UTC). Records serialize to plain JSON-able
dicts so that every backend can store a version snapshot the same way.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.records import evolved


class SessionStatus(enum.IntEnum):
    """Lifecycle state; values equal the proto enum numbers."""

    ACTIVE = 1
    PAUSED = 2
    COMPLETED = 3
    FAILED = 4
    EXPIRED = 5


class Role(enum.IntEnum):
    """Message author; values equal the proto enum numbers."""

    SYSTEM = 1
    USER = 2
    ASSISTANT = 3
    TOOL = 4

    @property
    def wire_name(self) -> str:
        """The OpenAI chat role string, which is what gets tokenized."""
        return self.name.lower()


class ChangeKind(enum.IntEnum):
    """What created a session version; values equal the proto enum numbers."""

    CREATE = 1
    UPDATE = 2
    APPEND = 3
    COMPACT = 4
    ROLLBACK = 5


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model."""

    id: str
    name: str
    arguments: str = ""


@dataclass(frozen=True)
class Message:
    """One immutable entry of a session's history."""

    sequence: int
    message_id: str
    role: Role
    content: str
    name: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    token_count: int = 0
    create_time: float = 0.0
    rolled_back: bool = False

    def meta(self) -> MessageMeta:
        """The lightweight view the context window planner needs."""
        return MessageMeta(
            sequence=self.sequence,
            role=self.role,
            token_count=self.token_count,
            tool_call_ids=tuple(call.id for call in self.tool_calls),
            tool_call_id=self.tool_call_id,
        )


@dataclass(frozen=True)
class MessageMeta:
    """A message without its text: enough to plan a window from stored counts."""

    sequence: int
    role: Role
    token_count: int
    tool_call_ids: tuple[str, ...] = ()
    tool_call_id: str = ""


SeqRange = tuple[int, int]


@dataclass(frozen=True)
class SessionRecord:
    """A session's full state at one version (messages are stored apart).

    `visible_ranges` lists the inclusive sequence ranges of messages that are
    in the session's lineage (not undone by a rollback). The working window is
    the visible messages with `sequence > compacted_through`.
    """

    session_id: str
    user_id: str
    agent_id: str = ""
    status: SessionStatus = SessionStatus.ACTIVE
    context_variables: dict[str, Any] = field(default_factory=dict)
    active_tools: tuple[str, ...] = ()
    pending_tool_calls: tuple[ToolCall, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)
    ttl_seconds: float = 0.0
    expire_time: float | None = None
    create_time: float = 0.0
    update_time: float = 0.0
    version: int = 0
    last_sequence: int = 0
    message_count: int = 0
    window_message_count: int = 0
    window_tokens: int = 0
    compaction_summary: str = ""
    compaction_summary_tokens: int = 0
    compacted_through: int = 0
    visible_ranges: tuple[SeqRange, ...] = ()

    @property
    def etag(self) -> str:
        """Opaque tag of this version; equal etags mean equal versions."""
        return f'W/"{self.version}"'

    def is_expired(self, now: float) -> bool:
        return self.expire_time is not None and self.expire_time <= now

    def is_visible_sequence(self, sequence: int) -> bool:
        return any(low <= sequence <= high for low, high in self.visible_ranges)

    def evolve(self, **changes: Any) -> SessionRecord:
        """A copy with `changes` (every change builds a record or two)."""
        return evolved(self, _RECORD_FIELD_SET, changes)

    def to_json(self) -> dict[str, Any]:
        # What dataclasses.asdict gives, without its deep copy of every
        # value: every write encodes the record, and asdict dominated that.
        data = {name: getattr(self, name) for name in _RECORD_FIELDS}
        data["status"] = int(self.status)
        data["pending_tool_calls"] = [
            {"id": call.id, "name": call.name, "arguments": call.arguments}
            for call in self.pending_tool_calls
        ]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecord:
        return cls(
            **{
                **data,
                "status": SessionStatus(data["status"]),
                "active_tools": tuple(data.get("active_tools", ())),
                "pending_tool_calls": tuple(
                    ToolCall(**call) for call in data.get("pending_tool_calls", ())
                ),
                "visible_ranges": tuple(
                    (int(low), int(high)) for low, high in data.get("visible_ranges", ())
                ),
            }
        )


_RECORD_FIELDS = tuple(f.name for f in fields(SessionRecord))
_RECORD_FIELD_SET = frozenset(_RECORD_FIELDS)


@dataclass(frozen=True)
class SessionVersion:
    """The state of a session after one change."""

    version: int
    parent_version: int
    change_kind: ChangeKind
    create_time: float
    snapshot: SessionRecord


@dataclass(frozen=True)
class AppendReceipt:
    """What an idempotent append recorded, to answer a retry identically."""

    session_id: str
    first_sequence: int
    last_sequence: int
    version: int


@dataclass(frozen=True)
class SessionChange:
    """One atomic mutation of an existing session, applied by a store.

    The store applies it only if the stored version still equals
    `expected_version`; `record.version` is the new version.
    `audit` is written in the same transaction when set (the domain always
    sets it).
    """

    expected_version: int
    record: SessionRecord
    version: SessionVersion
    new_messages: tuple[Message, ...] = ()
    visibility_changed: bool = False
    request_id: str = ""
    audit: AuditRecord | None = None
    # What `SessionStore.read_for_change` returned with the record this
    # change was built from (opaque; None when it was read otherwise).
    ticket: object | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SessionFilter:
    """Equality filters of ListSessions; empty or None means any."""

    user_id: str = ""
    agent_id: str = ""
    status: SessionStatus | None = None


@dataclass(frozen=True)
class SessionCursor:
    """Position after the last session of a page (newest-first order)."""

    create_time: float
    session_id: str


@dataclass(frozen=True)
class SessionDraft:
    """Caller-supplied fields of a session (create or update)."""

    user_id: str = ""
    agent_id: str = ""
    status: SessionStatus | None = None
    context_variables: dict[str, Any] = field(default_factory=dict)
    active_tools: tuple[str, ...] = ()
    pending_tool_calls: tuple[ToolCall, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)
    ttl_seconds: float = 0.0


@dataclass(frozen=True)
class MessageDraft:
    """Caller-supplied fields of a message to append."""

    role: Role
    content: str = ""
    name: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AppendResult:
    record: SessionRecord
    messages: list[Message]
    replayed: bool


@dataclass(frozen=True)
class WindowRequest:
    token_budget: int
    reserved_output_tokens: int = 0
    system_prompt: str = ""
    tools_json: str = ""
    summary_max_tokens: int = 0


@dataclass(frozen=True)
class TokenAccounting:
    token_budget: int
    reserved_output_tokens: int
    system_prompt_tokens: int
    tools_tokens: int
    summary_tokens: int
    messages_tokens: int
    framing_tokens: int

    @property
    def total_tokens(self) -> int:
        return (
            self.system_prompt_tokens
            + self.tools_tokens
            + self.summary_tokens
            + self.messages_tokens
            + self.framing_tokens
        )

    @property
    def remaining_tokens(self) -> int:
        return self.token_budget - self.reserved_output_tokens - self.total_tokens


@dataclass(frozen=True)
class ContextWindow:
    messages: list[Message]
    summary: str
    summarized_message_count: int
    accounting: TokenAccounting
    version: int
    summary_is_fallback: bool
