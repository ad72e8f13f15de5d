"""Deadlines that stretch with the machine's load.

A test waits for something that will happen (a server answering, a change
reaching a replica); how long it takes depends on how busy the machine is,
not on the code under test. So every wait polls until a deadline of
`scaled(base)` seconds: `base` on an idle machine, stretched by the load per
CPU when the box is busy (a 2-core laptop at load 15 waits 7.5 times longer).
A deadline only costs time when the awaited thing never happens, so being
generous here makes no green run slower.

STATEKEEPER_TEST_TIMEOUT_FACTOR=N multiplies every deadline further (e.g. on
a slow CI runner or under a debugger).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

FACTOR_ENV = "STATEKEEPER_TEST_TIMEOUT_FACTOR"
# Beyond this the machine is not busy but stuck; waiting longer hides that.
MAX_LOAD_FACTOR = 20.0
POLL_SECONDS = 0.05


def load_factor() -> float:
    """How many times busier than idle the machine is now (1.0 at most one
    runnable task per CPU)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available on this platform
        return 1.0
    per_cpu = load / (os.cpu_count() or 1)
    return min(max(1.0, per_cpu), MAX_LOAD_FACTOR)


def scaled(base_seconds: float) -> float:
    """`base_seconds` stretched by the current load and STATEKEEPER_TEST_TIMEOUT_FACTOR."""
    return base_seconds * load_factor() * float(os.environ.get(FACTOR_ENV, "1"))


class Deadline:
    """A point in time `scaled(base_seconds)` from now."""

    def __init__(self, base_seconds: float) -> None:
        self.seconds = scaled(base_seconds)
        self._end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self._end


def wait_until(
    condition: Callable[[], T | None],
    base_seconds: float,
    what: str,
    details: Callable[[], str] = lambda: "",
    interval: float = POLL_SECONDS,
) -> T:
    """Polls `condition` until it returns something truthy, which it returns.

    Fails after the scaled deadline with `what` and `details()` (e.g. the
    server's log tail), so a timeout says what was awaited and why it may not
    have happened.
    """
    deadline = Deadline(base_seconds)
    while True:  # bounded by the deadline
        result = condition()
        if result:
            return result
        if deadline.expired():
            raise TimeoutError(f"{what}: not after {deadline.seconds:.1f}s\n{details()}")
        time.sleep(interval)


async def wait_until_async(
    condition: Callable[[], Awaitable[T | None]],
    base_seconds: float,
    what: str,
    details: Callable[[], str] = lambda: "",
    interval: float = POLL_SECONDS,
) -> T:
    """`wait_until` for an async condition, sleeping without blocking the loop."""
    deadline = Deadline(base_seconds)
    while True:  # bounded by the deadline
        result = await condition()
        if result:
            return result
        if deadline.expired():
            raise TimeoutError(f"{what}: not after {deadline.seconds:.1f}s\n{details()}")
        await asyncio.sleep(interval)
