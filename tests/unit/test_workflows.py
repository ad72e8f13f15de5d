"""WorkflowManager rules in process: readiness, retries, leases, skips, cancels."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.audit.service import Actor
from statekeeper.core.errors import (
    AlreadyExistsError,
    EtagMismatchError,
    InvalidArgumentError,
    LimitExceededError,
    NotFoundError,
)
from statekeeper.core.schema_upgrades import Payload, builtin_registry
from statekeeper.core.tenancy import Principal
from statekeeper.core.workflows.models import (
    Backoff,
    ClaimRequest,
    FailureReport,
    StepConditionError,
    StepError,
    StepSpec,
    StepStatus,
    WorkflowLimits,
    WorkflowStatus,
)
from statekeeper.core.workflows.service import WorkflowManager
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.workflows import EmbeddedWorkflowStore
from tests.fakes.clock import FakeClock

T = "tenant-a"
A = Actor(Principal(T, "key-test"), "statekeeper.v1.CheckpointService", "Test")


async def open_manager(path: Path, clock: FakeClock) -> tuple[WorkflowManager, EmbeddedStorage]:
    storage = EmbeddedStorage(path)
    await storage.start()
    store = EmbeddedWorkflowStore(storage)
    await store.start()
    return WorkflowManager(store, WorkflowLimits(), builtin_registry(), clock=clock), storage


@pytest.fixture
async def manager(tmp_path: Path, clock: FakeClock) -> AsyncIterator[WorkflowManager]:
    created, storage = await open_manager(tmp_path, clock)
    yield created
    await storage.close()


def diamond(max_retries: int = 0) -> list[StepSpec]:
    """a -> (b, c) -> d"""
    return [
        StepSpec("a", max_retries=max_retries),
        StepSpec("b", depends_on=("a",), max_retries=max_retries),
        StepSpec("c", depends_on=("a",), max_retries=max_retries),
        StepSpec("d", depends_on=("b", "c"), max_retries=max_retries),
    ]


def claim_of(worker: str, **kw: object) -> ClaimRequest:
    return ClaimRequest(worker_id=worker, **kw)  # type: ignore[arg-type]


async def claim_ids(manager: WorkflowManager, worker: str = "w", **kw: object) -> list[str]:
    claimed = await manager.claim(A, claim_of(worker, max_steps=10, **kw), None)
    return sorted(c.step.step_id for c in claimed)


def failure(retryable: bool = True, message: str = "boom") -> FailureReport:
    return FailureReport(StepError(message=message), retryable)


# ----- start ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("specs", "field"),
    [
        ([], "steps"),
        ([StepSpec("a"), StepSpec("a")], "steps[1].step_id"),
        ([StepSpec("a", depends_on=("x",))], "steps[0].depends_on"),
        (
            [StepSpec("a", depends_on=("b",)), StepSpec("b", depends_on=("a",))],
            "steps[0].depends_on",
        ),
        ([StepSpec("a", depends_on=("a",))], "steps[0].depends_on"),
        ([StepSpec("a", max_retries=-1)], "steps[0].max_retries"),
        ([StepSpec("a", backoff=Backoff(1, 0.5, 10))], "steps[0].backoff.multiplier"),
        ([StepSpec("a", backoff=Backoff(10, 2, 5))], "steps[0].backoff.max_interval"),
        ([StepSpec("")], "steps[0].step_id"),
    ],
)
async def test_start_rejects_bad_graphs_naming_the_field(
    manager: WorkflowManager, specs: list[StepSpec], field: str
) -> None:
    with pytest.raises(InvalidArgumentError) as error:
        await manager.start(A, "w", specs, {}, "")
    assert error.value.field == field


async def test_start_limits_and_duplicates(manager: WorkflowManager) -> None:
    with pytest.raises(LimitExceededError):
        await manager.start(A, "big", [StepSpec(f"s{i}") for i in range(1001)], {}, "")
    with pytest.raises(LimitExceededError):
        await manager.start(A, "w", [StepSpec("a", inputs=Payload("x", 0, b"x" * 300_000))], {}, "")
    await manager.start(A, "w", diamond(), {"k": 1.0}, "exec-1")
    with pytest.raises(AlreadyExistsError):
        await manager.start(A, "w", diamond(), {}, "")
    workflow = await manager.get(T, "w")
    assert workflow.metadata == {"k": 1} and workflow.execution_id == "exec-1"
    assert workflow.steps[0].backoff == Backoff(1.0, 2.0, 300.0), "defaults filled in"


# ----- readiness --------------------------------------------------------------------------


async def test_dependents_become_ready_with_outputs(manager: WorkflowManager) -> None:
    await manager.start(A, "w", diamond(), {}, "")
    (a,) = await manager.claim(A, claim_of("w1", max_steps=5), None)
    assert a.step.step_id == "a" and a.step.attempt == 1 and a.dependency_outputs == {}
    assert await claim_ids(manager) == [], "b and c wait for a"
    out = Payload("application/json", 0, b'{"a":1}')
    await manager.complete(A, "w", "a", a.step.lease_id, out)
    claimed = await manager.claim(A, claim_of("w1", max_steps=5), None)
    assert sorted(c.step.step_id for c in claimed) == ["b", "c"]
    assert all(c.dependency_outputs == {"a": out} for c in claimed)


async def test_skipped_dependencies_count_as_done(manager: WorkflowManager) -> None:
    await manager.start(A, "w", diamond(), {}, "")
    await manager.skip(A, "w", "a", "", "not needed")
    claimed = await manager.claim(A, claim_of("w1", max_steps=5), None)
    assert sorted(c.step.step_id for c in claimed) == ["b", "c"]
    assert all(c.dependency_outputs == {} for c in claimed), "SKIPPED deps are absent"
    for c in claimed:
        await manager.complete(A, "w", c.step.step_id, c.step.lease_id, None)
    (d,) = await manager.claim(A, claim_of("w1"), None)
    result = await manager.complete(A, "w", "d", d.step.lease_id, None)
    assert result.workflow_status == WorkflowStatus.SUCCESS


async def test_claims_filter_by_step_name_and_workflow(manager: WorkflowManager) -> None:
    await manager.start(A, "w1", [StepSpec("a", "fetch"), StepSpec("b", "parse")], {}, "")
    await manager.start(A, "w2", [StepSpec("a", "fetch")], {}, "")
    assert await claim_ids(manager, step_names=("parse",)) == ["b"]
    claimed = await manager.claim(A, claim_of("x", max_steps=10, step_names=("fetch",)), None)
    assert sorted((c.workflow_id, c.step.step_id) for c in claimed) == [("w1", "a"), ("w2", "a")]
    with pytest.raises(NotFoundError):
        await manager.claim(A, claim_of("x", workflow_id="nope"), None)


async def test_concurrent_claims_never_share_a_step(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec(f"s{i}") for i in range(6)], {}, "")
    batches = await asyncio.gather(
        *(manager.claim(A, claim_of(f"worker-{i}", workflow_id="w"), None) for i in range(10))
    )
    taken = [c.step.step_id for batch in batches for c in batch]
    assert sorted(taken) == [f"s{i}" for i in range(6)]


async def test_long_poll_wakes_when_a_step_becomes_ready(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a"), StepSpec("b", depends_on=("a",))], {}, "")
    (a,) = await manager.claim(A, claim_of("w1"), None)
    waiting = asyncio.create_task(manager.claim(A, claim_of("w2", wait_seconds=5.0), None))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await manager.complete(A, "w", "a", a.step.lease_id, None)
    (b,) = await asyncio.wait_for(waiting, 2.0)
    assert b.step.step_id == "b"


async def test_long_poll_gives_up_at_the_deadline(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a"), StepSpec("b", depends_on=("a",))], {}, "")
    await manager.claim(A, claim_of("w1"), None)
    started = asyncio.get_running_loop().time()
    assert await manager.claim(A, claim_of("w2", wait_seconds=30.0), deadline_seconds=0.3) == []
    assert asyncio.get_running_loop().time() - started < 2.0


# ----- retries and failures ----------------------------------------------------------------


async def test_retries_follow_backoff_until_the_budget_is_spent(
    manager: WorkflowManager, clock: FakeClock
) -> None:
    await manager.start(
        A,
        "w",
        [StepSpec("a", max_retries=2, backoff=Backoff(1.0, 3.0, 5.0)), StepSpec("z")],
        {},
        "",
    )
    waits = []
    for attempt in (1, 2):
        (a,) = await manager.claim(A, claim_of("w", step_names=("a",)), None)
        assert a.step.attempt == attempt
        result = await manager.fail(A, "w", "a", a.step.lease_id, failure())
        assert result.step.status == StepStatus.RETRYING
        assert result.step.next_retry_time is not None
        waits.append(result.step.next_retry_time - clock.now)
        assert await claim_ids(manager, step_names=("a",)) == [], "not before next_retry_time"
        clock.now += waits[-1]
    assert waits == [1.0, 3.0]
    (a,) = await manager.claim(A, claim_of("w", step_names=("a",)), None)
    result = await manager.fail(A, "w", "a", a.step.lease_id, failure())
    assert result.step.status == StepStatus.FAILED and result.step.attempt == 3
    assert [e.attempt for e in result.step.errors] == [1, 2, 3]
    workflow = await manager.get(T, "w")
    assert workflow.status == WorkflowStatus.FAILED
    assert workflow.step("z").status == StepStatus.CANCELLED


async def test_non_retryable_failure_fails_at_once(manager: WorkflowManager) -> None:
    await manager.start(A, "w", diamond(max_retries=5), {}, "")
    (a,) = await manager.claim(A, claim_of("w"), None)
    result = await manager.fail(A, "w", "a", a.step.lease_id, failure(retryable=False))
    assert result.step.status == StepStatus.FAILED
    assert result.workflow_status == WorkflowStatus.FAILED
    statuses = {s.step_id: s.status for s in (await manager.get(T, "w")).steps}
    assert statuses == {
        "a": StepStatus.FAILED,
        "b": StepStatus.CANCELLED,
        "c": StepStatus.CANCELLED,
        "d": StepStatus.CANCELLED,
    }


async def test_explicit_retry_delay_overrides_backoff(
    manager: WorkflowManager, clock: FakeClock
) -> None:
    await manager.start(A, "w", [StepSpec("a", max_retries=1)], {}, "")
    (a,) = await manager.claim(A, claim_of("w"), None)
    report = FailureReport(StepError("slow down"), True, retry_delay_seconds=42.0)
    result = await manager.fail(A, "w", "a", a.step.lease_id, report)
    assert result.step.next_retry_time == clock.now + 42.0


# ----- leases -------------------------------------------------------------------------------


async def test_expired_lease_goes_to_another_worker(
    manager: WorkflowManager, clock: FakeClock
) -> None:
    await manager.start(A, "w", [StepSpec("a", max_retries=1)], {}, "")
    (first,) = await manager.claim(A, claim_of("dead", lease_seconds=10.0), None)
    clock.now += 5
    assert await claim_ids(manager, "other") == [], "the lease still holds"
    clock.now += 6
    (second,) = await manager.claim(A, claim_of("other"), None)
    assert second.step.attempt == 2 and second.step.worker_id == "other"
    assert second.step.errors[0].type == "lease_expired"
    with pytest.raises(StepConditionError) as late:
        await manager.complete(A, "w", "a", first.step.lease_id, None)
    assert late.value.metadata["condition"] == "LEASE_EXPIRED"
    with pytest.raises(StepConditionError) as renew:
        await manager.renew(A, "w", "a", first.step.lease_id, None)
    assert renew.value.metadata["condition"] == "LEASE_EXPIRED"


async def test_expired_last_attempt_fails_in_the_sweep(
    manager: WorkflowManager, clock: FakeClock
) -> None:
    await manager.start(A, "w", [StepSpec("a"), StepSpec("b")], {}, "")
    await manager.claim(A, claim_of("dead", step_names=("a",), lease_seconds=1.0), None)
    clock.now += 2
    assert await manager.expire_leases() == 1
    workflow = await manager.get(T, "w")
    assert workflow.status == WorkflowStatus.FAILED
    assert workflow.step("a").status == StepStatus.FAILED
    assert workflow.step("b").status == StepStatus.CANCELLED


async def test_renewal_extends_the_lease(manager: WorkflowManager, clock: FakeClock) -> None:
    await manager.start(A, "w", [StepSpec("a")], {}, "")
    (a,) = await manager.claim(A, claim_of("w", lease_seconds=10.0), None)
    clock.now += 8
    expiry = await manager.renew(A, "w", "a", a.step.lease_id, 20.0)
    assert expiry == clock.now + 20.0
    clock.now += 15
    assert await claim_ids(manager, "thief") == []
    await manager.complete(A, "w", "a", a.step.lease_id, None)


async def test_wrong_lease_is_a_mismatch(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a")], {}, "")
    await manager.claim(A, claim_of("w"), None)
    with pytest.raises(StepConditionError) as error:
        await manager.complete(A, "w", "a", "not-the-lease", None)
    assert error.value.metadata["condition"] == "LEASE_MISMATCH"


# ----- idempotency ------------------------------------------------------------------------


async def test_completion_is_recorded_once(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a"), StepSpec("b")], {}, "")
    (a,) = await manager.claim(A, claim_of("w", step_names=("a",)), None)
    first = await manager.complete(A, "w", "a", a.step.lease_id, Payload("t", 0, b"1"))
    again = await manager.complete(A, "w", "a", a.step.lease_id, Payload("t", 0, b"2"))
    assert not first.repeated and again.repeated
    assert again.step.outputs == Payload("t", 0, b"1"), "the first result stands"
    completions = [t for t in await manager.transitions(T, "w") if t.kind == "COMPLETE"]
    assert len(completions) == 1


async def test_failure_is_recorded_once_per_lease(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a", max_retries=3)], {}, "")
    (a,) = await manager.claim(A, claim_of("w"), None)
    await manager.fail(A, "w", "a", a.step.lease_id, failure())
    again = await manager.fail(A, "w", "a", a.step.lease_id, failure())
    assert again.repeated and len(again.step.errors) == 1


async def test_repeat_after_the_workflow_ended_is_still_recognised(
    manager: WorkflowManager,
) -> None:
    await manager.start(A, "w", [StepSpec("a")], {}, "")
    (a,) = await manager.claim(A, claim_of("w"), None)
    await manager.complete(A, "w", "a", a.step.lease_id, None)
    again = await manager.complete(A, "w", "a", a.step.lease_id, None)
    assert again.repeated and again.workflow_status == WorkflowStatus.SUCCESS


# ----- skip and cancel ------------------------------------------------------------------------


async def test_skip_rules(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a"), StepSpec("b"), StepSpec("c")], {}, "")
    (a,) = await manager.claim(A, claim_of("w", step_names=("a",)), None)
    with pytest.raises(StepConditionError) as mismatch:
        await manager.skip(A, "w", "a", "", "no lease")
    assert mismatch.value.metadata["condition"] == "LEASE_MISMATCH"
    await manager.skip(A, "w", "a", a.step.lease_id, "worker decided")
    await manager.skip(A, "w", "b", "", "")
    assert (await manager.skip(A, "w", "b", "", "")).repeated
    (c,) = await manager.claim(A, claim_of("w"), None)
    await manager.complete(A, "w", "c", c.step.lease_id, None)
    with pytest.raises(StepConditionError) as finished:
        await manager.skip(A, "w", "c", "", "")
    assert finished.value.metadata["condition"] == "WORKFLOW_FINISHED"


async def test_skip_of_a_finished_step(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a"), StepSpec("b")], {}, "")
    (a,) = await manager.claim(A, claim_of("w", step_names=("a",)), None)
    await manager.complete(A, "w", "a", a.step.lease_id, None)
    with pytest.raises(StepConditionError) as error:
        await manager.skip(A, "w", "a", "", "")
    assert error.value.metadata["condition"] == "STEP_FINISHED"


async def test_cancel_rules(manager: WorkflowManager) -> None:
    await manager.start(A, "w", diamond(), {}, "")
    (a,) = await manager.claim(A, claim_of("w"), None)
    with pytest.raises(EtagMismatchError):
        await manager.cancel(A, "w", "stop", "r999")
    current = await manager.get(T, "w")
    cancelled = await manager.cancel(A, "w", "stop", current.etag)
    assert cancelled.status == WorkflowStatus.CANCELLED and cancelled.etag != current.etag
    assert {s.status for s in cancelled.steps} == {StepStatus.CANCELLED}
    assert cancelled.step("b").reason == "stop"
    with pytest.raises(StepConditionError) as late:
        await manager.complete(A, "w", "a", a.step.lease_id, None)
    assert late.value.metadata["condition"] == "WORKFLOW_FINISHED"
    assert (await manager.cancel(A, "w", "again", "")).etag == cancelled.etag


async def test_cancel_of_a_finished_workflow_fails(manager: WorkflowManager) -> None:
    await manager.start(A, "w", [StepSpec("a")], {}, "")
    (a,) = await manager.claim(A, claim_of("w"), None)
    await manager.complete(A, "w", "a", a.step.lease_id, None)
    with pytest.raises(StepConditionError):
        await manager.cancel(A, "w", "", "")


# ----- listing and restarts ------------------------------------------------------------------


async def test_list_pages_and_filters_by_status(manager: WorkflowManager, clock: FakeClock) -> None:
    for index in range(5):
        clock.now += 1
        await manager.start(A, f"w{index}", [StepSpec("a")], {}, "")
    await manager.cancel(A, "w1", "", "")
    page, token = await manager.list_workflows(T, None, 2, "")
    rest, end = await manager.list_workflows(T, None, 10, token)
    assert [w.workflow_id for w in page + rest] == ["w4", "w3", "w2", "w1", "w0"] and end == ""
    cancelled, _ = await manager.list_workflows(T, WorkflowStatus.CANCELLED, 10, "")
    assert [w.workflow_id for w in cancelled] == ["w1"]
    with pytest.raises(InvalidArgumentError):
        await manager.list_workflows(T, WorkflowStatus.CANCELLED, 10, token)


async def test_a_restarted_server_resumes_where_it_was(tmp_path: Path, clock: FakeClock) -> None:
    manager, storage = await open_manager(tmp_path, clock)
    await manager.start(A, "w", diamond(), {}, "")
    (a,) = await manager.claim(A, claim_of("w"), None)
    await manager.complete(A, "w", "a", a.step.lease_id, None)
    (b, c) = await manager.claim(A, claim_of("w", max_steps=2), None)
    await storage.close()

    manager, storage = await open_manager(tmp_path, clock)
    await manager.complete(A, "w", b.step.step_id, b.step.lease_id, None)
    await manager.complete(A, "w", c.step.step_id, c.step.lease_id, None)
    (d,) = await manager.claim(A, claim_of("w"), None)
    assert d.step.step_id == "d"
    await storage.close()
