"""The workflow run of tests/unit/test_workflows_grpc.py (three workers, a
50-step DAG, random failures, one worker killed mid-step) on the production
backend: CheckpointService on PostgresWorkflowStore, where every transition
is a compare-and-swap on the workflow row. Once on one server, and once with
the workers spread over two server replicas sharing the database (each with
its own lease-expiry sweep). The embedded run stays in tests/unit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import checkpoint_pb2 as pb
from tests.langgraph.harness import CheckpointServer, serving
from tests.unit import test_workflows_grpc as dag

KEYS = {"key-alpha": dag.TENANT}


@pytest.fixture
def postgres_server(tmp_path: Path) -> Iterator[CheckpointServer]:
    with serving("postgres", tmp_path / "replica-1", KEYS) as server:
        yield server


def test_three_workers_fifty_steps_on_postgres(postgres_server: CheckpointServer) -> None:
    with grpc.insecure_channel(postgres_server.address) as channel:
        stub = dag.Stub(channel)  # type: ignore[no-untyped-call]
        dag.test_three_workers_fifty_steps_random_failures_one_worker_dies(postgres_server, stub)


def test_three_workers_on_two_replicas(postgres_server: CheckpointServer, tmp_path: Path) -> None:
    other = CheckpointServer(
        tmp_path / "replica-2", api_keys=KEYS, postgres_dsn=postgres_server.postgres_dsn
    ).start()
    try:
        with grpc.insecure_channel(postgres_server.address) as channel:
            stub = dag.Stub(channel)  # type: ignore[no-untyped-call]
            run_on_replicas(stub, postgres_server, [postgres_server.address, other.address])
    finally:
        other.stop()


def run_on_replicas(stub: dag.Stub, server: CheckpointServer, addresses: list[str]) -> None:
    plan = dag.Plan.random(seed=20240611)
    dag.start(stub, "dag", plan.steps)
    seen, stop = dag.Observed(), threading.Event()
    workers = [
        threading.Thread(target=dag.run_worker, args=(address, name, plan, seen, stop, die_at))
        for name, die_at, address in [
            ("worker-1", 0, addresses[0]),
            ("worker-2", 0, addresses[1]),
            ("doomed", 7, addresses[1]),
        ]
    ]
    for worker in workers:
        worker.start()
    try:
        workflow = dag.wait_for_end(stub, "dag", timeout=90)
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=30)
    assert seen.violations == []
    assert seen.died_holding, "the doomed worker died holding a step"
    assert workflow.status == pb.WORKFLOW_STATUS_SUCCESS
    for step in workflow.steps:
        expired = {e.attempt for e in step.errors if e.type == "lease_expired"}
        assert {e.attempt for e in step.errors} == plan.failing_attempts[step.step_id] | expired
        assert step.status == pb.WORKFLOW_STEP_STATUS_SUCCESS, step.step_id
    assert set(seen.accepted_completions.values()) == {1}
    assert len(seen.accepted_completions) == 50
    dag.check_transition_log(server, plan)
