"""PostgreSQL checkpoint store: the production backend of CheckpointStore.

Tables live next to the session tables of `PostgresStorage` and are
versioned by their own migration list and table,
`checkpoint_schema_migrations`, applied by `start()` in one transaction under
an advisory lock, so replicas starting together apply each migration once.
Every method that changes data is one transaction on a pooled connection; a
method that returns has committed, together with its audit record. The two
hot paths, saves and pending writes, are PL/pgSQL functions created by the
migration (cp_save, cp_put_writes): one round trip each, with no network wait
while they hold locks; their refusals come back as SQLSTATEs of class "SK"
and become the domain's errors here.

Several replicas write the same tables at once. Two locks, always taken in
this order, keep every MUST rule of core/checkpoints/store.py true between
them (no deadlock can form, since nobody takes them the other way round):

1. The tenant's value lock, a transaction-scoped advisory lock on
   (VALUE_LOCK_CLASS, hashtext(tenant)). Saves and copies hold it shared while
   they add references to channel values; removals that delete unreferenced
   values hold it exclusive. So a value is only collected when no transaction
   is about to reference it, and a save that starts after a collection sees
   the value gone (and refuses a reference to it) instead of pointing at
   nothing. Saves of one tenant never wait for each other on it.
2. The execution's row in `cp_executions` (sequence counter and ownership
   epoch): saves, claims, copies and removals lock it FOR UPDATE, writes FOR
   SHARE. A write or save that took it checks fences and tombstones in a
   later statement, with a snapshot that already sees whatever the previous
   holder committed; a claim or a deletion waits for in-flight writes.

Rows of several executions are locked in `execution_id` order.

Text keys are `COLLATE "C"`: byte order, as in SQLite and Python, so that
listings sort exactly like `Position`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import asyncpg

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.checkpoints.models import (
    ChannelEntry,
    ChannelValueMissingError,
    CheckpointDeletedError,
    CheckpointDraft,
    CheckpointQuery,
    OwnershipSupersededError,
    PendingWrite,
    Position,
    ReadOptions,
    RemovalCounts,
    SaveOutcome,
    StoredCheckpoint,
    WritesDraft,
    WritesOutcome,
)
from statekeeper.core.checkpoints.store import CheckpointStore
from statekeeper.core.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.schema_upgrades import Payload
from statekeeper.storage.codec import dumps
from statekeeper.storage.postgres.checkpoints_schema import (
    CLAIM,
    COPY,
    DELETED,
    FORGET_TOMBSTONES,
    MIGRATION_LOCK_KEY,
    MIGRATIONS,
    NEEDS_EXCLUSIVE,
    NEVER_ISSUED,
    NO_CHECKPOINT,
    NO_FREE_ID,
    REMOVE,
    REMOVE_EXECUTION,
    SCHEMA_TABLE,
    SUPERSEDED,
    VALUE_LOCK_CLASS,
    VALUE_MISSING,
)
from statekeeper.storage.postgres.erasure import run_steps
from statekeeper.storage.postgres.migrations import apply_migrations
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.shared.checkpoints import (
    ListDialect,
    add,
    checkpoint_from_row,
    list_filter,
)
from statekeeper.storage.shared.erasure import POSTGRES, checkpoint_steps
from statekeeper.storage.sql import AUDIT_COLUMNS, Where, audit_values, postgres_mark

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

log = logging.getLogger(__name__)


_NEWEST_FIRST = "c.create_time_ns DESC, c.sequence DESC, c.execution_id DESC, c.namespace DESC"
# Executions pruned per transaction, so that other work interleaves.
_PRUNE_BATCH = 50


async def insert_audit(
    conn: Connection, tenant: str, audit: AuditRecord | None, revision: int
) -> None:
    """Writes `audit` (if any) with `revision` into audit_log, in the
    caller's transaction."""
    if audit is not None:
        await conn.execute(
            f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
            *audit_values(replace(audit, revision=revision), tenant),
        )


