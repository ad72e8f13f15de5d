"""What both backends share for archiving audit records (core/archive/audit.py):
the columns of a chunk, the filter of a day's records, reading a chunk
back, and building the kind and its reader for a deployment.

A chunk is an export file (admin/transfer.py) whose only rows are the
day's audit_log rows, in chain order (chain_seq, unchained first, then
audit_id). Unlike `statekeeper export`, which drops the chain columns
for the target's trigger to recompute, a chunk keeps chain_seq, prev_hash
and hash as ordinary columns: the archived records are never inserted
again, and `statekeeper audit verify` checks them as they were chained.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from statekeeper.admin import transfer
from statekeeper.admin.tables import Table
from statekeeper.config import Settings
from statekeeper.core.archive.audit import (
    ArchivedAudit,
    ArchivedAuditRecord,
    AuditArchiveDatabase,
    AuditUnits,
)
from statekeeper.core.archive.damage import count_as_damage
from statekeeper.core.archive.service import Archive
from statekeeper.core.archive.store import ExportedUnit
from statekeeper.core.audit.models import ChainLink
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.sessions_schema import audit_digest
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.sql import AUDIT_COLUMNS, audit_from_row

TABLE = "audit_log"
CONTENT_COLUMNS = tuple(AUDIT_COLUMNS.replace(" ", "").split(","))
CHAIN_COLUMNS = ("chain_seq", "prev_hash", "hash")
# A chunk's audit_log columns: the id, the content, the chain as stored.
CHUNK_COLUMNS = ("audit_id", *CONTENT_COLUMNS, *CHAIN_COLUMNS)
CHAIN_ORDER = "chain_seq NULLS FIRST, audit_id"

# A chunk that is not this tenant's audit day answers UNAVAILABLE, not INTERNAL.
count_as_damage(transfer.TransferError)


def day_filter(style: Callable[[int], str]) -> str:
    """The filter of a tenant's day: {1} tenant, {2} start, {3} end."""
    return f"tenant = {style(1)} AND time >= {style(2)} AND time < {style(3)}"


def day_selection(
    table: Table, day: str, tenant: str, bounds: tuple[float, float]
) -> transfer.Selection | None:
    """What a day's export reads: the audit_log rows of `tenant` within
    `bounds` (`day`: `day_filter` in the source's dialect), in chain order;
    nothing of any other table."""
    if table.name != TABLE:
        return None
    return transfer.Selection(day, (tenant, *bounds), CHAIN_ORDER)


def exported(path: Path, summary: transfer.ExportSummary, ids: Sequence[int]) -> ExportedUnit:
    """The chunk's description; `extra` guards the delete and lets reads
    skip days by id (first_id, last_id)."""
    extra = {
        "first_id": min(ids),
        "last_id": max(ids),
        "records": len(ids),
        "id_sum": sum(ids),
    }
    return ExportedUnit(path, "", max(ids), summary.counts, summary.sha256, extra)


def same_rows(ids: Sequence[int], records: int, id_sum: int) -> bool:
    return len(ids) == records and sum(ids) == id_sum


def read_chunk(path: Path, tenant: str) -> list[ArchivedAuditRecord]:
    """The records of a chunk (checksum and tenant checked), each with the
    digest of its stored prev_hash and content recomputed."""
    header = transfer.read_header(path)
    if header.tenant != tenant:
        raise transfer.TransferError(f"{path} belongs to another tenant")
    columns = {name: cols for name, cols, _ in header.tables}
    at = {name: index for index, name in enumerate(columns.get(TABLE, []))}
    if any(name not in at for name in CHUNK_COLUMNS):
        raise transfer.TransferError(f"{path}: not an audit chunk (columns {sorted(at)})")
    found: list[ArchivedAuditRecord] = []
    with transfer.open_lines(path) as stream:
        for line in stream:
            if not line.startswith(b'{"t":'):
                continue
            record = json.loads(line)
            if record["t"] != TABLE:
                raise transfer.TransferError(f"{path}: table {record['t']!r} in an audit chunk")
            found.append(_archived([transfer.decode_value(v) for v in record["r"]], at))
    return found


def _archived(row: list[Any], at: dict[str, int]) -> ArchivedAuditRecord:
    value = {name: row[at[name]] for name in CHUNK_COLUMNS}
    record = audit_from_row(value)
    link = ChainLink(
        audit_id=record.audit_id,
        tenant=record.tenant,
        chain_seq=value["chain_seq"],
        prev_hash=value["prev_hash"],
        hash=value["hash"],
        # The same digest the stores compute (SQLite: this function;
        # PostgreSQL: audit_digest, the same canonical bytes).
        recomputed=audit_digest(value["prev_hash"], *(value[c] for c in CONTENT_COLUMNS)),
    )
    return ArchivedAuditRecord(record, link)


def source_columns(table: Table) -> list[str] | None:
    """A chunk source's columns of audit_log (None: another table)."""
    return list(CHUNK_COLUMNS) if table.name == TABLE else None


def audit_database(settings: Settings, storage: Storage) -> AuditArchiveDatabase | None:
    if isinstance(storage, ProductionStorage):
        from statekeeper.storage.archive.audit_postgres import PostgresAuditArchive

        return PostgresAuditArchive(storage.durable)
    if isinstance(storage, EmbeddedStorage):
        from statekeeper.storage.archive.audit_embedded import EmbeddedAuditArchive

        return EmbeddedAuditArchive(storage, Path(settings.data_dir))
    return None


def attach_audit(archive: Archive, settings: Settings, storage: Storage) -> ArchivedAudit | None:
    """Registers the audit kind (always, so archived days stay readable
    when the policy is later turned off) and returns the reader the audit
    log merges; None when the backend has no audit archive."""
    database = audit_database(settings, storage)
    if database is None:
        return None
    archive.add_kind(AuditUnits(database, settings.archive_audit_after_days))
    return ArchivedAudit(archive, database.read_chunk)
