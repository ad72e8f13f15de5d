"""One contract suite, every backend.

Each backend registers a factory in BACKENDS; every test in this folder runs
once per backend. A backend whose services are not running is skipped with
the reason printed (CI starts them all, so CI runs every backend).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from statekeeper.storage.embedded import EmbeddedStorage
from statekeeper.storage.interfaces import Storage

BackendFactory = Callable[[Path], Awaitable[Storage]]


async def _embedded(tmp_path: Path) -> Storage:
    return EmbeddedStorage(tmp_path)


BACKENDS: dict[str, BackendFactory] = {"embedded": _embedded}


@pytest.fixture(params=sorted(BACKENDS))
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    backend = await BACKENDS[request.param](tmp_path)
    await backend.start()
    yield backend
    await backend.close()