def audit_arguments(audit: AuditRecord | None) -> list[object]:
    """principal, service, method, entity_type, entity_id, time, summary of
    `audit` (all None without one), for statements that insert the record
    themselves and compute its revision in SQL."""
    if audit is None:
        return [None] * 7
    return [*_audit_names(audit), audit.time, audit.summary]


def _audit_names(audit: AuditRecord) -> list[str]:
    """Who did what to which entity: the text fields every audit argument
    list starts with."""
    return [audit.principal, audit.service, audit.method, audit.entity_type, audit.entity_id]


class PostgresCheckpointStore(CheckpointStore):
    """CheckpointStore on the PostgreSQL durable tier (see the module doc
    for the locking protocol that makes it safe across replicas)."""

    def __init__(self, db: PostgresStorage) -> None:
        self._db = db

    async def start(self) -> None:
        async with self._db.connection("checkpoint schema") as conn:
            await apply_migrations(conn, SCHEMA_TABLE, MIGRATION_LOCK_KEY, MIGRATIONS)

    async def close(self) -> None:
        """Nothing to release: the pool belongs to PostgresStorage."""

    # ----- saves and writes -------------------------------------------------------

    async def save_checkpoint(
        self,
        tenant: str,
        record: CheckpointDraft,
        fence_epoch: int,
        audit: AuditRecord | None = None,
    ) -> SaveOutcome:
        metadata = _metadata_json(record.metadata)
        async with self._db.connection("save checkpoint") as conn:
            try:
                return await _call_save(conn, tenant, record, metadata, fence_epoch, False, audit)
            except _ReplacementNeedsExclusiveLockError:
                # Replacing drops references, so it may collect values: again,
                # holding the tenant's value lock exclusively.
                return await _call_save(conn, tenant, record, metadata, fence_epoch, True, audit)

    async def put_writes(
        self,
        tenant: str,
        draft: WritesDraft,
        fence_epoch: int,
        audit: AuditRecord | None = None,
    ) -> WritesOutcome:
        writes = draft.writes
        async with self._db.connection("put writes") as conn:
            try:
                stored = await conn.fetchval(
                    _PUT_WRITES,
                    tenant,
                    draft.execution_id,
                    draft.namespace,
                    draft.checkpoint_id,
                    draft.task_id,
                    draft.task_path,
                    fence_epoch,
                    [write.index for write in writes],
                    [write.channel for write in writes],
                    [write.value.content_type for write in writes],
                    [write.value.schema_version for write in writes],
                    [write.value.data for write in writes],
                    *_audit_array(audit),
                )
            except asyncpg.PostgresError as exc:
                if getattr(exc, "sqlstate", "") == NO_CHECKPOINT:
                    raise NotFoundError(
                        f"execution {draft.execution_id!r} has no checkpoint"
                        f" {draft.checkpoint_id!r} in namespace {draft.namespace!r}"
                    ) from exc
                error = _domain_error(exc, draft.execution_id, fence_epoch)
                if error is None:
                    raise  # not a refusal: the connection layer maps it
                raise error from exc
        return WritesOutcome(int(stored), len(writes) - int(stored))

    async def claim_execution(
        self, tenant: str, execution_id: str, audit: AuditRecord | None = None
    ) -> int:
        async with self._db.connection("claim execution") as conn:
            epoch = await conn.fetchval(CLAIM, tenant, execution_id, *audit_arguments(audit))
        return int(epoch)

    # ----- reads ------------------------------------------------------------------

    async def get_checkpoint(
        self,
        tenant: str,
        execution_id: str,
        namespace: str,
        checkpoint_id: str | None,
        options: ReadOptions,
    ) -> StoredCheckpoint | None:
        params: list[Any] = [tenant, execution_id, namespace]
        if checkpoint_id is not None:
            params.append(checkpoint_id)
        sql = _get_checkpoint_sql(options, by_id=checkpoint_id is not None)
        async with self._db.connection("get checkpoint") as conn:
            row = await conn.fetchrow(sql, *params)
        return None if row is None else _checkpoint_from_row(row, options)

    async def list_checkpoints(
        self,
        tenant: str,
        query: CheckpointQuery,
        after: Position | None,
        limit: int,
        options: ReadOptions,
    ) -> list[StoredCheckpoint]:
        if any("\\u0000" in dumps(v) for v in query.metadata_filter.values()):
            return []  # no stored metadata can hold NUL (see _metadata_json)
        where = list_filter(tenant, query, after, _LIST_DIALECT)
        sql = (
            f"{_select_checkpoints(options)} WHERE {where.sql()}"
            f" ORDER BY {_NEWEST_FIRST} LIMIT {where.param(limit)}"
        )
        async with self._db.connection("list checkpoints") as conn:
            rows = await conn.fetch(sql, *where.params)
        return [_checkpoint_from_row(row, options) for row in rows]

    async def get_channel_values(
        self, tenant: str, content_hashes: Sequence[str]
    ) -> dict[str, Payload]:
        async with self._db.connection("get channel values") as conn:
            rows = await conn.fetch(
                "SELECT content_hash, content_type, schema_version, data FROM cp_blobs"
                " WHERE tenant = $1 AND content_hash = ANY($2::text[])",
                tenant,
                list(content_hashes),
            )
        return {row[0]: Payload(row[1], row[2], bytes(row[3])) for row in rows}

    # ----- removals and copies ------------------------------------------------------

    async def delete_execution(
        self, tenant: str, execution_id: str, now_ns: int, audit: AuditRecord | None = None
    ) -> RemovalCounts:
        async with self._db.transaction("delete execution") as conn:
            await _lock_values(conn, tenant, exclusive=True)
            last = await _lock_executions(conn, tenant, [execution_id])
            counts = await _remove_execution(conn, tenant, execution_id, now_ns)
            await insert_audit(conn, tenant, audit, last.get(execution_id, 0))
            return counts

    async def delete_runs(
        self,
        tenant: str,
        run_ids: Sequence[str],
        now_ns: int,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        async with self._db.transaction("delete runs") as conn:
            # Held exclusively, the value lock also keeps saves out, so the
            # checkpoints found here are all there are until commit.
            await _lock_values(conn, tenant, exclusive=True)
            rows = await conn.fetch(
                "SELECT execution_id, namespace, checkpoint_id FROM cp_checkpoints"
                " WHERE tenant = $1 AND run_id = ANY($2::text[])",
                tenant,
                list(run_ids),
            )
            keys = [(row[0], row[1], row[2]) for row in rows]
            last = await _lock_executions(conn, tenant, {key[0] for key in keys})
            await _audit_each_execution(conn, tenant, audit, last)
            return await _remove(conn, tenant, keys, tombstone_time_ns=now_ns)

    async def copy_execution(
        self,
        tenant: str,
        source_id: str,
        target_id: str,
        until_checkpoint_id: str | None,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        async with self._db.transaction("copy execution") as conn:
            await _lock_values(conn, tenant, exclusive=False)
            await conn.execute(
                "INSERT INTO cp_executions (tenant, execution_id) VALUES ($1, $2)"
                " ON CONFLICT (tenant, execution_id) DO NOTHING",
                tenant,
                target_id,
            )
            last = await _lock_executions(conn, tenant, [source_id, target_id])
            counts = await _copy(conn, tenant, source_id, target_id, until_checkpoint_id)
            revision = await conn.fetchval(
                "UPDATE cp_executions SET last_sequence = greatest(last_sequence, $3)"
                " WHERE tenant = $1 AND execution_id = $2 RETURNING last_sequence",
                tenant,
                target_id,
                last.get(source_id, 0),
            )
            await insert_audit(conn, tenant, audit, int(revision))
            return counts

    async def prune(
        self,
        tenant: str,
        execution_ids: Sequence[str] | None,
        keep_last: int,
        dry_run: bool,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        targets = (
            sorted(set(execution_ids))
            if execution_ids is not None
            else await self._executions_with_checkpoints(tenant)
        )
        if dry_run:
            # One transaction, rolled back: counts see every batch at once,
            # so values shared between executions are counted right.
            async with self._db.connection("prune (dry run)") as conn:
                transaction = conn.transaction()
                await transaction.start()
                try:
                    return await _prune(conn, tenant, targets, keep_last, None)
                finally:
                    await transaction.rollback()
        total = RemovalCounts()
        for start in range(0, len(targets), _PRUNE_BATCH):
            batch = targets[start : start + _PRUNE_BATCH]
            async with self._db.transaction("prune") as conn:
                total = add(total, await _prune(conn, tenant, batch, keep_last, audit))
        return total

    async def forget_tombstones(self, older_than_ns: int, limit: int) -> int:
        async with self._db.transaction("forget tombstones") as conn:
            candidates = await conn.fetch(
                "SELECT tenant, execution_id, namespace, checkpoint_id FROM cp_tombstones"
                " WHERE delete_time_ns < $1 ORDER BY delete_time_ns LIMIT $2",
                older_than_ns,
                limit,
            )
            if not candidates:
                return 0
            # Executions another transaction (or replica's sweeper) holds are
            # left for the next sweep rather than waited for.
            pairs = sorted({(row[0], row[1]) for row in candidates})
            locked = await conn.fetch(
                "SELECT tenant, execution_id FROM cp_executions WHERE (tenant, execution_id)"
                " IN (SELECT * FROM unnest($1::text[], $2::text[]))"
                " ORDER BY tenant, execution_id FOR UPDATE SKIP LOCKED",
                [pair[0] for pair in pairs],
                [pair[1] for pair in pairs],
            )
            held = {(row[0], row[1]) for row in locked}
            chosen = [row for row in candidates if (row[0], row[1]) in held]
            forgotten = await conn.fetchval(FORGET_TOMBSTONES, *_columns(chosen, 4), older_than_ns)
            return int(forgotten)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        steps = checkpoint_steps(POSTGRES, tenant, subject, VALUE_LOCK_CLASS)
        erasure = await run_steps(self._db, steps, dry_run)
        return erasure.counts

    async def _executions_with_checkpoints(self, tenant: str) -> list[str]:
        async with self._db.connection("list executions") as conn:
            rows = await conn.fetch(
                "SELECT DISTINCT execution_id FROM cp_checkpoints WHERE tenant = $1"
                " ORDER BY execution_id",
                tenant,
            )
        return [row[0] for row in rows]


# ----- saves and writes: one call each ---------------------------------------------------


_SAVE = "SELECT * FROM cp_save(" + ", ".join(f"${n}" for n in range(1, 25)) + ")"
_PUT_WRITES = "SELECT cp_put_writes(" + ", ".join(f"${n}" for n in range(1, 15)) + ")"


async def _call_save(
    conn: Connection,
    tenant: str,
    record: CheckpointDraft,
    metadata: str,
    fence_epoch: int,
    exclusive: bool,
    audit: AuditRecord | None,
) -> SaveOutcome:
    inline: dict[str, Payload] = {
        entry.content_hash: entry.value
        for entry in record.channels.values()
        if entry.value is not None
    }
    channels = list(record.channels.items())
    try:
        row = await conn.fetchrow(
            _SAVE,
            tenant,
            record.execution_id,
            record.namespace,
            record.checkpoint_id,
            record.parent_checkpoint_id,
            record.create_time_ns,
            record.step,
            record.step_name,
            record.run_id,
            record.state.content_type,
            record.state.schema_version,
            record.state.data,
            metadata,
            fence_epoch,
            exclusive,
            [name for name, _ in channels],
            [entry.version for _, entry in channels],
            [entry.content_hash for _, entry in channels],
            list(inline),
            [value.content_type for value in inline.values()],
            [value.schema_version for value in inline.values()],
            [value.data for value in inline.values()],
            *_audit_array(audit),
        )
    except asyncpg.PostgresError as exc:
        error = _domain_error(exc, record.execution_id, fence_epoch)
        if error is None:
            raise  # not a refusal: the connection layer maps it
        raise error from exc
    assert row is not None
    return SaveOutcome(row[0], int(row[1]), record.create_time_ns, bool(row[2]))


def _audit_array(audit: AuditRecord | None) -> tuple[list[str] | None, float | None]:
    """The audit record as the functions take it: text fields and time."""
    if audit is None:
        return None, None
    return [*_audit_names(audit), audit.summary], audit.time


def _domain_error(
    exc: asyncpg.PostgresError, execution_id: str, fence_epoch: int
) -> Exception | None:
    """The domain error a function's SQLSTATE stands for; None for any
    other failure."""
    code = getattr(exc, "sqlstate", "")
    detail = getattr(exc, "detail", "") or ""
    if code == SUPERSEDED:
        return OwnershipSupersededError(execution_id, fence_epoch, int(detail))
    if code == NEVER_ISSUED:
        return InvalidArgumentError("ownership_epoch", "was never issued for this execution")
    if code == DELETED:
        return CheckpointDeletedError(execution_id, detail)
    if code == VALUE_MISSING:
        return ChannelValueMissingError(detail, getattr(exc, "hint", "") or "value missing")
    if code == NEEDS_EXCLUSIVE:
        return _ReplacementNeedsExclusiveLockError()
    if code == NO_FREE_ID:
        return AlreadyExistsError("could not assign a free checkpoint id; send one")
    return None


class _ReplacementNeedsExclusiveLockError(Exception):
    """A save found its id taken while holding the value lock shared."""


def _metadata_json(metadata: Mapping[str, Any]) -> str:
    """The metadata as JSON for a jsonb column, which cannot hold NUL."""
    text = dumps(dict(metadata))
    if "\\u0000" in text:
        raise InvalidArgumentError(
            "checkpoint.metadata", "must not contain NUL characters (U+0000)"
        )
    return text


# ----- reads --------------------------------------------------------------------------


@functools.cache
def _get_checkpoint_sql(options: ReadOptions, by_id: bool) -> str:
    """The statement of one checkpoint read: the newest of a namespace, or
    ($4) the one with that id. Built once per shape, not on every read."""
    where = "c.tenant = $1 AND c.execution_id = $2 AND c.namespace = $3"
    if by_id:
        where += " AND c.checkpoint_id = $4"
    return (
        f"{_select_checkpoints(options)} WHERE {where}"
        " ORDER BY c.create_time_ns DESC, c.sequence DESC LIMIT 1"
    )


@functools.cache
def _select_checkpoints(options: ReadOptions) -> str:
    """SELECT of checkpoints `c` with their channels (and values) and writes
    aggregated into parallel arrays, one row per checkpoint."""
    channel_values = (
        ", array_agg(b.content_type) AS value_types, array_agg(b.schema_version)"
        " AS value_versions, array_agg(b.data) AS value_data"
        if options.include_values
        else ""
    )
    blobs = (
        " JOIN cp_blobs b ON b.tenant = x.tenant AND b.content_hash = x.content_hash"
        if options.include_values
        else ""
    )
    same_checkpoint = (
        "WHERE {t}.tenant = c.tenant AND {t}.execution_id = c.execution_id"
        " AND {t}.namespace = c.namespace AND {t}.checkpoint_id = c.checkpoint_id"
    )
    sql = (
        "SELECT c.execution_id, c.namespace, c.checkpoint_id, c.sequence, c.create_time_ns,"
        " c.parent_checkpoint_id, c.step, c.step_name, c.run_id, c.state_type,"
        " c.state_version, c.state_data, c.metadata::text AS metadata, ch.*"
        f"{', w.*' if options.include_writes else ''} FROM cp_checkpoints c"
        " CROSS JOIN LATERAL (SELECT array_agg(x.channel) AS channel_names,"
        " array_agg(x.version) AS channel_versions, array_agg(x.content_hash) AS channel_hashes"
        f"{channel_values} FROM cp_channels x{blobs} {same_checkpoint.format(t='x')}) ch"
    )
    if options.include_writes:
        order = " ORDER BY y.task_path, y.task_id, y.write_index"
        columns = ", ".join(
            f"array_agg(y.{name}{order}) AS write_{name}"
            for name in (
                "task_id",
                "task_path",
                "write_index",
                "channel",
                "value_type",
                "value_version",
                "value_data",
            )
        )
        sql += (
            f" CROSS JOIN LATERAL (SELECT {columns} FROM cp_writes y"
            f" {same_checkpoint.format(t='y')}) w"
        )
    return sql


def _checkpoint_from_row(row: asyncpg.Record, options: ReadOptions) -> StoredCheckpoint:
    channels = _channels_from_row(row, options.include_values)
    writes = _writes_from_row(row) if options.include_writes else ()
    return checkpoint_from_row(row, channels, writes)


def _channels_from_row(row: asyncpg.Record, include_values: bool) -> dict[str, ChannelEntry]:
    names = row["channel_names"] or []
    versions, hashes = row["channel_versions"], row["channel_hashes"]
    if not include_values:
        return {name: ChannelEntry(versions[i], None, hashes[i]) for i, name in enumerate(names)}
    types, schema_versions, data = row["value_types"], row["value_versions"], row["value_data"]
    return {
        name: ChannelEntry(
            versions[i], Payload(types[i], schema_versions[i], bytes(data[i])), hashes[i]
        )
        for i, name in enumerate(names)
    }


def _writes_from_row(row: asyncpg.Record) -> tuple[PendingWrite, ...]:
    task_ids = row["write_task_id"] or []
    return tuple(
        PendingWrite(
            task_id,
            row["write_task_path"][i],
            int(row["write_write_index"][i]),
            row["write_channel"][i],
            Payload(
                row["write_value_type"][i],
                row["write_value_version"][i],
                bytes(row["write_value_data"][i]),
            ),
        )
        for i, task_id in enumerate(task_ids)
    )


def _metadata_equals(where: Where, key: str, value: Any) -> None:
    # jsonb equality: numbers by value (1 = 1.0), objects and arrays by
    # content, true never equal to 1; an absent key is NULL, never equal.
    where.add("c.metadata -> {}::text = {}::jsonb", key, dumps(value))


_LIST_DIALECT = ListDialect(postgres_mark, "::text", "::bigint", _metadata_equals)


# ----- removals and copies ---------------------------------------------------------------


async def _lock_values(conn: Connection, tenant: str, exclusive: bool) -> None:
    lock = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    await conn.execute(f"SELECT {lock}($1, hashtext($2))", VALUE_LOCK_CLASS, tenant)


async def _lock_executions(
    conn: Connection, tenant: str, execution_ids: Iterable[str]
) -> dict[str, int]:
    """Locks the executions' rows FOR UPDATE in id order; returns their
    sequence counters (executions without a row are absent)."""
    rows = await conn.fetch(
        "SELECT execution_id, last_sequence FROM cp_executions WHERE tenant = $1"
        " AND execution_id = ANY($2::text[]) ORDER BY execution_id FOR UPDATE",
        tenant,
        sorted(set(execution_ids)),
    )
    return {row[0]: int(row[1]) for row in rows}


async def _remove_execution(
    conn: Connection, tenant: str, execution_id: str, now_ns: int
) -> RemovalCounts:
    row = await conn.fetchrow(REMOVE_EXECUTION, tenant, execution_id, now_ns)
    assert row is not None
    collected = await _collect_garbage(conn, tenant, row["hashes"])
    return RemovalCounts(int(row["checkpoints"]), int(row["writes"]), collected)


async def _remove(
    conn: Connection,
    tenant: str,
    keys: Sequence[tuple[str, str, str]],
    tombstone_time_ns: int | None,
) -> RemovalCounts:
    """Removes the checkpoints `(execution, namespace, id)` with their
    writes, channel rows and newly unreferenced values. The caller holds the
    value lock exclusively and the executions' rows."""
    if not keys:
        return RemovalCounts()
    row = await conn.fetchrow(REMOVE, tenant, *_columns(keys, 3), tombstone_time_ns)
    assert row is not None
    collected = await _collect_garbage(conn, tenant, row["hashes"])
    return RemovalCounts(int(row["checkpoints"]), int(row["writes"]), collected)


async def _collect_garbage(conn: Connection, tenant: str, hashes: Sequence[str]) -> int:
    """Deletes the values among `hashes` that no channel row references."""
    if not hashes:
        return 0
    status = await conn.execute(
        "DELETE FROM cp_blobs b WHERE b.tenant = $1 AND b.content_hash = ANY($2::text[])"
        " AND NOT EXISTS (SELECT 1 FROM cp_channels x WHERE x.tenant = $1"
        " AND x.content_hash = b.content_hash)",
        tenant,
        list(hashes),
    )
    return int(status.split()[-1])


async def _prune(
    conn: Connection,
    tenant: str,
    execution_ids: Sequence[str],
    keep_last: int,
    audit: AuditRecord | None,
) -> RemovalCounts:
    await _lock_values(conn, tenant, exclusive=True)
    last = await _lock_executions(conn, tenant, execution_ids)
    rows = await conn.fetch(
        "SELECT execution_id, namespace, checkpoint_id FROM (SELECT execution_id, namespace,"
        " checkpoint_id, row_number() OVER (PARTITION BY execution_id, namespace"
        " ORDER BY create_time_ns DESC, sequence DESC) AS newest_rank FROM cp_checkpoints"
        " WHERE tenant = $1 AND execution_id = ANY($2::text[])) AS ranked"
        " WHERE newest_rank > $3",
        tenant,
        list(execution_ids),
        keep_last,
    )
    doomed = [(row[0], row[1], row[2]) for row in rows]
    changed = {key[0] for key in doomed}
    await _audit_each_execution(
        conn, tenant, audit, {e: s for e, s in last.items() if e in changed}
    )
    return await _remove(conn, tenant, doomed, tombstone_time_ns=None)


async def _audit_each_execution(
    conn: Connection, tenant: str, audit: AuditRecord | None, last: Mapping[str, int]
) -> None:
    """One record per execution, in id order, revision its last sequence."""
    if audit is None or not last:
        return
    ordered = sorted(last.items())
    await conn.executemany(
        f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
        [
            audit_values(audit.for_entity(tenant, execution_id, sequence), tenant)
            for execution_id, sequence in ordered
        ],
    )


async def _copy(
    conn: Connection,
    tenant: str,
    source_id: str,
    target_id: str,
    until_checkpoint_id: str | None,
) -> RemovalCounts:
    busy = await conn.fetchval(
        "SELECT 1 FROM cp_checkpoints WHERE tenant = $1 AND execution_id = $2 LIMIT 1",
        tenant,
        target_id,
    )
    if busy:
        raise AlreadyExistsError(f"execution {target_id!r} already has checkpoints")
    bound: tuple[int | None, int | None] = (None, None)
    if until_checkpoint_id is not None:
        row = await conn.fetchrow(
            "SELECT create_time_ns, sequence FROM cp_checkpoints WHERE tenant = $1"
            " AND execution_id = $2 AND namespace = '' AND checkpoint_id = $3",
            tenant,
            source_id,
            until_checkpoint_id,
        )
        if row is None:
            raise NotFoundError(
                f"until_checkpoint_id {until_checkpoint_id!r} names no root-namespace"
                f" checkpoint of execution {source_id!r}"
            )
        bound = (int(row[0]), int(row[1]))
    row = await conn.fetchrow(COPY, tenant, source_id, target_id, *bound)
    assert row is not None
    if row["checkpoints"] == 0:
        raise NotFoundError(f"execution {source_id!r} has no checkpoints to copy")
    return RemovalCounts(int(row["checkpoints"]), int(row["writes"]), 0)


def _columns(rows: Sequence[Any], width: int) -> list[list[Any]]:
    """Rows as `width` parallel lists (arrays for unnest)."""
    return [[row[index] for row in rows] for index in range(width)]
