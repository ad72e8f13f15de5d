"""Embedded checkpoint store: tables in the embedded SQLite file.

Runs every transaction on the database thread of the shared
`EmbeddedStorage` (`run(work)`), so checkpoint, session and workflow writes
never interleave. Its tables are versioned by their own migrations table,
`checkpoint_schema_migrations`, independent of the session schema.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

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
from statekeeper.core.checkpoints.service import server_checkpoint_id
from statekeeper.core.checkpoints.store import CheckpointStore
from statekeeper.core.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.schema_upgrades import Payload
from statekeeper.storage.codec import dumps
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.embedded.checkpoints_schema import MIGRATIONS, SCHEMA_TABLE
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.migrations import apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.checkpoints import (
    ListDialect,
    add,
    checkpoint_from_row,
    list_filter,
)
from statekeeper.storage.shared.erasure import SQLITE, checkpoint_steps
from statekeeper.storage.sql import Where, audit_values, sqlite_mark

# Every column of a checkpoint but its tenant and execution.
_CHECKPOINT_BODY = (
    "namespace, checkpoint_id, sequence, create_time_ns, parent_checkpoint_id, step, step_name,"
    " run_id, state_type, state_version, state_data, metadata"
)
_CHECKPOINT_COLUMNS = f"execution_id, {_CHECKPOINT_BODY}"
_KEY = "tenant = ? AND execution_id = ? AND namespace = ? AND checkpoint_id = ?"
_NEWEST_FIRST = "create_time_ns DESC, sequence DESC, execution_id DESC, namespace DESC"
# SQLite caps bound parameters per statement; IN lists are sent in chunks.
_CHUNK = 400
# Executions pruned per transaction, so that other work interleaves.
_PRUNE_BATCH = 50


class EmbeddedCheckpointStore(CheckpointStore):
    """CheckpointStore on the embedded SQLite file."""

    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend

    async def start(self) -> None:
        await self._backend.run(lambda db: apply_migrations(db, SCHEMA_TABLE, MIGRATIONS))

    async def save_checkpoint(
        self,
        tenant: str,
        record: CheckpointDraft,
        fence_epoch: int,
        audit: AuditRecord | None = None,
    ) -> SaveOutcome:
        def work(db: sqlite3.Connection) -> SaveOutcome:
            with db:
                outcome = _save(db, tenant, record, fence_epoch)
                insert_audit(db, tenant, audit, revision=outcome.sequence)
                return outcome

        return await self._backend.run(work)

    async def get_checkpoint(
        self,
        tenant: str,
        execution_id: str,
        namespace: str,
        checkpoint_id: str | None,
        options: ReadOptions,
    ) -> StoredCheckpoint | None:
        if checkpoint_id is None:
            sql = (
                f"SELECT {_CHECKPOINT_COLUMNS} FROM cp_checkpoints WHERE tenant = ?"
                " AND execution_id = ? AND namespace = ? ORDER BY create_time_ns DESC,"
                " sequence DESC LIMIT 1"
            )
            params: tuple[str, ...] = (tenant, execution_id, namespace)
        else:
            sql = f"SELECT {_CHECKPOINT_COLUMNS} FROM cp_checkpoints WHERE {_KEY}"
            params = (tenant, execution_id, namespace, checkpoint_id)

        def work(db: sqlite3.Connection) -> StoredCheckpoint | None:
            row = db.execute(sql, params).fetchone()
            return None if row is None else _checkpoint_from_row(db, tenant, row, options)

        return await self._backend.run(work)

    async def list_checkpoints(
        self,
        tenant: str,
        query: CheckpointQuery,
        after: Position | None,
        limit: int,
        options: ReadOptions,
    ) -> list[StoredCheckpoint]:
        where = list_filter(tenant, query, after, _LIST_DIALECT)
        sql = (
            f"SELECT {_CHECKPOINT_COLUMNS} FROM cp_checkpoints AS c WHERE {where.sql()}"
            f" ORDER BY {_NEWEST_FIRST} LIMIT {where.param(limit)}"
        )
        params = where.params

        def work(db: sqlite3.Connection) -> list[StoredCheckpoint]:
            rows = db.execute(sql, params).fetchall()
            return [_checkpoint_from_row(db, tenant, row, options) for row in rows]

        return await self._backend.run(work)

    async def put_writes(
        self,
        tenant: str,
        draft: WritesDraft,
        fence_epoch: int,
        audit: AuditRecord | None = None,
    ) -> WritesOutcome:
        def work(db: sqlite3.Connection) -> WritesOutcome:
            with db:
                outcome, sequence = _put_writes(db, tenant, draft, fence_epoch)
                insert_audit(db, tenant, audit, revision=sequence)
                return outcome

        return await self._backend.run(work)

    async def get_channel_values(
        self, tenant: str, content_hashes: Sequence[str]
    ) -> dict[str, Payload]:
        def work(db: sqlite3.Connection) -> dict[str, Payload]:
            found: dict[str, Payload] = {}
            for chunk in _chunks(content_hashes):
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    "SELECT content_hash, content_type, schema_version, data FROM cp_blobs"
                    f" WHERE tenant = ? AND content_hash IN ({marks})",
                    (tenant, *chunk),
                )
                for row in rows:
                    found[row[0]] = Payload(row[1], row[2], bytes(row[3]))
            return found

        return await self._backend.run(work)

    async def delete_execution(
        self, tenant: str, execution_id: str, now_ns: int, audit: AuditRecord | None = None
    ) -> RemovalCounts:
        def work(db: sqlite3.Connection) -> RemovalCounts:
            with db:
                counts = _delete_execution(db, tenant, execution_id, now_ns)
                last = _last_sequence(db, tenant, execution_id)
                insert_audit(db, tenant, audit, revision=last)
                return counts

        return await self._backend.run(work)

    async def delete_runs(
        self,
        tenant: str,
        run_ids: Sequence[str],
        now_ns: int,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        def work(db: sqlite3.Connection) -> RemovalCounts:
            with db:
                keys: list[tuple[str, str, str]] = []
                for chunk in _chunks(run_ids):
                    marks = ",".join("?" * len(chunk))
                    keys.extend(
                        db.execute(
                            "SELECT execution_id, namespace, checkpoint_id FROM cp_checkpoints"
                            f" WHERE tenant = ? AND run_id IN ({marks})",
                            (tenant, *chunk),
                        ).fetchall()
                    )
                _audit_each_execution(db, tenant, audit, {key[0] for key in keys})
                return _remove(db, tenant, keys, tombstone_time_ns=now_ns)

        return await self._backend.run(work)

    async def copy_execution(
        self,
        tenant: str,
        source_id: str,
        target_id: str,
        until_checkpoint_id: str | None,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        def work(db: sqlite3.Connection) -> RemovalCounts:
            with db:
                counts = _copy(db, tenant, source_id, target_id, until_checkpoint_id)
                insert_audit(db, tenant, audit, revision=_last_sequence(db, tenant, target_id))
                return counts

        return await self._backend.run(work)

    async def prune(
        self,
        tenant: str,
        execution_ids: Sequence[str] | None,
        keep_last: int,
        dry_run: bool,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        targets = (
            list(execution_ids)
            if execution_ids is not None
            else await self._backend.run(lambda db: _executions_with_checkpoints(db, tenant))
        )
        if dry_run:
            # One transaction, rolled back: counts see every batch at once,
            # so values shared between executions are counted right.
            return await self._backend.run(
                lambda db: _dry_run_prune(db, tenant, targets, keep_last)
            )
        total = RemovalCounts()
        for start in range(0, len(targets), _PRUNE_BATCH):
            batch = targets[start : start + _PRUNE_BATCH]

            def work(db: sqlite3.Connection, batch: list[str] = batch) -> RemovalCounts:
                with db:
                    return _prune(db, tenant, batch, keep_last, audit)

            total = add(total, await self._backend.run(work))
        return total

    async def claim_execution(
        self, tenant: str, execution_id: str, audit: AuditRecord | None = None
    ) -> int:
        def work(db: sqlite3.Connection) -> int:
            with db:
                row = db.execute(
                    "INSERT INTO cp_executions (tenant, execution_id, ownership_epoch)"
                    " VALUES (?, ?, 1) ON CONFLICT (tenant, execution_id)"
                    " DO UPDATE SET ownership_epoch = ownership_epoch + 1"
                    " RETURNING ownership_epoch",
                    (tenant, execution_id),
                ).fetchone()
                insert_audit(db, tenant, audit, revision=int(row[0]))
                return int(row[0])

        return await self._backend.run(work)

    async def forget_tombstones(self, older_than_ns: int, limit: int) -> int:
        def work(db: sqlite3.Connection) -> int:
            with db:
                doomed = db.execute(
                    "SELECT rowid, tenant, execution_id FROM cp_tombstones"
                    " WHERE delete_time_ns < ? LIMIT ?",
                    (older_than_ns, limit),
                ).fetchall()
                db.executemany(
                    "DELETE FROM cp_tombstones WHERE rowid = ?", [(row[0],) for row in doomed]
                )
                for tenant, execution_id in {(row[1], row[2]) for row in doomed}:
                    _forget_idle_execution(db, tenant, execution_id)
                return len(doomed)

        return await self._backend.run(work)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        steps = checkpoint_steps(SQLITE, tenant, subject)
        erasure = await run_steps(self._backend, steps, dry_run)
        return erasure.counts


# ----- save and writes -----------------------------------------------------------


def _save(
    db: sqlite3.Connection, tenant: str, record: CheckpointDraft, fence_epoch: int
) -> SaveOutcome:
    execution_id, namespace = record.execution_id, record.namespace
    _check_fence(db, tenant, execution_id, fence_epoch)
    _check_not_deleted(db, tenant, record, [record.parent_checkpoint_id, record.checkpoint_id])
    checkpoint_id, sequence, replaced = _identity(db, tenant, record)
    resolved = [
        (channel, entry.version, _resolve_channel(db, tenant, record, channel, entry))
        for channel, entry in record.channels.items()
    ]
    key = (tenant, execution_id, namespace, checkpoint_id)
    released = _release_channels(db, key) if replaced else set()
    db.execute(
        "INSERT OR REPLACE INTO cp_checkpoints (tenant, execution_id, namespace, checkpoint_id,"
        " sequence, create_time_ns, parent_checkpoint_id, step, step_name, run_id, state_type,"
        " state_version, state_data, metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            *key,
            sequence,
            record.create_time_ns,
            record.parent_checkpoint_id,
            record.step,
            record.step_name,
            record.run_id,
            record.state.content_type,
            record.state.schema_version,
            record.state.data,
            dumps(dict(record.metadata)),
        ),
    )
    db.executemany(
        "INSERT INTO cp_channels (tenant, execution_id, namespace, checkpoint_id, channel,"
        " version, content_hash) VALUES (?,?,?,?,?,?,?)",
        [(*key, channel, version, content_hash) for channel, version, content_hash in resolved],
    )
    _collect_garbage(db, tenant, released)
    return SaveOutcome(checkpoint_id, sequence, record.create_time_ns, replaced)


def _identity(
    db: sqlite3.Connection, tenant: str, record: CheckpointDraft
) -> tuple[str, int, bool]:
    """(checkpoint id, sequence, whether an existing checkpoint is replaced)."""
    if record.checkpoint_id:
        row = db.execute(
            f"SELECT sequence FROM cp_checkpoints WHERE {_KEY}",
            (tenant, record.execution_id, record.namespace, record.checkpoint_id),
        ).fetchone()
        if row is not None:
            return record.checkpoint_id, int(row[0]), True
        return record.checkpoint_id, _next_sequence(db, tenant, record.execution_id), False
    # A client may have picked an id that looks like a server id; skip it.
    for _ in range(16):
        sequence = _next_sequence(db, tenant, record.execution_id)
        candidate = server_checkpoint_id(sequence)
        taken = db.execute(
            f"SELECT 1 FROM cp_checkpoints WHERE {_KEY}",
            (tenant, record.execution_id, record.namespace, candidate),
        ).fetchone()
        if taken is None:
            return candidate, sequence, False
    raise AlreadyExistsError("could not assign a free checkpoint id; send one")


def _next_sequence(db: sqlite3.Connection, tenant: str, execution_id: str) -> int:
    row = db.execute(
        "INSERT INTO cp_executions (tenant, execution_id, last_sequence) VALUES (?, ?, 1)"
        " ON CONFLICT (tenant, execution_id) DO UPDATE SET last_sequence = last_sequence + 1"
        " RETURNING last_sequence",
        (tenant, execution_id),
    ).fetchone()
    return int(row[0])


def _resolve_channel(
    db: sqlite3.Connection,
    tenant: str,
    record: CheckpointDraft,
    channel: str,
    entry: ChannelEntry,
) -> str:
    """The content hash the channel refers to, storing an inline value."""
    if entry.value is not None:
        value = entry.value
        db.execute(
            "INSERT OR IGNORE INTO cp_blobs (tenant, content_hash, content_type, schema_version,"
            " data) VALUES (?,?,?,?,?)",
            (tenant, entry.content_hash, value.content_type, value.schema_version, value.data),
        )
        return entry.content_hash
    if entry.content_hash:
        known = db.execute(
            "SELECT 1 FROM cp_blobs WHERE tenant = ? AND content_hash = ?",
            (tenant, entry.content_hash),
        ).fetchone()
        if known is None:
            raise ChannelValueMissingError(channel, f"no value has hash {entry.content_hash}")
        return entry.content_hash
    row = db.execute(
        "SELECT content_hash FROM cp_channels WHERE tenant = ? AND execution_id = ?"
        " AND namespace = ? AND channel = ? AND version = ? ORDER BY rowid DESC LIMIT 1",
        (tenant, record.execution_id, record.namespace, channel, entry.version),
    ).fetchone()
    if row is None:
        raise ChannelValueMissingError(channel, f"no value is stored for version {entry.version!r}")
    return str(row[0])


def _release_channels(db: sqlite3.Connection, key: tuple[str, str, str, str]) -> set[str]:
    """Drops a checkpoint's channel rows; returns the hashes they held."""
    hashes = {
        row[0] for row in db.execute(f"SELECT content_hash FROM cp_channels WHERE {_KEY}", key)
    }
    db.execute(f"DELETE FROM cp_channels WHERE {_KEY}", key)
    return hashes


