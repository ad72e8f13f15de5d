"""What both backends share for archiving checkpoint histories: the tables
of a history unit, their row order, the chunk's rows, and the fingerprint
that the compare-and-delete checks.

A history unit is every checkpoint of one execution except the newest of
each namespace (those stay hot), with their channel rows, their pending
writes and every channel value (blob) they reference. Values are stored
once per (tenant, content hash) and shared: the chunk carries all the ones
the history references, the delete removes only those nothing hot
references any more, and a restore inserts them if absent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

from statekeeper.admin import transfer
from statekeeper.admin.tables import Table, selected
from statekeeper.core.archive.service import USER_IDS
from statekeeper.core.archive.store import ExportedUnit
from statekeeper.core.privacy.models import USER_METADATA_KEY
from statekeeper.storage.archive import chunks

# The tables of a history unit, in the order their rows are restored
# (values before the channel rows that reference them).
HISTORY_TABLES = ("cp_blobs", "cp_checkpoints", "cp_channels", "cp_writes")
# The rows whose change means the history moved on since the export.
FINGERPRINTED = ("cp_checkpoints", "cp_channels", "cp_writes")
# Row order of each table, the same on both dialects (text keys compare
# byte by byte on both: BINARY in SQLite, COLLATE "C" in PostgreSQL).
ORDER = {
    "cp_blobs": "content_hash",
    "cp_checkpoints": "namespace, checkpoint_id",
    "cp_channels": "namespace, checkpoint_id, channel",
    "cp_writes": "namespace, checkpoint_id, task_id, write_index",
}
# The newest checkpoints of each namespace stay hot; this picks the others.
HISTORY_KEYS = (
    "SELECT namespace, checkpoint_id FROM (SELECT namespace, checkpoint_id,"
    " ROW_NUMBER() OVER (PARTITION BY namespace ORDER BY create_time_ns DESC,"
    " sequence DESC) AS newest_rank FROM cp_checkpoints WHERE tenant = {tenant}"
    " AND execution_id = {execution}) AS ranked WHERE newest_rank > 1"
    " ORDER BY namespace, checkpoint_id"
)
# Executions whose newest checkpoint is older than the cutoff and that have
# more than one checkpoint in some namespace (a history to archive).
CANDIDATES = (
    "SELECT tenant, execution_id FROM cp_checkpoints"
    " WHERE (tenant, execution_id) > ({tenant}, {execution})"
    " GROUP BY tenant, execution_id"
    " HAVING max(create_time_ns) < {cutoff} AND count(*) > count(DISTINCT namespace)"
    " ORDER BY tenant, execution_id LIMIT {limit}"
)

Key = tuple[str, str]  # (namespace, checkpoint_id)
ChunkRows = chunks.ChunkRows


def candidates_query(
    marks: tuple[str, str, str, str], after: Key | None, cutoff_ns: int, limit: int
) -> tuple[str, tuple[Any, ...]]:
    """CANDIDATES in a dialect's placeholders (`marks`: tenant, execution,
    cutoff, limit) with its parameters, from the start when `after` is None."""
    tenant, execution, cutoff, count = marks
    sql = CANDIDATES.format(tenant=tenant, execution=execution, cutoff=cutoff, limit=count)
    return sql, (*(after or ("", "")), cutoff_ns, limit)


def candidate_keys(rows: Iterable[Any]) -> list[Key]:
    return [(str(row[0]), str(row[1])) for row in rows]


def history_tables() -> tuple[Table, ...]:
    by_name = {table.name: table for table in selected(None)}
    return tuple(by_name[name] for name in HISTORY_TABLES)


def unit_filter(table: Table, tenant: str, execution: str, keys: str) -> str | None:
    """The filter of a history's rows in `table`, with the dialect's
    placeholders for the tenant and the execution and `keys` the dialect's
    condition "(namespace, checkpoint_id) is one of the history's"; None
    when the table holds nothing of a history."""
    if table.name not in HISTORY_TABLES:
        return None
    if table.name == "cp_blobs":
        return (
            f"tenant = {tenant} AND content_hash IN (SELECT content_hash FROM cp_channels"
            f" WHERE tenant = {tenant} AND execution_id = {execution} AND {keys})"
        )
    return f"tenant = {tenant} AND execution_id = {execution} AND {keys}"


class Fingerprint:
    """A digest of a history's rows (all but the values, which are
    content-addressed): equal digests mean the same checkpoints, channel
    references and pending writes."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def add(self, table: str, row: Sequence[Any]) -> None:
        if table in FINGERPRINTED:
            values = [transfer.encode_value(value) for value in row]
            self._digest.update(json.dumps([table, values], default=str).encode())
            self._digest.update(b"\n")

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def extra_of(
    keys: Sequence[Key], run_ids: Iterable[str], hashes: Iterable[str], fingerprint: str
) -> dict[str, Any]:
    """What the manifest keeps for the kind: the archived checkpoints'
    keys (restores and repair check them), their run ids (DeleteRuns finds
    the histories to restore by them), the prefixes of the values they
    reference (GetChannelValues does) and the fingerprint."""
    return {
        "keys": [list(key) for key in keys],
        "run_ids": sorted({run_id for run_id in run_ids if run_id}),
        "value_prefixes": sorted({content_hash[:16] for content_hash in hashes}),
        "fingerprint": fingerprint,
    }


