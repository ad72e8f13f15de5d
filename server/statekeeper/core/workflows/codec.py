"""The workflow document (schema v3, see core/schema_upgrades.py): a Workflow as JSON-able dicts."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from statekeeper.core.schema_upgrades import (
    Payload,
)
from statekeeper.core.workflows.models import (
    Backoff,
    Step,
    StepError,
    StepStatus,
    Workflow,
    WorkflowStatus,
)


def workflow_to_document(workflow: Workflow) -> dict[str, Any]:
    return {
        "workflow_id": workflow.workflow_id,
        "status": workflow.status.name,
        "metadata": dict(workflow.metadata),
        "execution_id": workflow.execution_id,
        "create_time": workflow.create_time,
        "update_time": workflow.update_time,
        "end_time": workflow.end_time,
        "steps": [_step_to_document(step) for step in workflow.steps],
    }


def workflow_from_document(document: Mapping[str, Any]) -> Workflow:
    return Workflow(
        workflow_id=document["workflow_id"],
        status=WorkflowStatus[document["status"]],
        steps=tuple(_step_from_document(step) for step in document["steps"]),
        metadata=document.get("metadata") or {},
        execution_id=document.get("execution_id", ""),
        create_time=float(document["create_time"]),
        update_time=float(document.get("update_time", document["create_time"])),
        end_time=document.get("end_time"),
    )


def _step_to_document(step: Step) -> dict[str, Any]:
    return {
        "step_id": step.step_id,
        "name": step.name,
        "depends_on": list(step.depends_on),
        "inputs": _payload_to_document(step.inputs),
        "max_retries": step.max_retries,
        "backoff": {
            "initial_interval": step.backoff.initial_seconds,
            "multiplier": step.backoff.multiplier,
            "max_interval": step.backoff.max_seconds,
        },
        "status": step.status.name,
        "attempt": step.attempt,
        "outputs": _payload_to_document(step.outputs),
        "errors": [_error_to_document(error) for error in step.errors],
        "next_retry_time": step.next_retry_time,
        "worker_id": step.worker_id,
        "lease_id": step.lease_id,
        "lease_expire_time": step.lease_expire_time,
        "lease_seconds": step.lease_seconds,
        "start_time": step.start_time,
        "end_time": step.end_time,
        "reason": step.reason,
        "completed_lease_id": step.completed_lease_id,
    }


def _step_from_document(document: Mapping[str, Any]) -> Step:
    backoff = document["backoff"]
    return Step(
        step_id=document["step_id"],
        name=document["name"],
        depends_on=tuple(document.get("depends_on", ())),
        inputs=_payload_from_document(document.get("inputs")),
        max_retries=int(document["max_retries"]),
        backoff=Backoff(
            float(backoff["initial_interval"]),
            float(backoff["multiplier"]),
            float(backoff["max_interval"]),
        ),
        status=StepStatus[document["status"]],
        attempt=int(document.get("attempt", 0)),
        outputs=_payload_from_document(document.get("outputs")),
        errors=tuple(_error_from_document(error) for error in document.get("errors", ())),
        next_retry_time=document.get("next_retry_time"),
        worker_id=document.get("worker_id", ""),
        lease_id=document.get("lease_id", ""),
        lease_expire_time=document.get("lease_expire_time"),
        lease_seconds=float(document.get("lease_seconds", 0.0)),
        start_time=document.get("start_time"),
        end_time=document.get("end_time"),
        reason=document.get("reason", ""),
        completed_lease_id=document.get("completed_lease_id", ""),
    )


def _error_to_document(error: StepError) -> dict[str, Any]:
    return {
        "message": error.message,
        "type": error.type,
        "details": dict(error.details) if error.details else None,
        "retryable": error.retryable,
        "attempt": error.attempt,
        "time": error.time,
        "lease_id": error.lease_id,
        "lease_expired": error.lease_expired,
    }


def _error_from_document(document: Mapping[str, Any]) -> StepError:
    return StepError(
        message=document.get("message", ""),
        type=document.get("type", ""),
        details=document.get("details"),
        retryable=bool(document.get("retryable", False)),
        attempt=int(document.get("attempt", 0)),
        time=float(document.get("time", 0.0)),
        lease_id=document.get("lease_id", ""),
        lease_expired=bool(document.get("lease_expired", False)),
    )


def _payload_to_document(payload: Payload | None) -> dict[str, Any] | None:
    if payload is None:
        return None
    return {
        "content_type": payload.content_type,
        "schema_version": payload.schema_version,
        "data": base64.b64encode(payload.data).decode(),
    }


def _payload_from_document(document: Mapping[str, Any] | None) -> Payload | None:
    if document is None:
        return None
    return Payload(
        document.get("content_type", ""),
        int(document.get("schema_version", 0)),
        base64.b64decode(document.get("data", "")),
    )