def _put_writes(
    db: sqlite3.Connection, tenant: str, draft: WritesDraft, fence_epoch: int
) -> tuple[WritesOutcome, int]:
    """Stores the writes; returns the outcome and the checkpoint's sequence."""
    _check_fence(db, tenant, draft.execution_id, fence_epoch)
    _check_not_deleted(db, tenant, draft, [draft.checkpoint_id])
    key = (tenant, draft.execution_id, draft.namespace, draft.checkpoint_id)
    target = db.execute(f"SELECT sequence FROM cp_checkpoints WHERE {_KEY}", key).fetchone()
    if target is None:
        raise NotFoundError(
            f"execution {draft.execution_id!r} has no checkpoint {draft.checkpoint_id!r}"
            f" in namespace {draft.namespace!r}"
        )
    stored = duplicates = 0
    for write in draft.writes:
        # index >= 0: first write wins; special channels (< 0) replace.
        verb = "INSERT OR IGNORE" if write.index >= 0 else "INSERT OR REPLACE"
        inserted = db.execute(
            f"{verb} INTO cp_writes (tenant, execution_id, namespace, checkpoint_id, task_id,"
            " write_index, task_path, channel, value_type, value_version, value_data)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                *key,
                draft.task_id,
                write.index,
                draft.task_path,
                write.channel,
                write.value.content_type,
                write.value.schema_version,
                write.value.data,
            ),
        ).rowcount
        stored += inserted
        duplicates += 1 - inserted
    return WritesOutcome(stored, duplicates), int(target[0])


