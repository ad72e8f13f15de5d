"""Workflows: a DAG of steps run by workers that claim ready steps under a lease.

The whole state of a workflow is one document (schema v3, see
core/schema_upgrades.py) saved on every transition with compare-and-swap on
its revision, so a restarted server resumes exactly where it was and two
concurrent transitions can never both apply. A step's result is recorded
only by the lease that holds it, once: a repeated CompleteStep or FailStep
under the same lease is recognised and records nothing.

Rules, as the contract states them:

* A step is ready when PENDING with every dependency SUCCESS or SKIPPED, or
  RETRYING once `next_retry_time` has passed, or RUNNING with an expired
  lease. An expired lease counts as a failed, retryable attempt: the step is
  ready again at once if retries remain, else it fails.
* A failure with no attempts left fails the step and the workflow; every
  step not yet finished is then CANCELLED (running ones too: their results
  could no longer be recorded).
* Every transition is also appended to the workflow's transition log in the
  same transaction (claims, completions, failures, expiries, skips,
  cancellations), which is how "recorded once" can be checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from statekeeper.core import observations, paging
from statekeeper.core.audit.service import Actor, record_for, system_actor
from statekeeper.core.checkpoints.service import (
    CheckpointManager,
    canonical_json,
    check_key,
    json_size,
)
from statekeeper.core.errors import (
    ConcurrentModificationError,
    EtagMismatchError,
    InvalidArgumentError,
    LimitExceededError,
    NotFoundError,
)
from statekeeper.core.schema_upgrades import (
    WORKFLOW_STATE_CONTENT_TYPE,
    WORKFLOW_STATE_VERSION,
    Payload,
    UpgradeRegistry,
)
from statekeeper.core.validation import check_non_negative
from statekeeper.core.workflows.codec import (
    workflow_from_document,
    workflow_to_document,
)
from statekeeper.core.workflows.models import (
    DONE_FOR_DEPENDENTS,
    FINISHED_STEP,
    LEASE_EXPIRED_TYPE,
    WORKFLOW_ENTITY,
    Backoff,
    ClaimableStep,
    ClaimedStep,
    ClaimRequest,
    FailureReport,
    Step,
    StepConditionError,
    StepError,
    StepResult,
    StepSpec,
    StepStatus,
    Transition,
    Workflow,
    WorkflowLimits,
    WorkflowRecord,
    WorkflowStatus,
    lease_expired,
    lease_mismatch,
    workflow_finished,
)

if TYPE_CHECKING:
    from statekeeper.core.workflows.store import WorkflowStore

log = logging.getLogger(__name__)

Clock = Callable[[], float]
T = TypeVar("T")

CAS_RETRIES = 32


# ----- errors -------------------------------------------------------------------------


# ----- limits and records ---------------------------------------------------------------


@dataclass(frozen=True)
class _Change(Generic[T]):
    """A transition's outcome: the next workflow (None: nothing changed),
    the log entries it adds, and what the caller gets back."""

    workflow: Workflow | None
    transitions: tuple[Transition, ...]
    result: T


# ----- the capability -------------------------------------------------------------------


class WorkflowManager:
    """The workflow capability, independent of transport and storage."""

    def __init__(
        self,
        store: WorkflowStore,
        limits: WorkflowLimits,
        upgrades: UpgradeRegistry,
        clock: Clock = time.time,
    ) -> None:
        self._store = store
        self._limits = limits
        self._upgrades = upgrades
        self._clock = clock
        self._changed = asyncio.Event()

    async def start(
        self,
        actor: Actor,
        workflow_id: str,
        specs: Sequence[StepSpec],
        metadata: Mapping[str, Any],
        execution_id: str,
    ) -> Workflow:
        check_key("workflow_id", workflow_id, self._limits.max_key_bytes, required=False)
        check_key("execution_id", execution_id, self._limits.max_key_bytes, required=False)
        steps = self._validated_steps(specs)
        metadata = canonical_json("metadata", metadata)
        if json_size("metadata", metadata) > self._limits.max_metadata_bytes:
            raise LimitExceededError("metadata", self._limits.max_metadata_bytes, "is too big")
        now = self._clock()
        workflow = Workflow(
            workflow_id=workflow_id or uuid.uuid4().hex,
            status=WorkflowStatus.RUNNING,
            steps=steps,
            metadata=metadata,
            execution_id=execution_id,
            create_time=now,
            update_time=now,
        )
        start = Transition("", "START", 0, time=now)
        audit = record_for(
            actor, WORKFLOW_ENTITY, workflow.workflow_id, 1, now, f"started ({len(steps)} steps)"
        )
        await self._store.create_workflow(actor.tenant, self._record(workflow, (start,)), audit)
        self._signal()
        return workflow

    async def get(self, tenant: str, workflow_id: str) -> Workflow:
        check_key("workflow_id", workflow_id, self._limits.max_key_bytes)
        record = await self._store.get_workflow(tenant, workflow_id)
        if record is None:
            raise NotFoundError(f"workflow {workflow_id!r} not found")
        return self._decode(record)

    async def list_workflows(
        self,
        tenant: str,
        status: WorkflowStatus | None,
        requested_page_size: int,
        page_token: str,
    ) -> tuple[list[Workflow], str]:
        check_non_negative("page_size", requested_page_size)
        size = requested_page_size or self._limits.default_page_size
        size = min(size, self._limits.max_page_size)
        filters = [int(status or 0)]
        after = _cursor_from(paging.decode(page_token, "workflows", filters))
        records = await self._store.list_workflows(tenant, status, after, size + 1)
        next_token = ""
        if len(records) > size:
            records = records[:size]
            last = records[-1]
            next_token = paging.encode("workflows", filters, [last.create_time, last.workflow_id])
        return [self._decode(record) for record in records], next_token

    async def claim(
        self, actor: Actor, request: ClaimRequest, deadline_seconds: float | None
    ) -> list[ClaimedStep]:
        """Claims up to `max_steps` ready steps, waiting up to
        `wait_seconds` (bounded by `deadline_seconds` from now) for one."""
        request = self._checked_claim(request)
        if request.workflow_id:
            await self.get(actor.tenant, request.workflow_id)
        wait = min(request.wait_seconds, self._limits.max_wait_seconds)
        if deadline_seconds is not None:
            # Leave time to answer before the caller's deadline.
            wait = min(wait, max(deadline_seconds - 0.05, 0.0))
        give_up = time.monotonic() + wait
        while True:
            changed = self._changed
            claimed = await self._claim_once(actor, request)
            remaining = give_up - time.monotonic()
            if claimed or remaining <= 0:
                return claimed
            timeout = min(remaining, self._limits.claim_poll_seconds)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), timeout)

    async def complete(
        self, actor: Actor, workflow_id: str, step_id: str, lease_id: str, outputs: Payload | None
    ) -> StepResult:
        self._check_step_call(workflow_id, step_id, lease_id, lease_required=True)
        if outputs is not None and outputs.size > self._limits.max_step_input_bytes:
            raise LimitExceededError("outputs", self._limits.max_step_input_bytes, "is too big")
        result, _ = await self._mutate(
            actor, workflow_id, lambda wf, now: _complete(wf, step_id, lease_id, outputs, now)
        )
        return result

    async def fail(
        self, actor: Actor, workflow_id: str, step_id: str, lease_id: str, report: FailureReport
    ) -> StepResult:
        self._check_step_call(workflow_id, step_id, lease_id, lease_required=True)
        if report.retry_delay_seconds is not None:
            check_non_negative("retry_delay", report.retry_delay_seconds)
        if json_size("error.details", report.error.details or {}) > self._limits.max_metadata_bytes:
            raise LimitExceededError("error.details", self._limits.max_metadata_bytes, "too big")
        error = replace(
            report.error, details=canonical_json("error.details", report.error.details or {})
        )
        report = replace(report, error=error)
        result, _ = await self._mutate(
            actor, workflow_id, lambda wf, now: _fail(wf, step_id, lease_id, report, now)
        )
        return result

    async def skip(
        self, actor: Actor, workflow_id: str, step_id: str, lease_id: str, reason: str
    ) -> StepResult:
        self._check_step_call(workflow_id, step_id, lease_id, lease_required=False)
        if len(reason.encode()) > self._limits.max_metadata_bytes:
            raise LimitExceededError("reason", self._limits.max_metadata_bytes, "is too long")
        result, _ = await self._mutate(
            actor, workflow_id, lambda wf, now: _skip(wf, step_id, lease_id, reason, now)
        )
        return result

    async def renew(
        self,
        actor: Actor,
        workflow_id: str,
        step_id: str,
        lease_id: str,
        lease_seconds: float | None,
    ) -> float:
        """Returns the new lease expiry time."""
        self._check_step_call(workflow_id, step_id, lease_id, lease_required=True)
        if lease_seconds is not None:
            check_non_negative("lease_duration", lease_seconds)
            lease_seconds = min(lease_seconds, self._limits.max_lease_seconds) or None
        step, _ = await self._mutate(
            actor, workflow_id, lambda wf, now: _renew(wf, step_id, lease_id, lease_seconds, now)
        )
        assert step.lease_expire_time is not None
        return step.lease_expire_time

    async def cancel(
        self, actor: Actor, workflow_id: str, reason: str, expected_etag: str
    ) -> Workflow:
        check_key("workflow_id", workflow_id, self._limits.max_key_bytes)
        if len(reason.encode()) > self._limits.max_metadata_bytes:
            raise LimitExceededError("reason", self._limits.max_metadata_bytes, "is too long")
        _, workflow = await self._mutate(
            actor,
            workflow_id,
            lambda wf, now: _cancel(wf, reason, expected_etag, now),
            retry_conflicts=not expected_etag,
        )
        return workflow

    async def expire_leases(self, limit: int = 100) -> int:
        """Applies expired leases of every tenant's workflows (a background
        sweep: claims apply them too, but a workflow nobody claims from must
        still fail when its last attempt's worker is gone)."""
        due = await self._store.find_expired_leases(self._clock(), limit)
        for tenant, workflow_id in due:
            await self._mutate(system_actor("ExpireLeases", tenant), workflow_id, _expire_only)
        return len(due)

    async def transitions(self, tenant: str, workflow_id: str) -> list[Transition]:
        check_key("workflow_id", workflow_id, self._limits.max_key_bytes)
        return await self._store.list_transitions(tenant, workflow_id)

    # ----- claims ----------------------------------------------------------------

    async def _claim_once(self, actor: Actor, request: ClaimRequest) -> list[ClaimedStep]:
        now = self._clock()
        if request.workflow_id:
            workflow_ids = [request.workflow_id]
        else:
            found = await self._store.find_claimable(
                actor.tenant, None, request.step_names, now, request.max_steps * 4
            )
            workflow_ids = list(dict.fromkeys(workflow_id for workflow_id, _ in found))
        claimed: list[ClaimedStep] = []
        for workflow_id in workflow_ids:
            wanted = request.max_steps - len(claimed)
            if wanted <= 0:
                break

            def take(wf: Workflow, now: float, wanted: int = wanted) -> _Change[list[ClaimedStep]]:
                return _claim(wf, request, wanted, now)

            taken, _ = await self._mutate(actor, workflow_id, take)
            claimed.extend(taken)
        return claimed

    def _checked_claim(self, request: ClaimRequest) -> ClaimRequest:
        limits = self._limits
        check_key("worker_id", request.worker_id, limits.max_key_bytes)
        check_key("workflow_id", request.workflow_id, limits.max_key_bytes, required=False)
        for index, name in enumerate(request.step_names):
            check_key(f"step_names[{index}]", name, limits.max_key_bytes)
        check_non_negative("max_steps", request.max_steps)
        check_non_negative("lease_duration", request.lease_seconds)
        check_non_negative("wait_timeout", request.wait_seconds)
        return replace(
            request,
            max_steps=min(request.max_steps or 1, limits.max_claim_steps),
            lease_seconds=min(
                request.lease_seconds or limits.default_lease_seconds, limits.max_lease_seconds
            ),
        )

    # ----- shared machinery --------------------------------------------------------

    async def _mutate(
        self,
        actor: Actor,
        workflow_id: str,
        change: Callable[[Workflow, float], _Change[T]],
        retry_conflicts: bool = True,
    ) -> tuple[T, Workflow]:
        """Read, apply, compare-and-swap; retried on conflicts. Returns the
        change's result and the workflow as stored afterwards."""
        for attempt in range(CAS_RETRIES):
            current = await self.get(actor.tenant, workflow_id)
            now = self._clock()
            expired, expiries = _expire_leases(current, now)
            outcome = change(expired, now)
            if outcome.workflow is None and not expiries:
                return outcome.result, current
            after = outcome.workflow or expired
            after = replace(after, revision=current.revision + 1, update_time=now)
            transitions = expiries + outcome.transitions
            record = self._record(after, transitions)
            audit = record_for(
                actor, WORKFLOW_ENTITY, workflow_id, after.revision, now, _summary(transitions)
            )
            try:
                await self._store.replace_workflow(actor.tenant, record, current.revision, audit)
            except ConcurrentModificationError:
                if not retry_conflicts:
                    raise EtagMismatchError(f"workflow {workflow_id!r} changed") from None
                # Spread contending writers out a little.
                await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
                continue
            self._signal()
            return outcome.result, after
        raise ConcurrentModificationError(
            f"workflow {workflow_id!r} is changing too fast; retry the call"
        )

    def _signal(self) -> None:
        """Wakes every long-polling claim: something may be ready now."""
        self._changed.set()
        self._changed = asyncio.Event()

    def _record(self, workflow: Workflow, transitions: tuple[Transition, ...]) -> WorkflowRecord:
        document = json.dumps(
            workflow_to_document(workflow), separators=(",", ":"), sort_keys=True
        ).encode()
        if len(document) > self._limits.max_workflow_bytes:
            raise LimitExceededError(
                "steps", self._limits.max_workflow_bytes, f"the workflow is {len(document)} bytes"
            )
        return WorkflowRecord(
            workflow_id=workflow.workflow_id,
            status=workflow.status,
            create_time=workflow.create_time,
            revision=workflow.revision,
            document=Payload(WORKFLOW_STATE_CONTENT_TYPE, WORKFLOW_STATE_VERSION, document),
            claimable=claimable_steps(workflow),
            transitions=transitions,
        )

    def _decode(self, record: WorkflowRecord) -> Workflow:
        document = self._upgrades.upgrade(record.document)
        workflow = workflow_from_document(json.loads(document.data))
        return replace(workflow, revision=record.revision)

    def _check_step_call(
        self, workflow_id: str, step_id: str, lease_id: str, lease_required: bool
    ) -> None:
        check_key("workflow_id", workflow_id, self._limits.max_key_bytes)
        check_key("step_id", step_id, self._limits.max_key_bytes)
        check_key("lease_id", lease_id, self._limits.max_key_bytes, required=lease_required)

    def _validated_steps(self, specs: Sequence[StepSpec]) -> tuple[Step, ...]:
        limits = self._limits
        if not specs:
            raise InvalidArgumentError("steps", "must not be empty")
        if len(specs) > limits.max_steps:
            raise LimitExceededError("steps", limits.max_steps, f"has {len(specs)} steps")
        known: set[str] = set()
        for index, spec in enumerate(specs):
            self._check_spec(f"steps[{index}]", spec)
            if spec.step_id in known:
                raise InvalidArgumentError(f"steps[{index}].step_id", "repeats another step's id")
            known.add(spec.step_id)
        for index, spec in enumerate(specs):
            for dependency in spec.depends_on:
                if dependency not in known:
                    raise InvalidArgumentError(
                        f"steps[{index}].depends_on", f"names unknown step {dependency!r}"
                    )
        _check_acyclic(specs)
        return tuple(_step_from_spec(spec) for spec in specs)

    def _check_spec(self, field_name: str, spec: StepSpec) -> None:
        limits = self._limits
        check_key(f"{field_name}.step_id", spec.step_id, limits.max_key_bytes)
        check_key(f"{field_name}.name", spec.name, limits.max_key_bytes, required=False)
        if len(spec.depends_on) > limits.max_dependencies:
            raise LimitExceededError(
                f"{field_name}.depends_on", limits.max_dependencies, "has too many entries"
            )
        check_non_negative(f"{field_name}.max_retries", spec.max_retries)
        if spec.max_retries > limits.max_retries:
            raise LimitExceededError(f"{field_name}.max_retries", limits.max_retries, "too many")
        if spec.inputs is not None and spec.inputs.size > limits.max_step_input_bytes:
            raise LimitExceededError(
                f"{field_name}.inputs", limits.max_step_input_bytes, f"is {spec.inputs.size} bytes"
            )
        _check_backoff(f"{field_name}.backoff", spec.backoff)


