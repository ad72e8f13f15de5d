"""The workflow run of tests/unit/test_workflows_grpc.py (three workers, a
50-step DAG, random failures, one worker killed mid-step) on the production
backend: CheckpointService on PostgresWorkflowStore, where every transition
is a compare-and-swap on the workflow row. The embedded run stays there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.langgraph.harness import CheckpointServer, serving
from tests.unit import test_workflows_grpc as dag


@pytest.fixture
def postgres_server(tmp_path: Path) -> Iterator[CheckpointServer]:
    with serving("postgres", tmp_path, {"key-alpha": dag.TENANT}) as server:
        yield server


def test_three_workers_fifty_steps_on_postgres(postgres_server: CheckpointServer) -> None:
    with grpc.insecure_channel(postgres_server.address) as channel:
        stub = dag.Stub(channel)  # type: ignore[no-untyped-call]
        dag.test_three_workers_fifty_steps_random_failures_one_worker_dies(postgres_server, stub)
