"""Checkpoints: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statekeeper.core.checkpoints.models import (
    ChannelEntry,
    CheckpointQuery,
    PendingWrite,
    Position,
    RemovalCounts,
    StoredCheckpoint,
)
from statekeeper.core.schema_upgrades import Payload
from statekeeper.storage.sql import Mark, Row, Where

# The listing orders' indexes, the same statements in both schemas' first
# migration (never edit: applied migrations must keep their text).
CHECKPOINT_ORDER_INDEXES = (
    "CREATE INDEX cp_checkpoints_order ON cp_checkpoints"
    " (tenant, execution_id, namespace, create_time_ns, sequence)",
    "CREATE INDEX cp_checkpoints_tenant_order ON cp_checkpoints (tenant, create_time_ns, sequence)",
)


def add(left: RemovalCounts, right: RemovalCounts) -> RemovalCounts:
    return RemovalCounts(
        left.checkpoints + right.checkpoints,
        left.writes + right.writes,
        left.channel_values + right.channel_values,
    )


def checkpoint_from_row(
    row: Row, channels: dict[str, ChannelEntry], pending_writes: tuple[PendingWrite, ...]
) -> StoredCheckpoint:
    """A StoredCheckpoint from a row of the cp_checkpoints columns (metadata
    as JSON text), with the channels and writes each backend reads its way."""
    return StoredCheckpoint(
        execution_id=row["execution_id"],
        namespace=row["namespace"],
        checkpoint_id=row["checkpoint_id"],
        parent_checkpoint_id=row["parent_checkpoint_id"],
        step=row["step"],
        step_name=row["step_name"],
        state=Payload(row["state_type"], row["state_version"], bytes(row["state_data"])),
        channels=channels,
        metadata=json.loads(row["metadata"]),
        run_id=row["run_id"],
        create_time_ns=row["create_time_ns"],
        sequence=row["sequence"],
        pending_writes=pending_writes,
    )


@dataclass(frozen=True)
class ListDialect:
    """What a checkpoint listing's conditions need of a backend: its
    placeholders, the casts its parameters want (PostgreSQL types them for
    the row comparison; SQLite needs none), and its JSON equality test of
    one metadata key."""

    mark: Mark
    text_cast: str
    bigint_cast: str
    # Adds to the Where the condition that metadata key = the JSON value.
    metadata_equals: Callable[[Where, str, Any], None]


def list_filter(
    tenant: str, query: CheckpointQuery, after: Position | None, dialect: ListDialect
) -> Where:
    """Conditions on `cp_checkpoints AS c` for list_checkpoints: the query's
    filters and, with `after`, strictly after it in newest-first order. Ids
    compare byte by byte on both backends (SQLite's BINARY collation,
    PostgreSQL's "C")."""
    text, bigint = dialect.text_cast, dialect.bigint_cast
    where = Where(dialect.mark)
    where.add("c.tenant = {}", tenant)
    if query.execution_id:
        where.add("c.execution_id = {}", query.execution_id)
    if query.namespace is not None:
        where.add("c.namespace = {}", query.namespace)
    if query.run_id:
        where.add("c.run_id = {}", query.run_id)
    if query.before_checkpoint_id:
        where.add(f"c.checkpoint_id < {{}}{text}", query.before_checkpoint_id)
    if after is not None:
        where.add(
            "(c.create_time_ns, c.sequence, c.execution_id, c.namespace) <"
            f" ({{}}{bigint}, {{}}{bigint}, {{}}{text}, {{}}{text})",
            *after.to_token(),
        )
    for key, value in query.metadata_filter.items():
        dialect.metadata_equals(where, key, value)
    return where
