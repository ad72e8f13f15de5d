"""Workflow, step and transition records, limits and step errors (see core/workflows/service.py)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from statekeeper.core.errors import (
    FailedPreconditionError,
    NotFoundError,
)
from statekeeper.core.schema_upgrades import (
    Payload,
)

LEASE_EXPIRED_TYPE = "lease_expired"


WORKFLOW_ENTITY = "workflow"


class StepStatus(enum.IntEnum):
    """Values equal the proto WorkflowStepStatus numbers."""

    PENDING = 1
    RUNNING = 2
    SUCCESS = 3
    FAILED = 4
    SKIPPED = 5
    RETRYING = 6
    CANCELLED = 7


class WorkflowStatus(enum.IntEnum):
    """Values equal the proto WorkflowStatus numbers."""

    RUNNING = 1
    SUCCESS = 2
    FAILED = 3
    CANCELLED = 4


DONE_FOR_DEPENDENTS = frozenset({StepStatus.SUCCESS, StepStatus.SKIPPED})


FINISHED_STEP = frozenset(
    {StepStatus.SUCCESS, StepStatus.FAILED, StepStatus.SKIPPED, StepStatus.CANCELLED}
)


class StepConditionError(FailedPreconditionError):
    """A step transition refused; `condition` says why (contract names)."""

    def __init__(self, condition: str, message: str) -> None:
        super().__init__(message, condition=condition)


def lease_mismatch(step_id: str) -> StepConditionError:
    return StepConditionError(
        "LEASE_MISMATCH", f"step {step_id!r} is not held under this lease; stop working on it"
    )


def lease_expired(step_id: str) -> StepConditionError:
    return StepConditionError(
        "LEASE_EXPIRED", f"the lease on step {step_id!r} expired; another worker may own it"
    )


def workflow_finished(workflow: Workflow) -> StepConditionError:
    return StepConditionError(
        "WORKFLOW_FINISHED",
        f"workflow {workflow.workflow_id!r} has ended ({workflow.status.name})",
    )


@dataclass(frozen=True)
class WorkflowLimits:
    """Limits of the workflow capability (see README, "Limits")."""

    max_key_bytes: int = 512
    max_steps: int = 1000
    max_dependencies: int = 100
    max_step_input_bytes: int = 256 * 1024
    max_workflow_bytes: int = 4 * 1024 * 1024
    max_metadata_bytes: int = 64 * 1024
    max_retries: int = 100
    max_claim_steps: int = 100
    default_lease_seconds: float = 30.0
    max_lease_seconds: float = 3600.0
    max_wait_seconds: float = 60.0
    # Long-poll ClaimSteps re-checks at least this often (other replicas,
    # retry times), besides being woken by local changes.
    claim_poll_seconds: float = 0.25
    default_page_size: int = 50
    max_page_size: int = 1000


@dataclass(frozen=True)
class Backoff:
    """initial * multiplier ^ (attempt - 1), capped at maximum; seconds."""

    initial_seconds: float = 1.0
    multiplier: float = 2.0
    max_seconds: float = 300.0

    def delay(self, attempt: int) -> float:
        exponent = max(attempt - 1, 0)
        # Cap the exponent: past the cap the maximum wins anyway.
        raw = self.initial_seconds * self.multiplier ** min(exponent, 64)
        return float(min(raw, self.max_seconds))


@dataclass(frozen=True)
class StepError:
    message: str = ""
    type: str = ""
    details: Mapping[str, Any] | None = None
    retryable: bool = False
    attempt: int = 0
    time: float = 0.0
    # The lease of the failed attempt, to recognise a repeated FailStep.
    lease_id: str = ""
    # Set by the server when the attempt's lease expired (not by a worker).
    lease_expired: bool = False


@dataclass(frozen=True)
class StepSpec:
    """A step as given to StartWorkflow. `multiplier` 0 means the default."""

    step_id: str
    name: str = ""
    depends_on: tuple[str, ...] = ()
    inputs: Payload | None = None
    max_retries: int = 0
    backoff: Backoff = field(default_factory=Backoff)


@dataclass(frozen=True)
class Step:
    step_id: str
    name: str
    depends_on: tuple[str, ...] = ()
    inputs: Payload | None = None
    max_retries: int = 0
    backoff: Backoff = field(default_factory=Backoff)
    status: StepStatus = StepStatus.PENDING
    attempt: int = 0
    outputs: Payload | None = None
    errors: tuple[StepError, ...] = ()
    next_retry_time: float | None = None
    worker_id: str = ""
    lease_id: str = ""
    lease_expire_time: float | None = None
    lease_seconds: float = 0.0
    start_time: float | None = None
    end_time: float | None = None
    reason: str = ""
    # The lease that completed the step, to recognise a repeated CompleteStep.
    completed_lease_id: str = ""


@dataclass(frozen=True)
class Workflow:
    workflow_id: str
    status: WorkflowStatus
    steps: tuple[Step, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    execution_id: str = ""
    create_time: float = 0.0
    update_time: float = 0.0
    end_time: float | None = None
    revision: int = 1

    @property
    def etag(self) -> str:
        return f"r{self.revision}"

    def step(self, step_id: str) -> Step:
        for step in self.steps:
            if step.step_id == step_id:
                return step
        raise NotFoundError(f"workflow {self.workflow_id!r} has no step {step_id!r}")

    def with_steps(self, changed: Iterable[Step]) -> Workflow:
        by_id = {step.step_id: step for step in changed}
        return replace(self, steps=tuple(by_id.get(s.step_id, s) for s in self.steps))


@dataclass(frozen=True)
class Transition:
    """One entry of a workflow's transition log."""

    step_id: str
    kind: str
    attempt: int
    lease_id: str = ""
    worker_id: str = ""
    time: float = 0.0


@dataclass(frozen=True)
class ClaimableStep:
    """An index entry: the step may be claimable from `claimable_at`.
    `cause` is "ready", "retry" or "lease" (a lease that may expire)."""

    step_id: str
    name: str
    claimable_at: float
    cause: str


@dataclass(frozen=True)
class WorkflowRecord:
    """What the store keeps: the encoded document and its derived index."""

    workflow_id: str
    status: WorkflowStatus
    create_time: float
    revision: int
    document: Payload
    claimable: tuple[ClaimableStep, ...] = ()
    transitions: tuple[Transition, ...] = ()


@dataclass(frozen=True)
class ClaimRequest:
    worker_id: str
    workflow_id: str = ""
    step_names: tuple[str, ...] = ()
    max_steps: int = 0
    lease_seconds: float = 0.0
    wait_seconds: float = 0.0


@dataclass(frozen=True)
class ClaimedStep:
    workflow_id: str
    step: Step
    dependency_outputs: Mapping[str, Payload]


@dataclass(frozen=True)
class StepResult:
    step: Step
    repeated: bool
    workflow_status: WorkflowStatus


@dataclass(frozen=True)
class FailureReport:
    """What a worker says about a failed attempt."""

    error: StepError
    retryable: bool
    retry_delay_seconds: float | None = None
