"""LangGraph's own checkpointer conformance suite (PyPI
`langgraph-checkpoint-conformance`) against StatekeeperSaver on a live server.

The suite is a library, not a pytest plugin: a factory registered with
`@checkpointer_test` yields a fresh saver per capability, and `validate()`
runs every base and extended capability it detects and returns a report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from statekeeper_client.langgraph import StatekeeperSaver
from tests.langgraph.conftest import API_KEY
from tests.langgraph.harness import CheckpointServer


async def test_every_capability_of_the_suite_passes(checkpoint_server: CheckpointServer) -> None:
    @checkpointer_test(name="StatekeeperSaver")
    async def statekeeper_saver() -> AsyncIterator[StatekeeperSaver]:
        saver = StatekeeperSaver(checkpoint_server.address, api_key=API_KEY)
        yield saver
        await saver.aclose()

    report = await validate(statekeeper_saver)
    report.print_report()
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert failures == {}
    not_run = sorted(name for name, result in report.results.items() if not result.detected)
    assert not_run == [], "every capability, extended ones included, is implemented"
    assert set(report.results) == {capability.value for capability in ALL_CAPABILITIES}
    assert all(result.tests_passed > 0 for result in report.results.values())
    assert report.conformance_level() == "FULL"
