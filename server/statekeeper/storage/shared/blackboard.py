"""Blackboard: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TypeVar

from statekeeper.core.blackboard.models import (
    Entry,
    Event,
    EventType,
    Header,
    RevisionBatch,
    RevisionCompactedError,
    Value,
    entry_from_columns,
)
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.storage.sql import Row

AnyRow = TypeVar("AnyRow", bound=Row)


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


def batches_from_rows(
    tenant: str,
    rows: Iterable[AnyRow],
    event_of: Callable[[AnyRow], Event],
    limit: int | None = None,
) -> list[RevisionBatch]:
    """History rows (ordered by revision, then seq) as one batch a revision,
    at most `limit` of them (None: all the rows hold)."""
    batches: list[RevisionBatch] = []
    events: list[Event] = []
    current: AnyRow | None = None
    for row in rows:
        if current is not None and row["revision"] != current["revision"]:
            batches.append(batch_from(tenant, current, events))
            events = []
            if limit is not None and len(batches) >= limit:
                return batches
        current = row
        events.append(event_of(row))
    if current is not None:
        batches.append(batch_from(tenant, current, events))
    return batches


def check_decision(
    keys: Collection[str], board: str, revision: int, events: Sequence[Event]
) -> None:
    """Checks that a decision only touches its keys, once each, stamped with
    the view's revision (ValueError: the decision is a bug)."""
    seen: set[str] = set()
    for event in events:
        if event.key not in keys or event.key in seen:
            raise ValueError(f"decision changes key {event.key!r} it did not name, or twice")
        if event.revision != revision or event.entry.board != board:
            raise ValueError("decision event is not stamped with the mutation's revision")
        if event.type == EventType.EXPIRE:
            raise ValueError("only the store expires keys")
        seen.add(event.key)