def _check_fence(db: sqlite3.Connection, tenant: str, execution_id: str, epoch: int) -> None:
    if epoch == 0:
        return
    row = db.execute(
        "SELECT ownership_epoch FROM cp_executions WHERE tenant = ? AND execution_id = ?",
        (tenant, execution_id),
    ).fetchone()
    current = int(row[0]) if row else 0
    if epoch < current:
        raise OwnershipSupersededError(execution_id, epoch, current)
    if epoch > current:
        raise InvalidArgumentError("ownership_epoch", "was never issued for this execution")


def _check_not_deleted(
    db: sqlite3.Connection,
    tenant: str,
    target: CheckpointDraft | WritesDraft,
    checkpoint_ids: Iterable[str],
) -> None:
    for checkpoint_id in checkpoint_ids:
        if not checkpoint_id:
            continue
        row = db.execute(
            f"SELECT 1 FROM cp_tombstones WHERE {_KEY}",
            (tenant, target.execution_id, target.namespace, checkpoint_id),
        ).fetchone()
        if row is not None:
            raise CheckpointDeletedError(target.execution_id, checkpoint_id)


# ----- reads ---------------------------------------------------------------------


def _checkpoint_from_row(
    db: sqlite3.Connection, tenant: str, row: sqlite3.Row, options: ReadOptions
) -> StoredCheckpoint:
    key = (tenant, row["execution_id"], row["namespace"], row["checkpoint_id"])
    channels = _read_channels(db, key, options.include_values)
    writes = _read_writes(db, key) if options.include_writes else ()
    return checkpoint_from_row(row, channels, writes)