# ----- transitions (pure: workflow + now -> change) -----------------------------------------


def _expire_leases(workflow: Workflow, now: float) -> tuple[Workflow, tuple[Transition, ...]]:
    """Applies every lease that expired by `now` as a failed, retryable attempt."""
    if workflow.status != WorkflowStatus.RUNNING:
        return workflow, ()
    expired = [
        step
        for step in workflow.steps
        if step.status == StepStatus.RUNNING
        and step.lease_expire_time is not None
        and step.lease_expire_time <= now
    ]
    transitions: list[Transition] = []
    for step in expired:
        assert step.lease_expire_time is not None
        error = StepError(
            message=f"lease of worker {step.worker_id!r} expired",
            type=LEASE_EXPIRED_TYPE,
            retryable=True,
            attempt=step.attempt,
            time=step.lease_expire_time,
            lease_id=step.lease_id,
            lease_expired=True,
        )
        # Ready again at once: the lease length was the wait.
        workflow = _record_failure(workflow, step, error, step.lease_expire_time, now)
        transitions.append(
            Transition(
                step.step_id, "LEASE_EXPIRED", step.attempt, step.lease_id, step.worker_id, now
            )
        )
    return workflow, tuple(transitions)


def _summary(transitions: Sequence[Transition]) -> str:
    """The audit summary of one saved change, from its log entries."""
    if not transitions:
        return "renewed a lease"
    return "; ".join(
        f"{t.kind.lower()} {t.step_id or 'workflow'}"
        + (f" attempt {t.attempt}" if t.attempt else "")
        + (f" by {t.worker_id}" if t.worker_id else "")
        for t in transitions
    )


