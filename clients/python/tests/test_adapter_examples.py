"""Each adapter's runnable example (examples/) run as a user runs it, against
a live `statekeeper serve` (embedded; production too with
STATEKEEPER_CLIENT_TEST_PRODUCTION=1, see live_server.py), so they stay
runnable. The ADK example is run by test_adk.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import LiveServer, backends, scaled, serving

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# example -> (the module it needs, lines its output must hold)
CASES = {
    "langgraph_saver.py": (
        "langgraph.graph",
        [
            "paused at: {'question': 'Run this plan?'",
            "next node: ('ask_human',)",
            "result: done: 1. look up 'statekeeper' 2. summarise it",
        ],
    ),
    "langgraph_store.py": (
        "langgraph.graph",
        ["'Any tea ideas?': recalled ['I love green tea', 'My cat is Tom']"],
    ),
    "openai_agents_session.py": ("agents", ["function_call_output", "message user"]),
    "mcp_client.py": (
        "mcp",
        ["recall: I take my coffee black.", "updated: statekeeper://board/status"],
    ),
}


@pytest.fixture(scope="module", params=backends())
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with serving(request.param, tmp_path_factory.mktemp("examples")) as live:
        yield live


@pytest.mark.parametrize("example", sorted(CASES))
def test_example_runs(server: LiveServer, example: str) -> None:
    module, expected = CASES[example]
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.skip(f"{module} is not installed (the example's extra)")
    env = dict(os.environ, STATEKEEPER_ADDR=server.address, STATEKEEPER_API_KEY=server.fresh_key())
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / example)],
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(180),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for line in expected:
        assert line in done.stdout, done.stdout
