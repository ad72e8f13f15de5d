"""In-process servers on an event loop of their own, in a daemon thread.

Sync callers (a LangGraph graph run with `invoke`, which blocks its thread)
and async callers in the test's own loop can both reach such a server
without deadlocking. `InProcessServer` runs any `serve` coroutine;
`InProcessStatekeeper` runs the real StatekeeperServer (every service, wired
by capabilities.py exactly as `statekeeper serve` wires it).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self, TypeVar

from statekeeper.config import Settings
from statekeeper.server import StatekeeperServer
from tests.harness.backends import Production
from tests.harness.deadlines import scaled

T = TypeVar("T")
# Seconds (load-scaled) to start, to stop, and for one `call`.
START_SECONDS = 60.0
STOP_SECONDS = 30.0
CALL_SECONDS = 30.0


class InProcessServer:
    """Subclasses implement `serve`: start, call `ready()`, await `stopping`,
    stop. `start()` returns once ready (or raises what `serve` raised)."""

    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _stopping: asyncio.Event | None = None

    async def serve(self, ready: Future[None], stopping: asyncio.Event) -> None:
        raise NotImplementedError

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    def start(self) -> Self:
        ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._main, args=(ready,), daemon=True)
        self._thread.start()
        try:
            ready.result(timeout=scaled(START_SECONDS))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=scaled(STOP_SECONDS))
            if self._thread.is_alive():
                raise TimeoutError(f"{type(self).__name__} did not stop")

    def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Runs `work` on the server's loop (e.g. to read its domain objects)."""
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        return future.result(timeout=scaled(CALL_SECONDS))

    def _main(self, ready: Future[None]) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._run(ready))
        except BaseException as exc:  # surface startup failures to start()
            if not ready.done():
                ready.set_exception(exc)
            raise
        finally:
            self._loop.close()

    async def _run(self, ready: Future[None]) -> None:
        self._stopping = asyncio.Event()
        await self.serve(ready, self._stopping)


def settings_for(
    data_dir: Path, where: Production | None, api_keys: dict[str, str], **options: Any
) -> Settings:
    """Settings of a server on 127.0.0.1 (a free port) on the embedded store
    in `data_dir`, or on `where` when given."""
    production: dict[str, Any] = {}
    if where is not None:
        production = {
            "postgres_dsn": where.postgres_dsn,
            "redis_url": where.redis_url,
            "redis_key_prefix": where.redis_prefix,
            "migrate_on_start": True,
        }
    return Settings(
        listen="127.0.0.1:0",
        data_dir=str(data_dir),
        api_keys=api_keys,
        **{**production, **options},
    )


class InProcessStatekeeper(InProcessServer):
    """The whole StatekeeperServer of `settings`, in this process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.server: StatekeeperServer | None = None
        self.port = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def serve(self, ready: Future[None], stopping: asyncio.Event) -> None:
        self.server = StatekeeperServer(self.settings)
        self.port = await self.server.start()
        ready.set_result(None)
        await stopping.wait()
        await self.server.stop()


@contextmanager
def in_process_statekeeper(settings: Settings) -> Iterator[InProcessStatekeeper]:
    """A started InProcessStatekeeper, stopped on exit."""
    server = InProcessStatekeeper(settings).start()
    try:
        yield server
    finally:
        server.stop()