def _expire_only(workflow: Workflow, now: float) -> _Change[None]:
    return _Change(None, (), None)


def ready_step_ids(workflow: Workflow, now: float) -> list[str]:
    """Steps a claim may take now, in definition order."""
    if workflow.status != WorkflowStatus.RUNNING:
        return []
    statuses = {step.step_id: step.status for step in workflow.steps}
    ready = []
    for step in workflow.steps:
        if step.status == StepStatus.PENDING:
            if all(statuses[d] in DONE_FOR_DEPENDENTS for d in step.depends_on):
                ready.append(step.step_id)
        elif step.status == StepStatus.RETRYING and (
            step.next_retry_time is None or step.next_retry_time <= now
        ):
            ready.append(step.step_id)
    return ready


def _claim(
    workflow: Workflow, request: ClaimRequest, wanted: int, now: float
) -> _Change[list[ClaimedStep]]:
    names = set(request.step_names)
    chosen = [
        workflow.step(step_id)
        for step_id in ready_step_ids(workflow, now)
        if not names or workflow.step(step_id).name in names
    ][:wanted]
    if not chosen:
        return _Change(None, (), [])
    claimed_steps = [
        replace(
            step,
            status=StepStatus.RUNNING,
            attempt=step.attempt + 1,
            worker_id=request.worker_id,
            lease_id=uuid.uuid4().hex,
            lease_expire_time=now + request.lease_seconds,
            lease_seconds=request.lease_seconds,
            next_retry_time=None,
            start_time=step.start_time if step.start_time is not None else now,
        )
        for step in chosen
    ]
    after = workflow.with_steps(claimed_steps)
    outputs = {s.step_id: s.outputs for s in workflow.steps if s.status == StepStatus.SUCCESS}
    claimed = [
        ClaimedStep(
            workflow.workflow_id,
            step,
            {d: outputs[d] or Payload() for d in step.depends_on if d in outputs},
        )
        for step in claimed_steps
    ]
    transitions = tuple(
        Transition(s.step_id, "CLAIM", s.attempt, s.lease_id, s.worker_id, now)
        for s in claimed_steps
    )
    return _Change(after, transitions, claimed)


