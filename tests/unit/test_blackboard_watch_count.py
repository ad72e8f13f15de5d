"""The open-watch count /metrics reports (statekeeper_blackboard_watchers):
a counter the event loop keeps in the watch hub, read by the metrics HTTP
thread without walking the hub's dicts (which the loop resizes as boards and
tenants come and go: iterating them from that thread could fail the scrape
with "dictionary changed size during iteration")."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator

import pytest

from statekeeper.core.blackboard.models import SlowConsumerError
from statekeeper.core.blackboard.service import PutOp, WatchRequest
from statekeeper.core.blackboard.watch import WatchMessage
from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore
from statekeeper.telemetry import _watchers
from tests.unit.test_blackboard_watch import collect, running, store, v  # noqa: F401

T = "tenant-a"


async def test_the_count_follows_opens_closes_slow_consumers_and_shutdown(
    store: EmbeddedBlackboardStore,  # noqa: F811
) -> None:
    board = await running(store, watch_buffer_responses=2)
    streams: list[AsyncIterator[WatchMessage]] = []
    for tenant, name in [(T, "b1"), (T, "b1"), (T, "b2"), ("tenant-b", "b1")]:
        stream = board.watch(tenant, WatchRequest(name))
        await collect(stream, 1)
        streams.append(stream)
    assert board.hub.open_watches == 4 == _watchers(board.hub)

    # A slow consumer is dropped by the hub, then its stream ends: counted once.
    for index in range(5):
        await board.put(T, "b2", PutOp(f"k{index}", v("x")))
    await asyncio.sleep(0.05)
    with pytest.raises(SlowConsumerError):
        await collect(streams[2], 1)
    assert board.hub.open_watches == 3 == _watchers(board.hub)

    # A stream closed by its reader.
    await streams[3].aclose()  # type: ignore[attr-defined]
    assert board.hub.open_watches == 2 == _watchers(board.hub)
    await board.stop()
    assert board.hub.open_watches == 0 == _watchers(board.hub)


async def test_a_scrape_thread_never_fails_while_the_loop_opens_watches(
    store: EmbeddedBlackboardStore,  # noqa: F811
) -> None:
    board = await running(store, max_watches_per_tenant=1000)
    errors: list[BaseException] = []
    samples: list[int] = []
    done = threading.Event()

    def scrape() -> None:
        for _ in range(10_000_000):  # bounded; ends when the loop is done
            if done.is_set():
                return
            try:
                samples.append(_watchers(board.hub))
            except BaseException as exc:  # what a scrape would turn into HTTP 500
                errors.append(exc)
                return

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    thread = threading.Thread(target=scrape, daemon=True)
    thread.start()
    streams: list[AsyncIterator[WatchMessage]] = []
    try:
        for index in range(300):  # new boards and tenants: the hub's dicts grow
            stream = board.watch(f"tenant-{index % 30}", WatchRequest(f"board-{index}"))
            await collect(stream, 1)
            streams.append(stream)
    finally:
        done.set()
        thread.join(timeout=30)
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert samples and all(0 <= s <= 300 for s in samples)
    assert board.hub.open_watches == 300
    for stream in streams:
        with contextlib.suppress(Exception):
            await stream.aclose()  # type: ignore[attr-defined]
    assert board.hub.open_watches == 0
    await board.stop()