def keys_of(extra: dict[str, Any]) -> list[Key]:
    return [(str(key[0]), str(key[1])) for key in extra.get("keys", [])]


def named_users(metadata: Iterable[Any], key: str) -> list[str]:
    """Every user an execution's checkpoints name in their metadata, by id
    (the archived history gets a marker of each, so that EraseUser of any
    of them removes it, as it deletes the execution's hot checkpoints)."""
    users = set()
    for item in metadata:
        document = json.loads(item) if isinstance(item, str | bytes) else item
        value = document.get(key) if isinstance(document, dict) else None
        if isinstance(value, str) and value:
            users.add(value)
    return sorted(users)


def exported_history(
    path: Path,
    keys: Sequence[Key],
    run_ids: Iterable[str],
    hashes: Iterable[str],
    fingerprint: str,
    metadata: Iterable[Any],
    summary: transfer.ExportSummary,
) -> ExportedUnit:
    """What an export of a history wrote, for the archive: every user its
    checkpoints name gets a marker (the first as the manifest's user_id,
    all in extra["user_ids"]), so EraseUser of any of them removes it."""
    extra = extra_of(keys, run_ids, hashes, fingerprint)
    users = named_users(metadata, USER_METADATA_KEY)
    extra[USER_IDS] = users
    first = users[0] if users else ""
    return ExportedUnit(path, first, len(keys), summary.counts, summary.sha256, extra)


def chunk_rows(path: Path) -> tuple[transfer.Header, dict[str, tuple[list[str], list[list[Any]]]]]:
    """The chunk's header (checksum verified) and its rows per table with
    their columns; a row of a table outside a history fails it."""
    return chunks.chunk_rows(path, tables=HISTORY_TABLES)


async def fingerprinted(
    rows: AsyncIterator[Sequence[Any]], table: str, fingerprint: Fingerprint
) -> AsyncIterator[Sequence[Any]]:
    """`rows` of `table`, each added to `fingerprint` as it is read."""
    async for row in rows:
        fingerprint.add(table, row)
        yield row


async def tenant_chunk_rows(chunk: Path, tenant: str) -> ChunkRows:
    """The rows of a history chunk of `tenant` (see chunks.tenant_chunk_rows)."""
    return await chunks.tenant_chunk_rows(chunk, tenant, HISTORY_TABLES)


def absent_rows(
    rows: dict[str, tuple[list[str], list[list[Any]]]], hot: set[Key]
) -> dict[str, tuple[list[str], list[list[Any]]]]:
    """The chunk's rows without those of checkpoints that are hot (saved
    again under the same id after the archive: the hot one wins)."""
    kept: dict[str, tuple[list[str], list[list[Any]]]] = {}
    for name, (columns, values) in rows.items():
        if name == "cp_blobs" or not hot:
            kept[name] = (columns, values)
            continue
        at_namespace, at_id = columns.index("namespace"), columns.index("checkpoint_id")
        kept[name] = (
            columns,
            [row for row in values if (row[at_namespace], row[at_id]) not in hot],
        )
    return kept


def chunk_keys(rows: dict[str, tuple[list[str], list[list[Any]]]]) -> list[Key]:
    if "cp_checkpoints" not in rows:
        return []
    columns, values = rows["cp_checkpoints"]
    at_namespace, at_id = columns.index("namespace"), columns.index("checkpoint_id")
    return [(str(row[at_namespace]), str(row[at_id])) for row in values]