def _held_step(workflow: Workflow, step_id: str, lease_id: str, now: float) -> Step:
    """The step if `lease_id` holds it now; otherwise the contract's error,
    chosen for what the worker should conclude (checkpoint.proto, CompleteStep):

    * WORKFLOW_FINISHED: the workflow ended, however (SUCCESS included): nothing
      of it runs again, so nothing is left to retry or claim;
    * LEASE_EXPIRED: this lease expired and the step is still to be done (it
      waits for a claim or runs under another lease): the worker was too slow;
    * LEASE_MISMATCH: any other lease that is not the step's: unknown, or the
      step finished under another lease, so this worker's result is not needed.
    """
    step = workflow.step(step_id)
    if workflow.status != WorkflowStatus.RUNNING:
        raise workflow_finished(workflow)
    if step.status == StepStatus.RUNNING and step.lease_id == lease_id:
        return step
    expired = any(e.lease_id == lease_id and e.lease_expired for e in step.errors)
    if expired and step.status not in FINISHED_STEP:
        raise lease_expired(step_id)
    raise lease_mismatch(step_id)


def _complete(
    workflow: Workflow, step_id: str, lease_id: str, outputs: Payload | None, now: float
) -> _Change[StepResult]:
    step = workflow.step(step_id)
    if step.status == StepStatus.SUCCESS and step.completed_lease_id == lease_id:
        return _Change(None, (), StepResult(step, True, workflow.status))
    step = _held_step(workflow, step_id, lease_id, now)
    done = replace(
        _without_lease(step),
        status=StepStatus.SUCCESS,
        outputs=outputs,
        end_time=now,
        completed_lease_id=lease_id,
    )
    after = _settle(workflow.with_steps([done]), now)
    transition = Transition(step_id, "COMPLETE", step.attempt, lease_id, step.worker_id, now)
    return _Change(after, (transition,), StepResult(done, False, after.status))