def _read_channels(
    db: sqlite3.Connection, key: tuple[str, str, str, str], include_values: bool
) -> dict[str, ChannelEntry]:
    if not include_values:
        rows = db.execute(
            f"SELECT channel, version, content_hash FROM cp_channels WHERE {_KEY}", key
        )
        return {row[0]: ChannelEntry(row[1], None, row[2]) for row in rows}
    rows = db.execute(
        "SELECT ch.channel, ch.version, ch.content_hash, b.content_type, b.schema_version,"
        " b.data FROM cp_channels AS ch JOIN cp_blobs AS b ON b.tenant = ch.tenant"
        " AND b.content_hash = ch.content_hash WHERE ch.tenant = ? AND ch.execution_id = ?"
        " AND ch.namespace = ? AND ch.checkpoint_id = ?",
        key,
    )
    return {
        row[0]: ChannelEntry(row[1], Payload(row[3], row[4], bytes(row[5])), row[2]) for row in rows
    }


def _read_writes(
    db: sqlite3.Connection, key: tuple[str, str, str, str]
) -> tuple[PendingWrite, ...]:
    rows = db.execute(
        "SELECT task_id, task_path, write_index, channel, value_type, value_version, value_data"
        f" FROM cp_writes WHERE {_KEY} ORDER BY task_path, task_id, write_index",
        key,
    )
    return tuple(
        PendingWrite(row[0], row[1], row[2], row[3], Payload(row[4], row[5], bytes(row[6])))
        for row in rows
    )


