"""Background tasks of the services: stopping them the one way they all stop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any] | None]) -> None:
    """Cancels every task (None stands for one never started), then waits
    for each to end, so no loop still runs once a service says it stopped.
    All are cancelled before the first wait: one slow to unwind does not
    keep the others running meanwhile."""
    started = [task for task in tasks if task is not None]
    for task in started:
        task.cancel()
    for task in started:
        with contextlib.suppress(asyncio.CancelledError):
            await task
