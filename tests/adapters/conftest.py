"""Framework adapters of the Python client against a live in-process server,
once on the embedded store and once on the production tier (PostgreSQL and
Redis; skipped with the reason when the test services are not configured).

They need the client package with the adapter's extra (`make setup`
installs them); without it they are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness.backends import BACKENDS, backend
from tests.harness.inproc import InProcessStatekeeper, in_process_statekeeper, settings_for

API_KEY = "key-adapters"
# A second tenant, to show tenants do not see each other.
OTHER_API_KEY = "key-other"


@pytest.fixture(scope="module", params=BACKENDS)
def statekeeper_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InProcessStatekeeper]:
    with backend(request.param, kind="adapters") as where:
        settings = settings_for(
            tmp_path_factory.mktemp("adapters"),
            where,
            {API_KEY: "adapters", OTHER_API_KEY: "adapters-other"},
        )
        with in_process_statekeeper(settings) as server:
            yield server
