"""Background tasks of the services: stopping them the one way they all stop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any] | None]) -> None:
    """Cancels every task (None stands for one never started), then waits
    for each to end, so no loop still runs once a service says it stopped.
    All are cancelled before the first wait: one slow to unwind does not
    keep the others running meanwhile."""
    started = [task for task in tasks if task is not None]
    for task in started:
        task.cancel()
    if not started:
        return
    # asyncio.wait, not an await of each task: a cancellation of the caller
    # itself (a shutdown that gives up waiting) goes on up instead of being
    # taken for a stopped task's, and does not cancel the tasks again.
    await asyncio.wait(started)
    for task in started:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


async def repeat_every(
    interval: float, job: Callable[[], Awaitable[object]], what: str, log: logging.Logger
) -> None:
    """Runs `job` every `interval` seconds, the first time one interval
    after the start, until cancelled. A failed round is logged on the
    caller's `log` as "`what` failed; will retry" and the next one runs."""
    while True:
        await asyncio.sleep(interval)
        try:
            await job()
        except Exception:
            log.exception("%s failed; will retry", what)
