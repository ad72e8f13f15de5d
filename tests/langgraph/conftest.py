"""LangGraph tests: the saver against a live in-process server, once on the
embedded store and once on the production one (PostgreSQL; skipped with the
reason printed when the test services are not configured).

They need `langgraph`, `langgraph-checkpoint-conformance` and the client
package with its `langgraph` extra (all installed by `make setup`); without
them they are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("langgraph.graph", reason="langgraph is not installed")
pytest.importorskip(
    "langgraph.checkpoint.conformance", reason="langgraph-checkpoint-conformance is not installed"
)
pytest.importorskip("statekeeper_client.langgraph", reason="statekeeper-client is not installed")

from tests.langgraph.harness import BACKENDS, CheckpointServer, serving

API_KEY = "key-langgraph"


@pytest.fixture(scope="module", params=BACKENDS)
def checkpoint_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CheckpointServer]:
    data_dir = tmp_path_factory.mktemp("checkpoint-server")
    with serving(request.param, data_dir, {API_KEY: "langgraph"}) as server:
        yield server