def _fail(
    workflow: Workflow, step_id: str, lease_id: str, report: FailureReport, now: float
) -> _Change[StepResult]:
    step = workflow.step(step_id)
    if any(e.lease_id == lease_id and not e.lease_expired for e in step.errors):
        return _Change(None, (), StepResult(step, True, workflow.status))
    step = _held_step(workflow, step_id, lease_id, now)
    error = replace(
        report.error,
        retryable=report.retryable,
        attempt=step.attempt,
        time=now,
        lease_id=lease_id,
        lease_expired=False,
    )
    delay = report.retry_delay_seconds
    retry_at = now + (delay if delay is not None else step.backoff.delay(step.attempt))
    after = _record_failure(workflow, step, error, retry_at, now)
    failed = after.step(step_id)
    kind = "RETRY" if failed.status == StepStatus.RETRYING else "FAIL"
    transition = Transition(step_id, kind, step.attempt, lease_id, step.worker_id, now)
    return _Change(after, (transition,), StepResult(failed, False, after.status))


def _record_failure(
    workflow: Workflow, step: Step, error: StepError, retry_at: float, now: float
) -> Workflow:
    """A failed attempt: RETRYING if allowed and left, else FAILED (which
    fails the workflow)."""
    errors = (*step.errors, error)
    if error.retryable and step.attempt <= step.max_retries:
        retrying = replace(
            _without_lease(step),
            status=StepStatus.RETRYING,
            errors=errors,
            next_retry_time=retry_at,
        )
        return workflow.with_steps([retrying])
    failed = replace(_without_lease(step), status=StepStatus.FAILED, errors=errors, end_time=now)
    return _end(
        workflow.with_steps([failed]),
        WorkflowStatus.FAILED,
        f"workflow failed: step {step.step_id!r} failed",
        now,
    )


