"""Blackboard records: values, entries, events, revisions, and the errors and
limits of the capability.

Times are POSIX seconds (float, UTC). Revisions are per tenant: one counter
shared by all boards, incremented by one for every mutation that changes
something (put, delete, expiry, or a whole transaction).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from statekeeper.core.errors import StatekeeperError

T = TypeVar("T")


# ----- errors (candidates for core/errors.py) --------------------------------


class RevisionMismatchError(StatekeeperError):
    """A compare-and-swap on a key's mod_revision failed."""

    code = "FAILED_PRECONDITION"
    reason = "REVISION_MISMATCH"

    def __init__(self, message: str, current_revision: int) -> None:
        super().__init__(message, current_revision=str(current_revision))
        self.current_revision = current_revision


class RevisionCompactedError(StatekeeperError):
    """A read or watch asked for a revision that has been compacted."""

    code = "OUT_OF_RANGE"
    reason = "REVISION_COMPACTED"

    def __init__(self, requested: int, oldest_revision: int) -> None:
        super().__init__(
            f"revision {requested} has been compacted; the oldest available is {oldest_revision}",
            oldest_revision=str(oldest_revision),
        )
        self.oldest_revision = oldest_revision


class SlowConsumerError(StatekeeperError):
    """A watcher fell more than its buffer behind and was cancelled."""

    code = "RESOURCE_EXHAUSTED"
    reason = "SLOW_CONSUMER"

    def __init__(self, resume_revision: int, buffer: int) -> None:
        super().__init__(
            f"the watcher fell more than {buffer} responses behind and was cancelled;"
            f" resume from revision {resume_revision}",
            resume_revision=str(resume_revision),
        )
        self.resume_revision = resume_revision


# ----- limits (candidates for core/limits.py) --------------------------------


@dataclass(frozen=True)
class BlackboardLimits:
    """Every limit and timing of the blackboard. Defaults are what `serve`
    uses; tests shrink them."""

    max_board_bytes: int = 256
    max_key_bytes: int = 1024
    max_pattern_bytes: int = 1024
    max_value_bytes: int = 1024 * 1024
    max_writer_id_bytes: int = 256
    max_ttl_seconds: float = 365 * 24 * 3600.0
    max_keys_per_tenant: int = 1_000_000
    max_txn_compares: int = 64
    max_txn_ops: int = 128
    default_page_size: int = 100
    max_page_size: int = 1000
    # Watches: open streams per tenant, responses a watcher may lag behind
    # before it is cancelled (SLOW_CONSUMER), and the progress floor.
    max_watches_per_tenant: int = 10_000
    watch_buffer_responses: int = 1024
    min_progress_interval_seconds: float = 0.05
    snapshot_chunk_entries: int = 100
    max_events_per_response: int = 1000
    # Responses are packed up to this many bytes of keys and values; one
    # revision (or one entry) that is bigger still goes whole, alone.
    max_response_bytes: int = 1024 * 1024
    # Background work: TTL expiry sweep and history retention.
    expiry_sweep_interval_seconds: float = 0.2
    expiry_batch: int = 1000
    history_retention_seconds: float = 3600.0
    history_max_revisions: int = 1_000_000
    compaction_interval_seconds: float = 60.0
    # How often a hub re-reads the store revision to repair a lost tail of
    # the event feed (production feeds can lose a publish on a crash).
    feed_check_interval_seconds: float = 1.0


# ----- values and entries ----------------------------------------------------


class EventType(enum.IntEnum):
    """Kind of a change; values equal the proto enum numbers."""

    PUT = 1
    DELETE = 2
    EXPIRE = 3


class ValueKind(enum.IntEnum):
    PAYLOAD = 1
    JSON = 2


@dataclass(frozen=True)
class Value:
    """A key's value: typed bytes (`kind` PAYLOAD) or a JSON object (JSON,
    held as canonical JSON bytes in `data`)."""

    kind: ValueKind
    data: bytes
    content_type: str = ""
    schema_version: int = 0

    @staticmethod
    def payload(data: bytes, content_type: str = "", schema_version: int = 0) -> Value:
        return Value(ValueKind.PAYLOAD, data, content_type, schema_version)

    @staticmethod
    def json_object(obj: Mapping[str, Any]) -> Value:
        return Value(ValueKind.JSON, canonical_json(obj))

    def as_object(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.data)
        return result

    @property
    def size_bytes(self) -> int:
        return len(self.data) + len(self.content_type.encode())


