"""PostgreSQL workflow store: the production backend of WorkflowStore.

One row per workflow holds the document and its revision; every change is a
single statement (one round trip, atomic on its own) built around the
conditional `UPDATE ... WHERE revision = expected`. PostgreSQL re-checks that
condition on the newest row version after waiting for a concurrent writer's
row lock, so of several replicas replacing the same revision exactly one
wins and the others get `ConcurrentModificationError`; the claim index, the
transition log and the audit record are written by the same statement, only
when the update matched.

Tables are versioned by their own migration list and table,
`workflow_schema_migrations`, applied by `start()` under an advisory lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import AlreadyExistsError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.workflows.models import WorkflowRecord
from statekeeper.storage.postgres.checkpoints import audit_arguments
from statekeeper.storage.postgres.checkpoints_schema import audit_cte
from statekeeper.storage.postgres.erasure import run_steps
from statekeeper.storage.postgres.migrations import Migration, apply_migrations
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.shared.erasure import POSTGRES, workflow_steps
from statekeeper.storage.shared.workflows import COLUMNS, SqlWorkflowStore

SCHEMA_TABLE = "workflow_schema_migrations"
# pg_advisory_xact_lock key serializing this store's migrations ("skwrkflw").
MIGRATION_LOCK_KEY = int.from_bytes(b"skwrkflw", "big")

_TEXT = 'text COLLATE "C" NOT NULL'

# Append only; never edit a released entry.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "workflows, claim index, transition log",
        (
            f"""CREATE TABLE wf_workflows (
                tenant {_TEXT},
                workflow_id {_TEXT},
                status integer NOT NULL,
                create_time double precision NOT NULL,
                revision bigint NOT NULL,
                document_type text NOT NULL,
                document_version integer NOT NULL,
                document bytea NOT NULL,
                PRIMARY KEY (tenant, workflow_id)
            )""",
            "CREATE INDEX wf_workflows_by_time ON wf_workflows (tenant, create_time, workflow_id)",
            # Derived from the document on every save: which steps may be
            # claimed from when, so claims need not read every workflow.
            f"""CREATE TABLE wf_claimable (
                tenant {_TEXT},
                workflow_id {_TEXT},
                step_id {_TEXT},
                name {_TEXT},
                claimable_at double precision NOT NULL,
                cause text NOT NULL,
                PRIMARY KEY (tenant, workflow_id, step_id)
            )""",
            "CREATE INDEX wf_claimable_by_time ON wf_claimable (tenant, claimable_at)",
            "CREATE INDEX wf_claimable_leases ON wf_claimable (claimable_at) WHERE cause = 'lease'",
            # `entry` orders the log: commit order per workflow, since every
            # append happens under the workflow row's lock.
            f"""CREATE TABLE wf_transitions (
                entry bigint GENERATED ALWAYS AS IDENTITY,
                tenant {_TEXT},
                workflow_id {_TEXT},
                revision bigint NOT NULL,
                step_id text NOT NULL,
                kind text NOT NULL,
                attempt integer NOT NULL,
                lease_id text NOT NULL,
                worker_id text NOT NULL,
                time double precision NOT NULL
            )""",
            "CREATE INDEX wf_transitions_by_workflow ON wf_transitions"
            " (tenant, workflow_id, entry)",
        ),
    ),
)

_COLUMNS = COLUMNS

# The claim index ($9..$12) and the log entries ($13..$18) of the workflow
# row in `changed`, then its audit record ($19..$25, revision $4).
_DERIVED = f"""
stale_index AS (
    DELETE FROM wf_claimable c USING changed
    WHERE c.tenant = changed.tenant AND c.workflow_id = changed.workflow_id
    AND NOT (c.step_id = ANY($9::text[]))
), claimable AS (
    INSERT INTO wf_claimable (tenant, workflow_id, step_id, name, claimable_at, cause)
    SELECT changed.tenant, changed.workflow_id, i.* FROM changed,
        unnest($9::text[], $10::text[], $11::float8[], $12::text[]) AS i
    ON CONFLICT (tenant, workflow_id, step_id) DO UPDATE SET name = excluded.name,
        claimable_at = excluded.claimable_at, cause = excluded.cause
    WHERE (wf_claimable.name, wf_claimable.claimable_at, wf_claimable.cause)
        IS DISTINCT FROM (excluded.name, excluded.claimable_at, excluded.cause)
), transitions AS (
    INSERT INTO wf_transitions (tenant, workflow_id, revision, step_id, kind, attempt,
        lease_id, worker_id, time)
    SELECT changed.tenant, changed.workflow_id, $4, t.step_id, t.kind, t.attempt, t.lease_id,
        t.worker_id, t.time
    FROM changed, unnest($13::text[], $14::text[], $15::integer[], $16::text[], $17::text[],
        $18::float8[]) WITH ORDINALITY AS t(step_id, kind, attempt, lease_id, worker_id, time, n)
    ORDER BY t.n
), audit AS ({audit_cte(19, "changed", "$4::bigint")})
"""

# Inserts the workflow unless the id is taken; the index, log and audit only
# if it was inserted. Returns how many rows were inserted (0 or 1).
_CREATE = f"""
WITH changed AS (
    INSERT INTO wf_workflows (tenant, {_COLUMNS}) VALUES ($1, $2, $3, $8, $4, $5, $6, $7)
    ON CONFLICT (tenant, workflow_id) DO NOTHING
    RETURNING tenant, workflow_id
), {_DERIVED}
SELECT count(*) FROM changed
"""

# Compare-and-swap on the revision ($8 expected; $3 status, $4 the new
# revision, $5..$7 the document); the rest only if it matched.
_REPLACE = f"""
WITH changed AS (
    UPDATE wf_workflows SET status = $3, revision = $4, document_type = $5,
        document_version = $6, document = $7
    WHERE tenant = $1 AND workflow_id = $2 AND revision = $8::bigint
    RETURNING tenant, workflow_id
), {_DERIVED}
SELECT count(*) FROM changed
"""


class PostgresWorkflowStore(SqlWorkflowStore):
    """WorkflowStore on the PostgreSQL durable tier."""

    dialect = POSTGRES
    names_match = "name = ANY(:names::text[])"
    log_order = "entry"

    def __init__(self, db: PostgresStorage) -> None:
        self._db = db

    async def start(self) -> None:
        async with self._db.connection("workflow schema") as conn:
            await apply_migrations(conn, SCHEMA_TABLE, MIGRATION_LOCK_KEY, MIGRATIONS)

    async def close(self) -> None:
        """Nothing to release: the pool belongs to PostgresStorage."""

    async def create_workflow(
        self, tenant: str, record: WorkflowRecord, audit: AuditRecord | None = None
    ) -> None:
        async with self._db.connection("create workflow") as conn:
            created = await conn.fetchval(
                _CREATE, *_arguments(tenant, record, record.create_time, audit)
            )
        if not created:
            raise AlreadyExistsError(f"workflow {record.workflow_id!r} already exists")

    async def fetch(self, sql: str, params: Sequence[object], what: str) -> list[Any]:
        async with self._db.connection(what) as conn:
            return list(await conn.fetch(sql, *params))

    def names_value(self, names: Sequence[str]) -> object:
        return list(names)

    async def swap(
        self, tenant: str, record: WorkflowRecord, expected: int, audit: AuditRecord | None
    ) -> bool:
        async with self._db.connection("replace workflow") as conn:
            replaced = await conn.fetchval(_REPLACE, *_arguments(tenant, record, expected, audit))
        return bool(replaced)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        erasure = await run_steps(self._db, workflow_steps(POSTGRES, tenant, subject), dry_run)
        return erasure.counts


def _arguments(
    tenant: str, record: WorkflowRecord, eighth: object, audit: AuditRecord | None
) -> list[object]:
    """Arguments of _CREATE (`eighth` = create time) and _REPLACE (`eighth` =
    the expected revision)."""
    claimable, transitions = record.claimable, record.transitions
    return [
        tenant,
        record.workflow_id,
        int(record.status),
        record.revision,
        record.document.content_type,
        record.document.schema_version,
        record.document.data,
        eighth,
        [entry.step_id for entry in claimable],
        [entry.name for entry in claimable],
        [entry.claimable_at for entry in claimable],
        [entry.cause for entry in claimable],
        [entry.step_id for entry in transitions],
        [entry.kind for entry in transitions],
        [entry.attempt for entry in transitions],
        [entry.lease_id for entry in transitions],
        [entry.worker_id for entry in transitions],
        [entry.time for entry in transitions],
        *audit_arguments(audit),
    ]