def _skip(
    workflow: Workflow, step_id: str, lease_id: str, reason: str, now: float
) -> _Change[StepResult]:
    step = workflow.step(step_id)
    if step.status == StepStatus.SKIPPED:
        return _Change(None, (), StepResult(step, True, workflow.status))
    if workflow.status != WorkflowStatus.RUNNING:
        raise workflow_finished(workflow)
    if step.status in FINISHED_STEP:
        raise StepConditionError("STEP_FINISHED", f"step {step_id!r} is {step.status.name}")
    if step.status == StepStatus.RUNNING:
        step = _held_step(workflow, step_id, lease_id, now)
    skipped = replace(_without_lease(step), status=StepStatus.SKIPPED, reason=reason, end_time=now)
    after = _settle(workflow.with_steps([skipped]), now)
    transition = Transition(step_id, "SKIP", step.attempt, lease_id, step.worker_id, now)
    return _Change(after, (transition,), StepResult(skipped, False, after.status))


def _renew(
    workflow: Workflow, step_id: str, lease_id: str, lease_seconds: float | None, now: float
) -> _Change[Step]:
    step = _held_step(workflow, step_id, lease_id, now)
    seconds = lease_seconds or step.lease_seconds
    renewed = replace(step, lease_expire_time=now + seconds, lease_seconds=seconds)
    return _Change(workflow.with_steps([renewed]), (), renewed)


