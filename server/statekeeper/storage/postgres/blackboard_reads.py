"""PostgreSQL reads of the blackboard: current entries, range scans at a revision, and the
revision history watches replay, each one statement (one snapshot)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import asyncpg

from statekeeper.core.blackboard.keys import KeyMatcher
from statekeeper.core.blackboard.models import (
    Decision,
    Entry,
    Event,
    EventType,
    Header,
    MutationView,
    RevisionBatch,
    entry_from_columns,
    event_from_columns,
)
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.storage.shared.blackboard import (
    batches_from_rows,
    check_decision,
    entry_from_row,
)

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection


# Rows fetched per statement while scanning a key range for a glob.
SCAN_CHUNK = 500


ENTRY_COLUMNS = (
    "board, key, kind, content_type, schema_version, data, create_revision, revision,"
    " version, writer, expire_time, update_time"
)


VERSION_COLUMNS = (
    "board, key, revision, seq, event_type, kind, content_type, schema_version, data,"
    " create_revision, version, writer, expire_time, update_time"
)


# Current entries of some keys with the tenant header, in one snapshot.
READ_CURRENT = f"""
SELECT h.revision AS h_revision, h.oldest_revision AS h_oldest, e.*
FROM (SELECT 1) AS one
LEFT JOIN bb_tenants h ON h.tenant = $1
LEFT JOIN LATERAL (
    SELECT {ENTRY_COLUMNS} FROM bb_entries
    WHERE tenant = $1 AND board = $2 AND key = ANY($3::text[])
) e ON true
"""


# The latest version at or below a revision of some keys, with the header.
READ_AT = f"""
SELECT h.revision AS h_revision, h.oldest_revision AS h_oldest, v.*
FROM (SELECT 1) AS one
LEFT JOIN bb_tenants h ON h.tenant = $1
LEFT JOIN LATERAL (
    SELECT DISTINCT ON (key) {VERSION_COLUMNS} FROM bb_versions
    WHERE tenant = $1 AND board = $2 AND key = ANY($3::text[]) AND revision <= $4
    ORDER BY key, revision DESC
) v ON true
"""


def live(row: asyncpg.Record, from_versions: bool) -> Iterable[Entry]:
    """The entry of an entries row, or of a versions row if it is a PUT."""
    if from_versions and row["event_type"] != EventType.PUT:
        return ()
    return (entry_from_row(row),)


async def current_entries(
    conn: Connection, tenant: str, board: str, keys: Sequence[str]
) -> dict[str, Entry]:
    rows = await conn.fetch(
        f"SELECT {ENTRY_COLUMNS} FROM bb_entries"
        " WHERE tenant = $1 AND board = $2 AND key = ANY($3::text[])",
        tenant,
        board,
        list(keys),
    )
    return {row["key"]: entry_from_row(row) for row in rows}


async def scan(
    conn: Connection,
    tenant: str,
    board: str,
    matcher: KeyMatcher,
    after_key: str | None,
    revision: int,
    header: Header,
) -> AsyncIterator[Entry]:
    """Entries of the matcher's key range at `revision`, by key (not yet
    filtered by glob or expiry), fetched in chunks of SCAN_CHUNK keys."""
    current = revision == header.revision
    if current:
        source = f"SELECT {ENTRY_COLUMNS} FROM bb_entries WHERE"
        order = " ORDER BY key LIMIT $6"
    else:
        source = f"SELECT DISTINCT ON (key) {VERSION_COLUMNS} FROM bb_versions WHERE"
        order = " AND revision <= $7 ORDER BY key, revision DESC LIMIT $6"
    sql = (
        f"{source} tenant = $1 AND board = $2 AND key >= $3"
        " AND ($4::text IS NULL OR key < $4) AND ($5::text IS NULL OR key > $5)"
        f"{order}"
    )
    extra: list[object] = [] if current else [revision]
    position = after_key
    for _ in range(1_000_000):  # bounded: each round moves past SCAN_CHUNK keys
        rows = await conn.fetch(
            sql, tenant, board, matcher.prefix, matcher.end, position, SCAN_CHUNK, *extra
        )
        for row in rows:
            for entry in live(row, not current):
                yield entry
        if len(rows) < SCAN_CHUNK:
            return
        position = rows[-1]["key"]


def history_sql(by_board: bool, with_previous: bool) -> str:
    """Batches of revisions [$2, $3] (at most $4 of them) of board $5 (NULL:
    every board), with each event's previous version when asked."""
    board_filter = "l.board = $5" if by_board else "$5::text IS NULL"
    previous_columns = previous_join = ""
    if with_previous:
        names = [name.strip() for name in VERSION_COLUMNS.split(",")]
        previous_columns = "".join(f", p.{name} AS p_{name}" for name in names)
        previous_join = (
            " LEFT JOIN LATERAL (SELECT * FROM bb_versions p WHERE p.tenant = v.tenant"
            " AND p.board = v.board AND p.key = v.key AND p.revision < v.revision"
            " ORDER BY p.revision DESC LIMIT 1) p ON true"
        )
    return (
        "WITH revs AS (SELECT l.revision FROM bb_log l WHERE l.tenant = $1"
        f" AND l.revision BETWEEN $2 AND $3 AND {board_filter} ORDER BY l.revision LIMIT $4)"
        f" SELECT v.*{previous_columns} FROM bb_versions v{previous_join}"
        " WHERE v.tenant = $1 AND v.revision IN (SELECT revision FROM revs)"
        " ORDER BY v.revision, v.seq"
    )


def batches(tenant: str, rows: list[asyncpg.Record], with_previous: bool) -> list[RevisionBatch]:
    # The statement already reads at most the batches asked for.
    return batches_from_rows(tenant, rows, lambda row: _event_from_row(row, with_previous))


def _event_from_row(row: asyncpg.Record, with_previous: bool) -> Event:
    event_type, entry = event_from_columns(row)
    previous = None
    if with_previous and row["p_event_type"] == EventType.PUT:
        previous = entry_from_columns(_PreviousColumns(row))
    return Event(event_type, entry, previous)


class _PreviousColumns:
    """The previous version's columns of a history row, which carry the
    version columns' names prefixed with `p_`."""

    __slots__ = ("_row",)

    def __init__(self, row: asyncpg.Record) -> None:
        self._row = row

    def __getitem__(self, name: str, /) -> Any:
        return self._row["p_" + name]


def checked_batch(
    tenant: str, board: str, keys: list[str], view: MutationView, decision: Decision[Any]
) -> RevisionBatch:
    """Checks that a decision only touches its keys, once each, stamped with
    the view's revision, and holds no content type PostgreSQL cannot store."""
    check_decision(keys, board, view.revision, decision.events)
    for event in decision.events:
        value = event.entry.value
        if value is not None and "\x00" in value.content_type:
            # PostgreSQL text cannot hold NUL; refuse rather than fail inside.
            raise InvalidArgumentError("value.content_type", "must not contain NUL")
    return RevisionBatch(tenant, board, view.revision, view.now, decision.events)
