"""LangGraph's own checkpointer conformance suite (PyPI
`langgraph-checkpoint-conformance`, every base and extended capability)
against StatekeeperSaver talking to a live `statekeeper serve` process:
embedded, and with STATEKEEPER_CLIENT_TEST_PRODUCTION=1 the production tier
(PostgreSQL and Redis, see live_server.py). The repository's server tests
(tests/langgraph/test_conformance.py) run the same suite on an in-process
server; this one is the packaged server as users start it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

pytest.importorskip(
    "langgraph.checkpoint.conformance", reason="langgraph-checkpoint-conformance is not installed"
)

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from live_server import LiveServer, backends, serving

from statekeeper_client.langgraph import StatekeeperSaver


@pytest.fixture(scope="module", params=backends())
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with serving(request.param, tmp_path_factory.mktemp("saver")) as live:
        yield live


async def test_every_capability_of_the_suite_passes(server: LiveServer) -> None:
    api_key = server.fresh_key()

    @checkpointer_test(name="StatekeeperSaver")
    async def statekeeper_saver() -> AsyncIterator[StatekeeperSaver]:
        saver = StatekeeperSaver(server.address, api_key=api_key)
        yield saver
        await saver.aclose()

    report = await validate(statekeeper_saver)
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert failures == {}
    assert set(report.results) == {capability.value for capability in ALL_CAPABILITIES}
    assert all(result.detected and result.tests_passed > 0 for result in report.results.values())
    assert report.conformance_level() == "FULL"
