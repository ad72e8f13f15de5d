"""core/tasks.cancel_and_wait: stops every task it is given and waits for
them, but the cancellation of its own caller is not swallowed."""

from __future__ import annotations

import asyncio

import pytest

from statekeeper.core.tasks import cancel_and_wait


async def _forever() -> None:
    await asyncio.Event().wait()


async def _slow_to_unwind(unwound: asyncio.Event) -> None:
    try:
        await asyncio.Event().wait()
    finally:
        await asyncio.sleep(0.2)  # shielded by nothing: the unwinding itself waits
        unwound.set()


async def test_every_task_is_stopped_and_none_is_skipped() -> None:
    tasks = [asyncio.create_task(_forever()) for _ in range(3)]
    await asyncio.sleep(0)
    await cancel_and_wait([tasks[0], None, tasks[1], tasks[2]])
    assert all(task.cancelled() for task in tasks)


async def test_the_callers_own_cancellation_goes_on_up() -> None:
    unwound = asyncio.Event()
    worker = asyncio.create_task(_slow_to_unwind(unwound))
    await asyncio.sleep(0)
    stopper = asyncio.create_task(cancel_and_wait([worker]))
    await asyncio.sleep(0.05)  # the worker is still unwinding
    stopper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopper
    assert stopper.cancelled()
    # The worker is not cancelled a second time: it unwinds in full.
    await asyncio.wait_for(unwound.wait(), 10)
    assert worker.cancelled()


async def test_a_task_that_failed_is_reported_after_every_task_stopped() -> None:
    async def fail_when_cancelled() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            raise RuntimeError("broke while stopping")

    failing = asyncio.create_task(fail_when_cancelled())
    other = asyncio.create_task(_forever())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="broke while stopping"):
        await cancel_and_wait([failing, other])
    assert other.cancelled()


async def test_a_stop_in_a_cancelled_task_still_waits_for_every_task() -> None:
    """Cleanup in the finally of a task that was cancelled (as at shutdown)
    still stops and waits for all of them."""
    unwound = asyncio.Event()
    worker = asyncio.create_task(_slow_to_unwind(unwound))
    stopped: list[bool] = []

    async def owner() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await cancel_and_wait([worker])
            stopped.append(worker.done())

    running = asyncio.create_task(owner())
    await asyncio.sleep(0)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert stopped == [True] and unwound.is_set()
