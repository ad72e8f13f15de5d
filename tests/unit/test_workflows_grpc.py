"""Workflows over real gRPC: the wire contract, and three workers running a
50-step DAG with random failures while one of them dies mid-step."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2

from statekeeper_client.v1 import checkpoint_pb2 as pb
from statekeeper_client.v1 import checkpoint_pb2_grpc, common_pb2
from tests.e2e.errors import bad_field, error_info
from tests.harness.deadlines import scaled
from tests.langgraph.harness import CheckpointServer

KEY = (("x-api-key", "key-alpha"),)
TENANT = "alpha"
Stub = checkpoint_pb2_grpc.CheckpointServiceStub


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CheckpointServer]:
    running = CheckpointServer(tmp_path, api_keys={"key-alpha": TENANT})
    running.start()
    yield running
    running.stop()


@pytest.fixture
def stub(server: CheckpointServer) -> Iterator[Stub]:
    with grpc.insecure_channel(server.address) as channel:
        yield Stub(channel)  # type: ignore[no-untyped-call]


def seconds(value: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromNanoseconds(round(value * 1e9))
    return duration


def spec(step_id: str, *deps: str, retries: int = 0) -> pb.WorkflowStepSpec:
    return pb.WorkflowStepSpec(
        step_id=step_id,
        depends_on=list(deps),
        max_retries=retries,
        backoff=pb.StepBackoffPolicy(
            initial_interval=seconds(0.01), multiplier=2.0, max_interval=seconds(0.05)
        ),
    )


def start(stub: Stub, workflow_id: str, steps: list[pb.WorkflowStepSpec]) -> pb.Workflow:
    request = pb.StartWorkflowRequest(workflow_id=workflow_id, steps=steps)
    return stub.StartWorkflow(request, metadata=KEY).workflow  # type: ignore[no-any-return]


def claim(stub: Stub, worker: str, workflow_id: str = "", **kw: object) -> list[pb.ClaimedStep]:
    request = pb.ClaimStepsRequest(worker_id=worker, workflow_id=workflow_id, **kw)  # type: ignore[arg-type]
    return list(stub.ClaimSteps(request, metadata=KEY).steps)


def complete(stub: Stub, workflow_id: str, claimed: pb.ClaimedStep) -> pb.CompleteStepResponse:
    request = pb.CompleteStepRequest(
        workflow_id=workflow_id,
        step_id=claimed.step.step_id,
        lease_id=claimed.lease_id,
        outputs=common_pb2.Payload(content_type="text/plain", data=claimed.step.step_id.encode()),
    )
    return stub.CompleteStep(request, metadata=KEY)  # type: ignore[no-any-return]


# ----- the wire contract -----------------------------------------------------------------


def test_bad_graphs_are_invalid_arguments_naming_the_field(stub: Stub) -> None:
    with pytest.raises(grpc.RpcError) as cycle:
        start(stub, "w", [spec("a", "b"), spec("b", "a")])
    assert cycle.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_field(cycle.value) == "steps[0].depends_on"
    negative = pb.WorkflowStepSpec(
        step_id="a",
        backoff=pb.StepBackoffPolicy(initial_interval=duration_pb2.Duration(seconds=-1)),
    )
    with pytest.raises(grpc.RpcError) as bad_backoff:
        start(stub, "w", [negative])
    assert bad_field(bad_backoff.value) == "steps[0].backoff.initial_interval"
    with pytest.raises(grpc.RpcError) as empty:
        start(stub, "w", [])
    assert bad_field(empty.value) == "steps"
    start(stub, "w", [spec("a")])
    with pytest.raises(grpc.RpcError) as taken:
        start(stub, "w", [spec("a")])
    assert taken.value.code() == grpc.StatusCode.ALREADY_EXISTS


def test_a_spent_budget_fails_the_workflow_and_cancels_the_rest(stub: Stub) -> None:
    start(stub, "w", [spec("a", retries=1), spec("b"), spec("c", "a")])
    (b,) = claim(stub, "w2", "w", step_names=["b"])
    for attempt in (1, 2):
        (a,) = claim(stub, "w1", "w", step_names=["a"])
        assert a.step.attempt == attempt
        failed = stub.FailStep(
            pb.FailStepRequest(
                workflow_id="w",
                step_id="a",
                lease_id=a.lease_id,
                retryable=True,
                retry_delay=seconds(0),
                error=pb.WorkflowStepError(message=f"try {attempt}", type="IOError"),
            ),
            metadata=KEY,
        )
    assert failed.step.status == pb.WORKFLOW_STEP_STATUS_FAILED
    assert failed.workflow_status == pb.WORKFLOW_STATUS_FAILED
    assert [e.message for e in failed.step.errors] == ["try 1", "try 2"]
    assert [e.retryable for e in failed.step.errors] == [True, True]
    workflow = stub.GetWorkflow(pb.GetWorkflowRequest(workflow_id="w"), metadata=KEY).workflow
    statuses = {s.step_id: s.status for s in workflow.steps}
    assert statuses["c"] == pb.WORKFLOW_STEP_STATUS_CANCELLED
    assert statuses["b"] == pb.WORKFLOW_STEP_STATUS_CANCELLED
    with pytest.raises(grpc.RpcError) as late:
        complete(stub, "w", b)
    assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(late.value).metadata["condition"] == "WORKFLOW_FINISHED"


def test_leases_renewals_and_cancel_over_the_wire(stub: Stub) -> None:
    start(stub, "w", [spec("a"), spec("b")])
    (a,) = claim(stub, "w1", "w", step_names=["a"], lease_duration=seconds(5))
    renewed = stub.RenewStepLease(
        pb.RenewStepLeaseRequest(workflow_id="w", step_id="a", lease_id=a.lease_id), metadata=KEY
    )
    assert renewed.lease_expire_time.ToNanoseconds() >= a.lease_expire_time.ToNanoseconds()
    with pytest.raises(grpc.RpcError) as mismatch:
        stub.CompleteStep(
            pb.CompleteStepRequest(workflow_id="w", step_id="a", lease_id="forged"), metadata=KEY
        )
    assert error_info(mismatch.value).metadata["condition"] == "LEASE_MISMATCH"
    with pytest.raises(grpc.RpcError) as stale:
        stub.CancelWorkflow(
            pb.CancelWorkflowRequest(workflow_id="w", expected_etag="r0"), metadata=KEY
        )
    assert stale.value.code() == grpc.StatusCode.ABORTED
    assert error_info(stale.value).reason == "ETAG_MISMATCH"
    cancelled = stub.CancelWorkflow(
        pb.CancelWorkflowRequest(workflow_id="w", reason="operator"), metadata=KEY
    ).workflow
    assert cancelled.status == pb.WORKFLOW_STATUS_CANCELLED
    assert {s.reason for s in cancelled.steps} == {"operator"}
    listed = stub.ListWorkflows(
        pb.ListWorkflowsRequest(status=pb.WORKFLOW_STATUS_CANCELLED), metadata=KEY
    )
    assert [w.workflow_id for w in listed.workflows] == ["w"] and not listed.workflows[0].steps
    with pytest.raises(grpc.RpcError) as missing:
        stub.GetWorkflow(pb.GetWorkflowRequest(workflow_id="nope"), metadata=KEY)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_repeated_completion_records_nothing(stub: Stub) -> None:
    start(stub, "w", [spec("a")])
    (a,) = claim(stub, "w1", "w")
    first = complete(stub, "w", a)
    again = complete(stub, "w", a)
    assert not first.already_completed and again.already_completed
    assert again.workflow_status == pb.WORKFLOW_STATUS_SUCCESS


# ----- three workers, fifty steps, random failures, one worker dies -------------------------


@dataclass
class Plan:
    """A seeded random DAG and which attempts of which steps fail."""

    steps: list[pb.WorkflowStepSpec]
    failing_attempts: dict[str, set[int]]

    @classmethod
    def random(cls, seed: int, size: int = 50) -> Plan:
        rng = random.Random(seed)
        steps, failing = [], {}
        for index in range(size):
            step_id = f"s{index:02d}"
            earlier = [f"s{i:02d}" for i in range(index)]
            deps = rng.sample(earlier, k=min(len(earlier), rng.choice([0, 1, 1, 2, 3])))
            budget = rng.randint(1, 3)
            # Failures stay below the budget, leaving one attempt spare for a
            # lease that expires when a worker dies holding the step.
            failing[step_id] = set(range(1, rng.randint(0, budget - 1) + 1))
            steps.append(spec(step_id, *deps, retries=budget))
        return cls(steps, failing)

    def dependencies(self) -> dict[str, set[str]]:
        return {s.step_id: set(s.depends_on) for s in self.steps}


@dataclass
class Observed:
    lock: threading.Lock = field(default_factory=threading.Lock)
    accepted_completions: Counter[str] = field(default_factory=Counter)
    claims: list[tuple[str, int]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    died_holding: str = ""


def run_worker(
    address: str, name: str, plan: Plan, seen: Observed, stop: threading.Event, die_at: int
) -> None:
    """Claims and runs steps until `stop`; after `die_at` claims (0: never)
    it stops dead while holding a step, as a killed process would."""
    rng = random.Random(name)
    deps = plan.dependencies()
    claimed_so_far = 0
    with grpc.insecure_channel(address) as channel:
        stub = Stub(channel)  # type: ignore[no-untyped-call]
        while not stop.is_set():
            # The lease outlasts the work unless the machine is very busy (a
            # lease that lapses anyway is refused below and handed over).
            lease = seconds(scaled(0.4))
            for claimed in claim(
                stub, name, max_steps=1, lease_duration=lease, wait_timeout=seconds(0.2)
            ):
                step = claimed.step
                claimed_so_far += 1
                with seen.lock:
                    seen.claims.append((step.step_id, step.attempt))
                    missing = deps[step.step_id] - set(claimed.dependency_outputs)
                    if missing:
                        seen.violations.append(f"{step.step_id} claimed before {sorted(missing)}")
                if claimed_so_far == die_at:
                    seen.died_holding = step.step_id
                    return  # dead: no completion, no failure, no renewal
                time.sleep(rng.uniform(0, 0.01))  # the work
                try:
                    finish(stub, claimed, plan, seen)
                except grpc.RpcError as lost:
                    # Our lease lapsed (a slow machine): the server refuses
                    # the result and hands the step to another worker, as
                    # it must; this worker goes on claiming.
                    if lost.code() != grpc.StatusCode.FAILED_PRECONDITION:
                        raise


def finish(stub: Stub, claimed: pb.ClaimedStep, plan: Plan, seen: Observed) -> None:
    step = claimed.step
    if step.attempt in plan.failing_attempts[step.step_id]:
        stub.FailStep(
            pb.FailStepRequest(
                workflow_id="dag",
                step_id=step.step_id,
                lease_id=claimed.lease_id,
                retryable=True,
                error=pb.WorkflowStepError(message="flaky", type="Flaky"),
            ),
            metadata=KEY,
        )
        return
    first = complete(stub, "dag", claimed)
    with seen.lock:
        if not first.already_completed:
            seen.accepted_completions[step.step_id] += 1
    # A worker that lost the reply retries: the server must not record twice.
    again = complete(stub, "dag", claimed)
    with seen.lock:
        if not again.already_completed:
            seen.violations.append(f"{step.step_id} completed twice under one lease")


def test_three_workers_fifty_steps_random_failures_one_worker_dies(
    server: CheckpointServer, stub: Stub
) -> None:
    plan = Plan.random(seed=20240605)
    start(stub, "dag", plan.steps)
    seen, stop = Observed(), threading.Event()
    workers = [
        threading.Thread(target=run_worker, args=(server.address, name, plan, seen, stop, die_at))
        for name, die_at in [("worker-1", 0), ("worker-2", 0), ("doomed", 7)]
    ]
    for worker in workers:
        worker.start()
    try:
        workflow = wait_for_end(stub, "dag", timeout=90)
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=30)

    assert seen.violations == []
    assert seen.died_holding, "the doomed worker died holding a step"
    assert workflow.status == pb.WORKFLOW_STATUS_SUCCESS
    for step in workflow.steps:
        # Attempts that failed: the planned ones, and any whose worker died
        # (which may be a planned one: it then expired before it could fail).
        expired = {e.attempt for e in step.errors if e.type == "lease_expired"}
        failed = {e.attempt for e in step.errors}
        assert failed == plan.failing_attempts[step.step_id] | expired, step.step_id
        assert step.status == pb.WORKFLOW_STEP_STATUS_SUCCESS, step.step_id
        assert step.attempt == len(failed) + 1 <= step.max_retries + 1, step.step_id
        assert step.outputs.data == step.step_id.encode()
    dead_step = next(s for s in workflow.steps if s.step_id == seen.died_holding)
    assert any(e.type == "lease_expired" for e in dead_step.errors)
    assert set(seen.accepted_completions.values()) == {1}
    assert len(seen.accepted_completions) == 50
    check_transition_log(server, plan)


def wait_for_end(stub: Stub, workflow_id: str, timeout: float) -> pb.Workflow:
    """The workflow once it is no longer running (a load-scaled deadline)."""
    deadline = time.monotonic() + scaled(timeout)
    while time.monotonic() < deadline:
        workflow = stub.GetWorkflow(pb.GetWorkflowRequest(workflow_id=workflow_id), metadata=KEY)
        if workflow.workflow.status != pb.WORKFLOW_STATUS_RUNNING:
            return workflow.workflow
        time.sleep(0.1)
    raise AssertionError(f"workflow {workflow_id} still running after {timeout}s")


def check_transition_log(server: CheckpointServer, plan: Plan) -> None:
    """In commit order: one completion per step, and no claim of a step
    before every dependency completed."""
    assert server.workflows is not None
    log = server.call(server.workflows.transitions(TENANT, "dag"))
    completed: set[str] = set()
    completions: Counter[str] = Counter()
    for entry in log:
        if entry.kind == "CLAIM":
            assert plan.dependencies()[entry.step_id] <= completed, entry
        elif entry.kind == "COMPLETE":
            completed.add(entry.step_id)
            completions[entry.step_id] += 1
    assert set(completions.values()) == {1} and len(completions) == 50
    assert any(entry.kind == "LEASE_EXPIRED" for entry in log)
