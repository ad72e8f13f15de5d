"""LangGraph tests: the saver against a live in-process server, once on the
embedded store and once on the production one (PostgreSQL; skipped with the
reason printed when the test services are not configured).

They need `langgraph`, `langgraph-checkpoint-conformance` and the adapter
package (adapters/langgraph); without them they are skipped with the reason.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ADAPTER = Path(__file__).resolve().parents[2] / "adapters" / "langgraph"
if str(ADAPTER) not in sys.path:
    # Not installed (pip install -e adapters/langgraph): use the source tree.
    sys.path.insert(0, str(ADAPTER))

pytest.importorskip("langgraph.graph", reason="langgraph is not installed")
pytest.importorskip(
    "langgraph.checkpoint.conformance", reason="langgraph-checkpoint-conformance is not installed"
)

from tests.langgraph.harness import BACKENDS, CheckpointServer, serving  # noqa: E402

API_KEY = "key-langgraph"


@pytest.fixture(scope="module", params=BACKENDS)
def checkpoint_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CheckpointServer]:
    data_dir = tmp_path_factory.mktemp("checkpoint-server")
    with serving(request.param, data_dir, {API_KEY: "langgraph"}) as server:
        yield server
