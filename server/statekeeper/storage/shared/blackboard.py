"""Blackboard: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

from statekeeper.core.blackboard.models import (
    Entry,
    Event,
    Header,
    RevisionBatch,
    RevisionCompactedError,
    Value,
    ValueKind,
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


def value_from_row(row: Row) -> Value | None:
    if row["kind"] is None:
        return None
    return Value(
        ValueKind(row["kind"]), bytes(row["data"]), row["content_type"], row["schema_version"]
    )


def entry_from_row(row: Row) -> Entry:
    return Entry(
        board=row["board"],
        key=row["key"],
        value=value_from_row(row),
        create_revision=row["create_revision"],
        mod_revision=row["revision"],
        version=row["version"],
        writer_agent_id=row["writer"],
        expire_time=row["expire_time"],
        update_time=row["update_time"],
    )


def batch_from(tenant: str, row: Row, events: list[Event]) -> RevisionBatch:
    return RevisionBatch(tenant, row["board"], row["revision"], row["update_time"], tuple(events))