def _metadata_equals(where: Where, key: str, value: Any) -> None:
    condition, values = _json_equals(value)
    where.add(
        f"EXISTS (SELECT 1 FROM json_each(c.metadata) AS j WHERE j.key = {{}} AND {condition})",
        key,
        *values,
    )


def _json_equals(value: Any) -> tuple[str, list[Any]]:
    """SQL condition on a json_each row `j` for equality with `value` (a
    `Where` clause: `{}` marks its parameters)."""
    if value is None:
        return "j.type = 'null'", []
    if isinstance(value, bool):
        return "j.type = {}", ["true" if value else "false"]
    if isinstance(value, (int, float)):
        # SQLite compares INTEGER and REAL atoms by value: 1 = 1.0.
        return "j.type IN ('integer', 'real') AND j.atom = {}", [value]
    if isinstance(value, str):
        return "j.type = 'text' AND j.atom = {}", [value]
    return "j.type IN ('object', 'array') AND json(j.value) = json({})", [dumps(value)]


_LIST_DIALECT = ListDialect(sqlite_mark, "", "", _metadata_equals)


# ----- removals and copies ---------------------------------------------------------


def _delete_execution(
    db: sqlite3.Connection, tenant: str, execution_id: str, now_ns: int
) -> RemovalCounts:
    scope = (tenant, execution_id)
    hashes = {
        row[0]
        for row in db.execute(
            "SELECT DISTINCT content_hash FROM cp_channels WHERE tenant = ? AND execution_id = ?",
            scope,
        )
    }
    db.execute(
        "INSERT OR REPLACE INTO cp_tombstones (tenant, execution_id, namespace, checkpoint_id,"
        " delete_time_ns) SELECT tenant, execution_id, namespace, checkpoint_id, ?"
        " FROM cp_checkpoints WHERE tenant = ? AND execution_id = ?",
        (now_ns, *scope),
    )
    removed = db.execute(
        "DELETE FROM cp_checkpoints WHERE tenant = ? AND execution_id = ?", scope
    ).rowcount
    writes = db.execute("DELETE FROM cp_writes WHERE tenant = ? AND execution_id = ?", scope)
    db.execute("DELETE FROM cp_channels WHERE tenant = ? AND execution_id = ?", scope)
    return RemovalCounts(removed, writes.rowcount, _collect_garbage(db, tenant, hashes))


