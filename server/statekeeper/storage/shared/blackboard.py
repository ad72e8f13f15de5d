"""Blackboard: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

from statekeeper.core.blackboard.models import (
    Entry,
    Event,
    Header,
    RevisionBatch,
    RevisionCompactedError,
    Value,
    entry_from_columns,
)
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.storage.sql import Row


def resolve_revision(header: Header, revision: int, slack: int) -> int:
    """The revision to read at; `slack` 1 admits oldest - 1 (snapshots)."""
    if revision == 0:
        return header.revision
    if revision > header.revision:
        raise above_current(revision, header.revision)
    if revision < header.oldest_revision - slack:
        raise RevisionCompactedError(revision, header.oldest_revision)
    return revision


def above_current(revision: int, current: int) -> InvalidArgumentError:
    error = InvalidArgumentError("revision", f"{revision} is above the current revision {current}")
    error.metadata["current_revision"] = str(current)
    return error


def visible(entry: Entry, visible_at: float | None) -> bool:
    return visible_at is None or not entry.is_expired(visible_at)


# One mapper for table rows and archived rows (they keep the column names).
entry_from_row = entry_from_columns


def batch_from(tenant: str, row: Row, events: list[Event]) -> RevisionBatch:
    return RevisionBatch(tenant, row["board"], row["revision"], row["update_time"], tuple(events))


_NO_VALUE: tuple[None, None, None, None] = (None, None, None, None)


def value_columns(value: Value | None) -> tuple[int | None, str | None, int | None, bytes | None]:
    """A version's kind, content_type, schema_version and data columns
    (all NULL for a removal)."""
    if value is None:
        return _NO_VALUE
    return int(value.kind), value.content_type, value.schema_version, value.data


def event_columns(event: Event) -> tuple[object, ...]:
    """An event's version columns from event_type to update_time, in the
    order bb_versions declares them."""
    entry = event.entry
    return (
        int(event.type),
        *value_columns(entry.value),
        entry.create_revision,
        entry.version,
        entry.writer_agent_id,
        entry.expire_time,
        entry.update_time,
    )
