"""An in-process CheckpointService for tests (tests.harness.inproc): the
real grpc.aio server, DomainInterceptor and Authenticator on 127.0.0.1:0,
backed by the embedded store, or with `postgres_dsn` by the production one
(PostgresStorage with PostgresCheckpointStore and PostgresWorkflowStore, as
`serve --postgres-dsn` wires them; checkpoints and workflows have no Redis
tier), with limits and a maintenance period of the test's choosing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from statekeeper.api.checkpoint_servicer import register
from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.checkpoints.models import CheckpointLimits
from statekeeper.core.checkpoints.service import CheckpointManager
from statekeeper.core.checkpoints.store import CheckpointStore
from statekeeper.core.schema_upgrades import builtin_registry
from statekeeper.core.tenancy import Authenticator
from statekeeper.core.workflows.models import WorkflowLimits
from statekeeper.core.workflows.service import WorkflowManager, maintain_forever
from statekeeper.core.workflows.store import WorkflowStore
from statekeeper.storage.embedded.checkpoints import EmbeddedCheckpointStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.workflows import EmbeddedWorkflowStore
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.checkpoints import PostgresCheckpointStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.postgres.workflows import PostgresWorkflowStore
from tests.harness import backends
from tests.harness.backends import EMBEDDED, PRODUCTION
from tests.harness.inproc import InProcessServer

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
# What `serving` can back the service with.
BACKENDS = ("embedded", "postgres")


@dataclass
class CheckpointServer(InProcessServer):
    data_dir: Path
    api_keys: dict[str, str] = field(default_factory=dict)
    checkpoint_limits: CheckpointLimits = field(default_factory=CheckpointLimits)
    workflow_limits: WorkflowLimits = field(default_factory=WorkflowLimits)
    maintenance_seconds: float = 0.2
    # Empty: the embedded store in `data_dir`; else the PostgreSQL stores.
    postgres_dsn: str = ""
    port: int = 0
    checkpoints: CheckpointManager | None = None
    workflows: WorkflowManager | None = None
    storage: Storage | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def serve(self, ready: Future[None], stopping: asyncio.Event) -> None:
        storage, checkpoint_store, workflow_store = self._backend()
        self.storage = storage
        await storage.start()
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
        await stopping.wait()
        maintenance.cancel()
        await server.stop(grace=1.0)
        await storage.close()

    def _backend(self) -> tuple[Storage, CheckpointStore, WorkflowStore]:
        if self.postgres_dsn:
            durable = PostgresStorage(self.postgres_dsn, pool_size=8, migrate_on_start=True)
            return durable, PostgresCheckpointStore(durable), PostgresWorkflowStore(durable)
        embedded = EmbeddedStorage(self.data_dir)
        return embedded, EmbeddedCheckpointStore(embedded), EmbeddedWorkflowStore(embedded)


@contextmanager
def serving(backend: str, data_dir: Path, api_keys: dict[str, str]) -> Iterator[CheckpointServer]:
    """A started CheckpointServer on `backend` ("embedded", or "postgres": a
    fresh database on the test PostgreSQL server, dropped afterwards). The
    postgres backend is skipped with the reason printed when the test services
    are not configured (it fails instead under STATEKEEPER_REQUIRE_SERVICES=1)."""
    with backends.backend(EMBEDDED if backend == EMBEDDED else PRODUCTION) as where:
        dsn = where.postgres_dsn if where else ""
        server = CheckpointServer(data_dir, api_keys=api_keys, postgres_dsn=dsn).start()
        try:
            yield server
        finally:
            server.stop()