def _cancel(workflow: Workflow, reason: str, expected_etag: str, now: float) -> _Change[Workflow]:
    if expected_etag and expected_etag != workflow.etag:
        raise EtagMismatchError(
            f"workflow {workflow.workflow_id!r} is at etag {workflow.etag}, not {expected_etag}"
        )
    if workflow.status == WorkflowStatus.CANCELLED:
        return _Change(None, (), workflow)
    if workflow.status != WorkflowStatus.RUNNING:
        raise workflow_finished(workflow)
    after = _end(workflow, WorkflowStatus.CANCELLED, reason, now)
    return _Change(after, (Transition("", "CANCEL", 0, time=now),), after)


def _settle(workflow: Workflow, now: float) -> Workflow:
    """SUCCESS once every step is SUCCESS or SKIPPED."""
    if all(step.status in DONE_FOR_DEPENDENTS for step in workflow.steps):
        return replace(workflow, status=WorkflowStatus.SUCCESS, end_time=now)
    return workflow


def _end(workflow: Workflow, status: WorkflowStatus, reason: str, now: float) -> Workflow:
    """Ends the workflow; every step not finished becomes CANCELLED."""
    cancelled = [
        replace(_without_lease(step), status=StepStatus.CANCELLED, reason=reason, end_time=now)
        for step in workflow.steps
        if step.status not in FINISHED_STEP
    ]
    return replace(workflow.with_steps(cancelled), status=status, end_time=now)


def _without_lease(step: Step) -> Step:
    return replace(step, worker_id="", lease_id="", lease_expire_time=None, next_retry_time=None)


def claimable_steps(workflow: Workflow) -> tuple[ClaimableStep, ...]:
    """The claim index of a workflow: when each step may next be claimed."""
    if workflow.status != WorkflowStatus.RUNNING:
        return ()
    ready = set(ready_step_ids(workflow, float("inf")))
    entries = []
    for step in workflow.steps:
        if step.status == StepStatus.PENDING and step.step_id in ready:
            entries.append(ClaimableStep(step.step_id, step.name, workflow.create_time, "ready"))
        elif step.status == StepStatus.RETRYING:
            at = step.next_retry_time or workflow.create_time
            entries.append(ClaimableStep(step.step_id, step.name, at, "retry"))
        elif step.status == StepStatus.RUNNING and step.lease_expire_time is not None:
            entries.append(ClaimableStep(step.step_id, step.name, step.lease_expire_time, "lease"))
    return tuple(entries)