def _remove(
    db: sqlite3.Connection,
    tenant: str,
    keys: Sequence[tuple[str, str, str]],
    tombstone_time_ns: int | None,
) -> RemovalCounts:
    """Removes the checkpoints `(execution, namespace, id)` with their
    writes, channel rows and newly unreferenced values."""
    hashes: set[str] = set()
    writes = 0
    for execution_id, namespace, checkpoint_id in keys:
        key = (tenant, execution_id, namespace, checkpoint_id)
        hashes |= _release_channels(db, key)
        writes += db.execute(f"DELETE FROM cp_writes WHERE {_KEY}", key).rowcount
        db.execute(f"DELETE FROM cp_checkpoints WHERE {_KEY}", key)
        if tombstone_time_ns is not None:
            db.execute(
                "INSERT OR REPLACE INTO cp_tombstones (tenant, execution_id, namespace,"
                " checkpoint_id, delete_time_ns) VALUES (?,?,?,?,?)",
                (*key, tombstone_time_ns),
            )
    return RemovalCounts(len(keys), writes, _collect_garbage(db, tenant, hashes))


def _collect_garbage(db: sqlite3.Connection, tenant: str, hashes: Iterable[str]) -> int:
    """Deletes the values among `hashes` that no channel row references."""
    removed = 0
    for content_hash in hashes:
        removed += db.execute(
            "DELETE FROM cp_blobs WHERE tenant = ? AND content_hash = ? AND NOT EXISTS"
            " (SELECT 1 FROM cp_channels WHERE tenant = ? AND content_hash = ?)",
            (tenant, content_hash, tenant, content_hash),
        ).rowcount
    return removed


def _prune(
    db: sqlite3.Connection,
    tenant: str,
    execution_ids: Sequence[str],
    keep_last: int,
    audit: AuditRecord | None = None,
) -> RemovalCounts:
    total = RemovalCounts()
    for execution_id in execution_ids:
        doomed = db.execute(
            "SELECT ?, namespace, checkpoint_id FROM (SELECT namespace, checkpoint_id,"
            " ROW_NUMBER() OVER (PARTITION BY namespace ORDER BY create_time_ns DESC,"
            " sequence DESC) AS newest_rank FROM cp_checkpoints WHERE tenant = ?"
            " AND execution_id = ?) WHERE newest_rank > ?",
            (execution_id, tenant, execution_id, keep_last),
        ).fetchall()
        if doomed:
            _audit_each_execution(db, tenant, audit, {execution_id})
        total = add(total, _remove(db, tenant, doomed, tombstone_time_ns=None))
    return total


def _dry_run_prune(
    db: sqlite3.Connection, tenant: str, execution_ids: Sequence[str], keep_last: int
) -> RemovalCounts:
    try:
        return _prune(db, tenant, execution_ids, keep_last)
    finally:
        db.rollback()


def _executions_with_checkpoints(db: sqlite3.Connection, tenant: str) -> list[str]:
    rows = db.execute(
        "SELECT DISTINCT execution_id FROM cp_checkpoints WHERE tenant = ? ORDER BY execution_id",
        (tenant,),
    )
    return [row[0] for row in rows]


def _copy(
    db: sqlite3.Connection,
    tenant: str,
    source_id: str,
    target_id: str,
    until_checkpoint_id: str | None,
) -> RemovalCounts:
    if db.execute(
        "SELECT 1 FROM cp_checkpoints WHERE tenant = ? AND execution_id = ? LIMIT 1",
        (tenant, target_id),
    ).fetchone():
        raise AlreadyExistsError(f"execution {target_id!r} already has checkpoints")
    bound, bound_params = _copy_bound(db, tenant, source_id, until_checkpoint_id)
    copied = db.execute(
        f"INSERT INTO cp_checkpoints (tenant, execution_id, {_CHECKPOINT_BODY})"
        f" SELECT tenant, ?, {_CHECKPOINT_BODY} FROM cp_checkpoints"
        f" WHERE tenant = ? AND execution_id = ?{bound}",
        (target_id, tenant, source_id, *bound_params),
    ).rowcount
    if copied == 0:
        raise NotFoundError(f"execution {source_id!r} has no checkpoints to copy")
    copied_rows = (
        " AND EXISTS (SELECT 1 FROM cp_checkpoints AS t WHERE t.tenant = s.tenant"
        " AND t.execution_id = ? AND t.namespace = s.namespace"
        " AND t.checkpoint_id = s.checkpoint_id)"
    )
    db.execute(
        "INSERT INTO cp_channels (tenant, execution_id, namespace, checkpoint_id, channel,"
        " version, content_hash) SELECT tenant, ?, namespace, checkpoint_id, channel, version,"
        " content_hash FROM cp_channels AS s WHERE s.tenant = ? AND s.execution_id = ?"
        f"{copied_rows}",
        (target_id, tenant, source_id, target_id),
    )
    writes = db.execute(
        "INSERT INTO cp_writes (tenant, execution_id, namespace, checkpoint_id, task_id,"
        " write_index, task_path, channel, value_type, value_version, value_data)"
        " SELECT tenant, ?, namespace, checkpoint_id, task_id, write_index, task_path, channel,"
        " value_type, value_version, value_data FROM cp_writes AS s WHERE s.tenant = ?"
        f" AND s.execution_id = ?{copied_rows}",
        (target_id, tenant, source_id, target_id),
    ).rowcount
    _after_copy(db, tenant, source_id, target_id)
    return RemovalCounts(copied, writes, 0)


