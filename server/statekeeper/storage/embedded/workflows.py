"""Embedded workflow store: tables in the embedded SQLite file.

Shares the database thread and connection of `EmbeddedStorage`; versioned by
its own migrations table, `workflow_schema_migrations`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import AlreadyExistsError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.workflows.models import WorkflowRecord
from statekeeper.storage.embedded.checkpoints import insert_audit
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.migrations import Migrations, apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.erasure import SQLITE, workflow_steps
from statekeeper.storage.shared.workflows import COLUMNS, SqlWorkflowStore

SCHEMA_TABLE = "workflow_schema_migrations"

# Append only; never edit a released entry.
MIGRATIONS: Migrations = [
    (
        1,
        [
            """CREATE TABLE wf_workflows (
                tenant TEXT NOT NULL,
                workflow_id TEXT NOT NULL,
                status INTEGER NOT NULL,
                create_time REAL NOT NULL,
                revision INTEGER NOT NULL,
                document_type TEXT NOT NULL,
                document_version INTEGER NOT NULL,
                document BLOB NOT NULL,
                PRIMARY KEY (tenant, workflow_id)
            )""",
            "CREATE INDEX wf_workflows_by_time ON wf_workflows (tenant, create_time, workflow_id)",
            # Derived from the document on every save: which steps may be
            # claimed from when, so claims need not read every workflow.
            """CREATE TABLE wf_claimable (
                tenant TEXT NOT NULL,
                workflow_id TEXT NOT NULL,
                step_id TEXT NOT NULL,
                name TEXT NOT NULL,
                claimable_at REAL NOT NULL,
                cause TEXT NOT NULL,
                PRIMARY KEY (tenant, workflow_id, step_id)
            )""",
            "CREATE INDEX wf_claimable_by_time ON wf_claimable (tenant, claimable_at)",
            "CREATE INDEX wf_claimable_leases ON wf_claimable (claimable_at) WHERE cause = 'lease'",
            """CREATE TABLE wf_transitions (
                tenant TEXT NOT NULL,
                workflow_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                step_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                attempt INTEGER NOT NULL,
                lease_id TEXT NOT NULL,
                worker_id TEXT NOT NULL,
                time REAL NOT NULL
            )""",
            "CREATE INDEX wf_transitions_by_workflow ON wf_transitions (tenant, workflow_id)",
        ],
    ),
]

_COLUMNS = COLUMNS


class EmbeddedWorkflowStore(SqlWorkflowStore):
    """WorkflowStore on the embedded SQLite file."""

    dialect = SQLITE
    names_match = "name IN (SELECT value FROM json_each(:names))"
    log_order = "rowid"

    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend

    async def start(self) -> None:
        await self._backend.run(lambda db: apply_migrations(db, SCHEMA_TABLE, MIGRATIONS))

    async def create_workflow(
        self, tenant: str, record: WorkflowRecord, audit: AuditRecord | None = None
    ) -> None:
        def work(db: sqlite3.Connection) -> None:
            try:
                with db:
                    db.execute(
                        f"INSERT INTO wf_workflows (tenant, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                        (tenant, *_row_values(record)),
                    )
                    _write_derived(db, tenant, record)
                    insert_audit(db, tenant, audit, record.revision)
            except sqlite3.IntegrityError as exc:
                raise AlreadyExistsError(f"workflow {record.workflow_id!r} already exists") from exc

        await self._backend.run(work)

    async def fetch(self, sql: str, params: Sequence[object], what: str) -> list[sqlite3.Row]:
        return await self._backend.run(lambda db: db.execute(sql, params).fetchall())

    def names_value(self, names: Sequence[str]) -> object:
        return json.dumps(list(names))

    async def swap(
        self, tenant: str, record: WorkflowRecord, expected: int, audit: AuditRecord | None
    ) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            with db:
                updated = db.execute(
                    "UPDATE wf_workflows SET status = ?, revision = ?, document_type = ?,"
                    " document_version = ?, document = ? WHERE tenant = ? AND workflow_id = ?"
                    " AND revision = ?",
                    (
                        int(record.status),
                        record.revision,
                        record.document.content_type,
                        record.document.schema_version,
                        record.document.data,
                        tenant,
                        record.workflow_id,
                        expected,
                    ),
                ).rowcount
                if updated == 0:
                    return False
                db.execute(
                    "DELETE FROM wf_claimable WHERE tenant = ? AND workflow_id = ?",
                    (tenant, record.workflow_id),
                )
                _write_derived(db, tenant, record)
                insert_audit(db, tenant, audit, record.revision)
            return True

        return await self._backend.run(work)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        erasure = await run_steps(self._backend, workflow_steps(SQLITE, tenant, subject), dry_run)
        return erasure.counts


def _row_values(record: WorkflowRecord) -> tuple[Any, ...]:
    return (
        record.workflow_id,
        int(record.status),
        record.create_time,
        record.revision,
        record.document.content_type,
        record.document.schema_version,
        record.document.data,
    )


def _write_derived(db: sqlite3.Connection, tenant: str, record: WorkflowRecord) -> None:
    """The claim index and the new log entries of `record`."""
    db.executemany(
        "INSERT INTO wf_claimable (tenant, workflow_id, step_id, name, claimable_at, cause)"
        " VALUES (?,?,?,?,?,?)",
        [
            (tenant, record.workflow_id, e.step_id, e.name, e.claimable_at, e.cause)
            for e in record.claimable
        ],
    )
    db.executemany(
        "INSERT INTO wf_transitions (tenant, workflow_id, revision, step_id, kind, attempt,"
        " lease_id, worker_id, time) VALUES (?,?,?,?,?,?,?,?,?)",
        [
            (
                tenant,
                record.workflow_id,
                record.revision,
                t.step_id,
                t.kind,
                t.attempt,
                t.lease_id,
                t.worker_id,
                t.time,
            )
            for t in record.transitions
        ],
    )
