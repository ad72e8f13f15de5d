"""Workflows: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

from statekeeper.core.schema_upgrades import Payload
from statekeeper.core.workflows.models import WorkflowRecord, WorkflowStatus
from statekeeper.storage.sql import Row


def record_from_row(row: Row) -> WorkflowRecord:
    return WorkflowRecord(
        workflow_id=row["workflow_id"],
        status=WorkflowStatus(row["status"]),
        create_time=row["create_time"],
        revision=row["revision"],
        document=Payload(row["document_type"], row["document_version"], bytes(row["document"])),
    )
