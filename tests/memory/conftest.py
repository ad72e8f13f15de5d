"""Fixtures shared by the memory tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.harness.memory import Backend, served_memory, served_postgres


@pytest.fixture(params=["embedded", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    if request.param == "embedded":
        async with served_memory(tmp_path) as served:
            yield Backend(served.memory, served.app)
    else:
        async with served_postgres() as served_pg:
            yield served_pg
