"""A live CheckpointService for tests: the real grpc.aio server, the real
DomainInterceptor and Authenticator, the embedded store, on 127.0.0.1:0.

It runs in a thread with its own event loop, so that both sync callers (a
LangGraph graph run with `invoke`, which blocks its thread) and async
callers in the test's own loop can reach it without deadlocking.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc

from statekeeper.api.checkpoint_servicer import register
from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.checkpoints import CheckpointLimits, CheckpointManager
from statekeeper.core.schema_upgrades import builtin_registry
from statekeeper.core.tenancy import Authenticator
from statekeeper.core.workflows import WorkflowLimits, WorkflowManager, maintain_forever
from statekeeper.storage.embedded import EmbeddedStorage
from statekeeper.storage.embedded_checkpoints import EmbeddedCheckpointStore
from statekeeper.storage.embedded_workflows import EmbeddedWorkflowStore

T = TypeVar("T")
MAX_MESSAGE_BYTES = 8 * 1024 * 1024


@dataclass
class CheckpointServer:
    data_dir: Path
    api_keys: dict[str, str] = field(default_factory=dict)
    checkpoint_limits: CheckpointLimits = field(default_factory=CheckpointLimits)
    workflow_limits: WorkflowLimits = field(default_factory=WorkflowLimits)
    maintenance_seconds: float = 0.2
    port: int = 0
    checkpoints: CheckpointManager | None = None
    workflows: WorkflowManager | None = None
    storage: EmbeddedStorage | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _stopping: asyncio.Event | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> CheckpointServer:
        ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._main, args=(ready,), daemon=True)
        self._thread.start()
        ready.result(timeout=30)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=30)

    def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Runs `work` on the server's loop (e.g. to read the managers)."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout=30)

    def _main(self, ready: Future[None]) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve(ready))
        except BaseException as exc:  # surface startup failures to start()
            if not ready.done():
                ready.set_exception(exc)
            raise
        finally:
            self._loop.close()

    async def _serve(self, ready: Future[None]) -> None:
        self._stopping = asyncio.Event()
        self.storage = storage = EmbeddedStorage(self.data_dir)
        await storage.start()
        checkpoint_store = EmbeddedCheckpointStore(storage)
        workflow_store = EmbeddedWorkflowStore(storage)
        await checkpoint_store.start()
        await workflow_store.start()
        upgrades = builtin_registry()
        self.checkpoints = CheckpointManager(checkpoint_store, self.checkpoint_limits, upgrades)
        self.workflows = WorkflowManager(workflow_store, self.workflow_limits, upgrades)
        server = grpc.aio.server(
            interceptors=[DomainInterceptor(Authenticator(self.api_keys))],
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ],
        )
        register(server, self.checkpoints, self.workflows)
        self.port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        maintenance = asyncio.create_task(
            maintain_forever(self.checkpoints, self.workflows, self.maintenance_seconds)
        )
        ready.set_result(None)
        await self._stopping.wait()
        maintenance.cancel()
        await server.stop(grace=1.0)
        await storage.close()