def canonical_json(obj: Any) -> bytes:
    """Key-sorted compact JSON: equal objects give equal bytes."""
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


@dataclass(frozen=True)
class Entry:
    """One key: its value and revisions. For DELETE and EXPIRE events only
    board, key and mod_revision (the removal's revision) are meaningful."""

    board: str
    key: str
    value: Value | None
    create_revision: int
    mod_revision: int
    version: int
    writer_agent_id: str = ""
    expire_time: float | None = None
    update_time: float = 0.0

    def is_expired(self, now: float) -> bool:
        return self.expire_time is not None and self.expire_time <= now

    @property
    def size_bytes(self) -> int:
        """Approximate wire size: key plus value."""
        value = self.value.size_bytes if self.value is not None else 0
        return len(self.key.encode()) + value

    def without_value(self) -> Entry:
        return Entry(
            self.board,
            self.key,
            None,
            self.create_revision,
            self.mod_revision,
            self.version,
            self.writer_agent_id,
            self.expire_time,
            self.update_time,
        )


class Columns(Protocol):
    """One stored version by column name: a table row (sqlite3.Row,
    asyncpg.Record) or a row of an archived unit, which keeps the names."""

    def __getitem__(self, name: str, /) -> Any: ...


def value_from_columns(row: Columns) -> Value | None:
    """The version's value; None for a removal (no kind). A missing content
    type or schema version (columns nullable) reads as the default."""
    if row["kind"] is None:
        return None
    kind, data = ValueKind(row["kind"]), bytes(row["data"])
    return Value(kind, data, row["content_type"] or "", row["schema_version"] or 0)


def entry_from_columns(row: Columns) -> Entry:
    """The entry one stored version holds (`revision` is its mod revision)."""
    return Entry(
        board=row["board"],
        key=row["key"],
        value=value_from_columns(row),
        create_revision=row["create_revision"],
        mod_revision=row["revision"],
        version=row["version"],
        writer_agent_id=row["writer"],
        expire_time=row["expire_time"],
        update_time=row["update_time"],
    )


def tombstone(board: str, key: str, revision: int, now: float) -> Entry:
    return Entry(board, key, None, 0, revision, 0, update_time=now)


def event_from_columns(row: Columns) -> tuple[EventType, Entry]:
    """The event one stored version records and its entry: the version for
    a PUT, a tombstone at its revision for a removal."""
    event_type = EventType(row["event_type"])
    if event_type == EventType.PUT:
        return event_type, entry_from_columns(row)
    return event_type, tombstone(row["board"], row["key"], row["revision"], row["update_time"])


@dataclass(frozen=True)
class Event:
    """One change of one key; `previous` is the entry before it, if any."""

    type: EventType
    entry: Entry
    previous: Entry | None

    @property
    def revision(self) -> int:
        return self.entry.mod_revision

    @property
    def key(self) -> str:
        return self.entry.key

    @property
    def size_bytes(self) -> int:
        previous = self.previous.size_bytes if self.previous is not None else 0
        return self.entry.size_bytes + previous


@dataclass(frozen=True)
class RevisionBatch:
    """Everything one revision changed: one board, events in operation order."""

    tenant: str
    board: str
    revision: int
    commit_time: float
    events: tuple[Event, ...]


@dataclass(frozen=True)
class Header:
    """The tenant's current revision and the oldest one still readable."""

    revision: int
    oldest_revision: int


# ----- the mutation protocol between the domain and its store -----------------


@dataclass(frozen=True)
class MutationView:
    """What a mutation decides on: the live (unexpired) entries of the keys
    it named, and the revision its changes will carry."""

    header: Header
    now: float
    entries: Mapping[str, Entry]
    key_count: int

    @property
    def revision(self) -> int:
        """The revision this mutation's changes get, if it makes any."""
        return self.header.revision + 1


@dataclass(frozen=True)
class Decision(Generic[T]):
    """A mutation's changes (as events, in order; empty = no revision) and
    the caller's result."""

    events: tuple[Event, ...]
    result: T


Decide = Callable[[MutationView], Decision[T]]


@dataclass(frozen=True)
class MutationOutcome(Generic[T]):
    """`header` after the mutation; `batch` is None if nothing changed."""

    header: Header
    result: T
    batch: RevisionBatch | None


@dataclass(frozen=True)
class ReadResult:
    """Entries read at `revision`, with the header of the moment."""

    header: Header
    revision: int
    entries: list[Entry] = field(default_factory=list)