def _copy_bound(
    db: sqlite3.Connection, tenant: str, source_id: str, until_checkpoint_id: str | None
) -> tuple[str, list[Any]]:
    if until_checkpoint_id is None:
        return "", []
    row = db.execute(
        "SELECT create_time_ns, sequence FROM cp_checkpoints WHERE tenant = ?"
        " AND execution_id = ? AND namespace = '' AND checkpoint_id = ?",
        (tenant, source_id, until_checkpoint_id),
    ).fetchone()
    if row is None:
        raise NotFoundError(
            f"until_checkpoint_id {until_checkpoint_id!r} names no root-namespace checkpoint"
            f" of execution {source_id!r}"
        )
    return " AND (create_time_ns, sequence) <= (?, ?)", [row[0], row[1]]


def _after_copy(db: sqlite3.Connection, tenant: str, source_id: str, target_id: str) -> None:
    # Later saves on the target must sort after the copied checkpoints.
    db.execute(
        "INSERT INTO cp_executions (tenant, execution_id, last_sequence)"
        " SELECT tenant, ?, last_sequence FROM cp_executions WHERE tenant = ?"
        " AND execution_id = ? ON CONFLICT (tenant, execution_id)"
        " DO UPDATE SET last_sequence = max(last_sequence, excluded.last_sequence)",
        (target_id, tenant, source_id),
    )
    # The copy re-creates these ids on purpose: writes against them are new.
    db.execute(
        "DELETE FROM cp_tombstones WHERE tenant = ? AND execution_id = ? AND EXISTS"
        " (SELECT 1 FROM cp_checkpoints AS c WHERE c.tenant = cp_tombstones.tenant"
        " AND c.execution_id = cp_tombstones.execution_id"
        " AND c.namespace = cp_tombstones.namespace"
        " AND c.checkpoint_id = cp_tombstones.checkpoint_id)",
        (tenant, target_id),
    )


def insert_audit(
    db: sqlite3.Connection, tenant: str, audit: AuditRecord | None, revision: int
) -> None:
    """Writes `audit` (if any) into the shared audit trail of the embedded
    store, in the caller's transaction."""
    if audit is not None:
        insert_audit_rows(db, [audit_values(replace(audit, revision=revision), tenant)])


def _audit_each_execution(
    db: sqlite3.Connection, tenant: str, audit: AuditRecord | None, execution_ids: set[str]
) -> None:
    if audit is None:
        return
    for execution_id in sorted(execution_ids):
        entry = audit.for_entity(tenant, execution_id, _last_sequence(db, tenant, execution_id))
        insert_audit(db, tenant, entry, entry.revision)


def _last_sequence(db: sqlite3.Connection, tenant: str, execution_id: str) -> int:
    row = db.execute(
        "SELECT last_sequence FROM cp_executions WHERE tenant = ? AND execution_id = ?",
        (tenant, execution_id),
    ).fetchone()
    return int(row[0]) if row else 0


def _forget_idle_execution(db: sqlite3.Connection, tenant: str, execution_id: str) -> None:
    """Drops the execution's row once nothing needs it: no checkpoint, no
    tombstone a new id could collide with, no ownership epoch to fence with."""
    db.execute(
        "DELETE FROM cp_executions WHERE tenant = ? AND execution_id = ?"
        " AND ownership_epoch = 0"
        " AND NOT EXISTS (SELECT 1 FROM cp_checkpoints WHERE tenant = ? AND execution_id = ?)"
        " AND NOT EXISTS (SELECT 1 FROM cp_tombstones WHERE tenant = ? AND execution_id = ?)",
        (tenant, execution_id) * 3,
    )


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]