# ----- validation helpers ------------------------------------------------------------------


def _check_backoff(field_name: str, backoff: Backoff) -> None:
    check_non_negative(f"{field_name}.initial_interval", backoff.initial_seconds)
    check_non_negative(f"{field_name}.max_interval", backoff.max_seconds)
    if backoff.multiplier != 0 and backoff.multiplier < 1:
        raise InvalidArgumentError(f"{field_name}.multiplier", "must be at least 1")
    if not all(math.isfinite(v) for v in (backoff.multiplier, backoff.max_seconds)):
        raise InvalidArgumentError(field_name, "must be finite")
    defaults = _with_defaults(backoff)
    if defaults.max_seconds < defaults.initial_seconds:
        raise InvalidArgumentError(
            f"{field_name}.max_interval", "must not be below initial_interval"
        )


def _with_defaults(backoff: Backoff) -> Backoff:
    """Zeros (proto "unset") become the documented defaults."""
    default = Backoff()
    return Backoff(
        initial_seconds=backoff.initial_seconds or default.initial_seconds,
        multiplier=backoff.multiplier or default.multiplier,
        max_seconds=backoff.max_seconds or default.max_seconds,
    )


def _check_acyclic(specs: Sequence[StepSpec]) -> None:
    """Kahn's algorithm: a step left over after peeling ready steps is on a cycle."""
    waiting = {spec.step_id: set(spec.depends_on) for spec in specs}
    dependents: dict[str, list[str]] = {spec.step_id: [] for spec in specs}
    for spec in specs:
        for dependency in set(spec.depends_on):
            dependents[dependency].append(spec.step_id)
    free = [step_id for step_id, deps in waiting.items() if not deps]
    done = 0
    while free:
        current = free.pop()
        done += 1
        for dependent in dependents[current]:
            waiting[dependent].discard(current)
            if not waiting[dependent]:
                free.append(dependent)
    if done < len(specs):
        stuck = sorted(step_id for step_id, deps in waiting.items() if deps)
        index = next(i for i, spec in enumerate(specs) if spec.step_id == stuck[0])
        raise InvalidArgumentError(
            f"steps[{index}].depends_on", f"forms a cycle through {', '.join(stuck[:5])}"
        )


def _step_from_spec(spec: StepSpec) -> Step:
    return Step(
        step_id=spec.step_id,
        name=spec.name or spec.step_id,
        depends_on=tuple(dict.fromkeys(spec.depends_on)),
        inputs=spec.inputs,
        max_retries=spec.max_retries,
        backoff=_with_defaults(spec.backoff),
    )


def _cursor_from(position: Any) -> tuple[float, str] | None:
    if position is None:
        return None
    try:
        create_time, workflow_id = position
        return float(create_time), str(workflow_id)
    except (TypeError, ValueError):
        raise InvalidArgumentError("page_token", "is malformed") from None


# ----- the document (schema v3) --------------------------------------------------------------


# ----- background maintenance ------------------------------------------------------------------


async def maintain_forever(
    checkpoints: CheckpointManager, workflows: WorkflowManager, interval_seconds: float = 1.0
) -> None:
    """Expires step leases and forgets old tombstones, every interval, until
    cancelled. A failing round is logged and retried on the next one."""
    while True:
        await asyncio.sleep(interval_seconds)
        try:
            expired = await workflows.expire_leases()
            forgotten = await checkpoints.sweep_tombstones()
            observations.swept("checkpoints")
            if expired or forgotten:
                log.info(
                    "checkpoint maintenance",
                    extra={"expired_leases": expired, "forgotten_tombstones": forgotten},
                )
        except Exception:
            log.exception("checkpoint maintenance failed; will retry")
