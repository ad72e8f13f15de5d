"""Workflows: what the SQLite and PostgreSQL stores share.

`SqlWorkflowStore` holds the reads once, written over the dialect
(storage/shared/erasure.py: `:name` placeholders); a backend supplies how a
statement runs, how it matches a list of step names, the column that
orders the transition log, and its writes (WorkflowStore.swap).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from statekeeper.core.schema_upgrades import Payload
from statekeeper.core.workflows.models import Transition, WorkflowRecord, WorkflowStatus
from statekeeper.core.workflows.store import WorkflowStore
from statekeeper.storage.shared.erasure import Dialect
from statekeeper.storage.sql import Row

COLUMNS = "workflow_id, status, create_time, revision, document_type, document_version, document"


def record_from_row(row: Row) -> WorkflowRecord:
    return WorkflowRecord(
        workflow_id=row["workflow_id"],
        status=WorkflowStatus(row["status"]),
        create_time=row["create_time"],
        revision=row["revision"],
        document=Payload(row["document_type"], row["document_version"], bytes(row["document"])),
    )


class SqlWorkflowStore(WorkflowStore):
    """The reads of a workflow store."""

    dialect: Dialect
    # SQL of "the step's name is one of :names" (bound by `names_value`).
    names_match: str
    # The column ordering a workflow's transition log (commit order).
    log_order: str

    @abc.abstractmethod
    async def fetch(self, sql: str, params: Sequence[object], what: str) -> Sequence[Any]:
        """The rows of one read statement (`what` names it)."""

    @abc.abstractmethod
    def names_value(self, names: Sequence[str]) -> object:
        """The value bound to :names."""

    async def _read(self, sql: str, values: dict[str, object], what: str) -> Sequence[Any]:
        text, params = self.dialect.bind(sql, values)
        return await self.fetch(text, params, what)

    async def get_workflow(self, tenant: str, workflow_id: str) -> WorkflowRecord | None:
        rows = await self._read(
            f"SELECT {COLUMNS} FROM wf_workflows WHERE tenant = :tenant AND workflow_id = :id",
            {"tenant": tenant, "id": workflow_id},
            "get workflow",
        )
        return record_from_row(rows[0]) if rows else None

    async def list_workflows(
        self,
        tenant: str,
        status: WorkflowStatus | None,
        after: tuple[float, str] | None,
        limit: int,
    ) -> list[WorkflowRecord]:
        clauses = ["tenant = :tenant"]
        values: dict[str, object] = {"tenant": tenant, "limit": limit}
        if status is not None:
            clauses.append("status = :status")
            values["status"] = int(status)
        if after is not None:
            clauses.append("(create_time, workflow_id) < (:after_time, :after_id)")
            values["after_time"], values["after_id"] = after
        sql = (
            f"SELECT {COLUMNS} FROM wf_workflows WHERE {' AND '.join(clauses)}"
            " ORDER BY create_time DESC, workflow_id DESC LIMIT :limit"
        )
        return [record_from_row(row) for row in await self._read(sql, values, "list workflows")]

    async def revision_of(self, tenant: str, workflow_id: str) -> int | None:
        rows = await self._read(
            "SELECT revision FROM wf_workflows WHERE tenant = :tenant AND workflow_id = :id",
            {"tenant": tenant, "id": workflow_id},
            "workflow revision",
        )
        return int(rows[0][0]) if rows else None

    async def find_claimable(
        self,
        tenant: str,
        workflow_id: str | None,
        step_names: Sequence[str],
        now: float,
        limit: int,
    ) -> list[tuple[str, str]]:
        clauses = ["tenant = :tenant", "claimable_at <= :now"]
        values: dict[str, object] = {"tenant": tenant, "now": now, "limit": limit}
        if workflow_id is not None:
            clauses.append("workflow_id = :id")
            values["id"] = workflow_id
        if step_names:
            clauses.append(self.names_match)
            values["names"] = self.names_value(step_names)
        sql = (
            f"SELECT workflow_id, step_id FROM wf_claimable WHERE {' AND '.join(clauses)}"
            " ORDER BY claimable_at, workflow_id, step_id LIMIT :limit"
        )
        rows = await self._read(sql, values, "find claimable steps")
        return [(row[0], row[1]) for row in rows]

    async def find_expired_leases(self, now: float, limit: int) -> list[tuple[str, str]]:
        rows = await self._read(
            "SELECT DISTINCT tenant, workflow_id FROM wf_claimable"
            " WHERE cause = 'lease' AND claimable_at <= :now LIMIT :limit",
            {"now": now, "limit": limit},
            "find expired leases",
        )
        return [(row[0], row[1]) for row in rows]

    async def list_transitions(self, tenant: str, workflow_id: str) -> list[Transition]:
        rows = await self._read(
            "SELECT step_id, kind, attempt, lease_id, worker_id, time FROM wf_transitions"
            f" WHERE tenant = :tenant AND workflow_id = :id ORDER BY {self.log_order}",
            {"tenant": tenant, "id": workflow_id},
            "list transitions",
        )
        return [Transition(*row) for row in rows]
