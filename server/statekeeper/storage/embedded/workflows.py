"""Embedded workflow store: tables in the embedded SQLite file.

Shares the database thread and connection of `EmbeddedStorage`; versioned by
its own migrations table, `workflow_schema_migrations`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import AlreadyExistsError, ConcurrentModificationError, NotFoundError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.workflows.models import Transition, WorkflowRecord, WorkflowStatus
from statekeeper.core.workflows.store import WorkflowStore
from statekeeper.storage.embedded.checkpoints import insert_audit
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.migrations import Migrations, apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.erasure import SQLITE, workflow_steps
from statekeeper.storage.shared.workflows import record_from_row

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

_COLUMNS = "workflow_id, status, create_time, revision, document_type, document_version, document"


class EmbeddedWorkflowStore(WorkflowStore):
    """WorkflowStore on the embedded SQLite file."""

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

    async def get_workflow(self, tenant: str, workflow_id: str) -> WorkflowRecord | None:
        def work(db: sqlite3.Connection) -> WorkflowRecord | None:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM wf_workflows WHERE tenant = ? AND workflow_id = ?",
                (tenant, workflow_id),
            ).fetchone()
            return None if row is None else record_from_row(row)

        return await self._backend.run(work)

    async def list_workflows(
        self,
        tenant: str,
        status: WorkflowStatus | None,
        after: tuple[float, str] | None,
        limit: int,
    ) -> list[WorkflowRecord]:
        clauses = ["tenant = ?"]
        params: list[Any] = [tenant]
        if status is not None:
            clauses.append("status = ?")
            params.append(int(status))
        if after is not None:
            clauses.append("(create_time, workflow_id) < (?, ?)")
            params.extend(after)
        sql = (
            f"SELECT {_COLUMNS} FROM wf_workflows WHERE {' AND '.join(clauses)}"
            " ORDER BY create_time DESC, workflow_id DESC LIMIT ?"
        )
        params.append(limit)

        def work(db: sqlite3.Connection) -> list[WorkflowRecord]:
            return [record_from_row(row) for row in db.execute(sql, params)]

        return await self._backend.run(work)

    async def replace_workflow(
        self,
        tenant: str,
        record: WorkflowRecord,
        expected_revision: int,
        audit: AuditRecord | None = None,
    ) -> None:
        def work(db: sqlite3.Connection) -> None:
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
                        expected_revision,
                    ),
                ).rowcount
                if updated == 0:
                    raise _missing_or_moved(db, tenant, record.workflow_id, expected_revision)
                db.execute(
                    "DELETE FROM wf_claimable WHERE tenant = ? AND workflow_id = ?",
                    (tenant, record.workflow_id),
                )
                _write_derived(db, tenant, record)
                insert_audit(db, tenant, audit, record.revision)

        await self._backend.run(work)

    async def find_claimable(
        self,
        tenant: str,
        workflow_id: str | None,
        step_names: Sequence[str],
        now: float,
        limit: int,
    ) -> list[tuple[str, str]]:
        clauses = ["tenant = ?", "claimable_at <= ?"]
        params: list[Any] = [tenant, now]
        if workflow_id is not None:
            clauses.append("workflow_id = ?")
            params.append(workflow_id)
        if step_names:
            clauses.append(f"name IN ({','.join('?' * len(step_names))})")
            params.extend(step_names)
        sql = (
            f"SELECT workflow_id, step_id FROM wf_claimable WHERE {' AND '.join(clauses)}"
            " ORDER BY claimable_at LIMIT ?"
        )
        params.append(limit)

        def work(db: sqlite3.Connection) -> list[tuple[str, str]]:
            return [(row[0], row[1]) for row in db.execute(sql, params)]

        return await self._backend.run(work)

    async def find_expired_leases(self, now: float, limit: int) -> list[tuple[str, str]]:
        def work(db: sqlite3.Connection) -> list[tuple[str, str]]:
            rows = db.execute(
                "SELECT DISTINCT tenant, workflow_id FROM wf_claimable"
                " WHERE cause = 'lease' AND claimable_at <= ? LIMIT ?",
                (now, limit),
            )
            return [(row[0], row[1]) for row in rows]

        return await self._backend.run(work)

    async def list_transitions(self, tenant: str, workflow_id: str) -> list[Transition]:
        def work(db: sqlite3.Connection) -> list[Transition]:
            rows = db.execute(
                "SELECT step_id, kind, attempt, lease_id, worker_id, time FROM wf_transitions"
                " WHERE tenant = ? AND workflow_id = ? ORDER BY rowid",
                (tenant, workflow_id),
            )
            return [Transition(*row) for row in rows]

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


def _missing_or_moved(
    db: sqlite3.Connection, tenant: str, workflow_id: str, expected_revision: int
) -> Exception:
    row = db.execute(
        "SELECT revision FROM wf_workflows WHERE tenant = ? AND workflow_id = ?",
        (tenant, workflow_id),
    ).fetchone()
    if row is None:
        return NotFoundError(f"workflow {workflow_id!r} not found")
    return ConcurrentModificationError(
        f"workflow {workflow_id!r} is at revision {row[0]}, not {expected_revision}"
    )
