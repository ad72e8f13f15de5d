"""Assembles the capabilities beyond sessions: memory, checkpoints and
workflows, the blackboard, the message bus and items.

Each capability knows how to build itself on the configured backend, register
its servicer, start its background work, end its open streams before the
server drains, and close its stores after. Every capability is built on
both backends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import grpc

from statekeeper.api import blackboard_servicer, messagebus_servicer
from statekeeper.api.checkpoint_servicer import register as register_checkpoints
from statekeeper.api.items_servicer import register as register_items
from statekeeper.config import CapabilityLimits, Settings
from statekeeper.core.archive.service import Archive
from statekeeper.core.audit.store import AuditStore
from statekeeper.core.blackboard.models import BlackboardLimits
from statekeeper.core.blackboard.service import Blackboard
from statekeeper.core.blackboard.store import BlackboardStore
from statekeeper.core.checkpoints.service import CheckpointManager
from statekeeper.core.checkpoints.store import CheckpointStore
from statekeeper.core.items.models import ItemLimits
from statekeeper.core.items.service import ItemManager
from statekeeper.core.items.store import ItemStore
from statekeeper.core.limits import Limits
from statekeeper.core.memory.vector_index import VectorIndexes
from statekeeper.core.messagebus.service import MessageBus
from statekeeper.core.messagebus.store import InboxNotifier, MessageStore, ReplyWaiters
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.privacy.service import Participant, UserEraser
from statekeeper.core.schema_upgrades import builtin_registry
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import Summarizer
from statekeeper.core.tokens import TokenCounter
from statekeeper.core.workflows.service import WorkflowManager, maintain_forever
from statekeeper.core.workflows.store import WorkflowStore
from statekeeper.memory_app import MemoryApp, ModelEndpoints, embedded_store
from statekeeper.storage import sealed
from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore
from statekeeper.storage.embedded.checkpoints import EmbeddedCheckpointStore
from statekeeper.storage.embedded.items import EmbeddedItemStore
from statekeeper.storage.embedded.messagebus import (
    EmbeddedMessageStore,
    InProcessInboxNotifier,
    InProcessReplyWaiters,
)
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.workflows import EmbeddedWorkflowStore
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.blackboard import PostgresBlackboardStore
from statekeeper.storage.postgres.checkpoints import PostgresCheckpointStore
from statekeeper.storage.postgres.items import PostgresItemStore
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from statekeeper.storage.postgres.memory_feed import PostgresChangeFeed
from statekeeper.storage.postgres.messagebus import PostgresMessageStore
from statekeeper.storage.postgres.workflows import PostgresWorkflowStore
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.redis.bus import RedisInboxNotifier, RedisReplyWaiters
from statekeeper.storage.sealing import sealer_for
from statekeeper_client.v1 import (
    blackboard_pb2,
    checkpoint_pb2,
    items_pb2,
    memory_pb2,
    message_pb2,
)

CHECKPOINT_MAINTENANCE_SECONDS = 1.0


class Capability(Protocol):
    """One service's assembly on the configured backend."""

    async def start(self) -> None:
        """Prepares stores and starts background work."""

    def register(self, server: grpc.aio.Server) -> None:
        """Adds the servicer to the gRPC server."""

    async def drain(self) -> None:
        """Ends open streams and background work, before the server drains."""

    async def close(self) -> None:
        """Releases stores, after the server stopped."""


@runtime_checkable
class ArchivingCapability(Protocol):
    """A capability whose cold state the archive tier moves (core/archive):
    it adds its unit kind to the archive and lets its service read archived
    state (restore or read through)."""

    def attach_archive(self, archive: Archive, settings: Settings) -> None: ...


class BlackboardCapability:
    """The blackboard over either backend's store (both fan events out: in
    process on the embedded store, through Redis Streams in production)."""

    def __init__(
        self,
        store: BlackboardStore,
        limits: BlackboardLimits,
        storage: EmbeddedStorage | ProductionStorage | None = None,
    ) -> None:
        self.store = store
        self.blackboard = Blackboard(store, limits)
        self.storage = storage
        # EraseUser's participants besides the store (archived history).
        self.archive_participants: list[Participant] = []

    def attach_archive(self, archive: Archive, settings: Settings) -> None:
        """Blackboard history as archive units (core/archive/blackboard.py):
        read through below the oldest hot revision; with
        --archive-blackboard-history, archived before compaction."""
        if self.storage is None:
            return
        from statekeeper.storage.archive.blackboard import attach_history_archive

        participant = attach_history_archive(
            self.blackboard,
            self.storage,
            archive,
            Path(settings.data_dir),
            settings.archive_blackboard_history,
            sealer_for(settings),
        )
        self.archive_participants = [participant]

    async def start(self) -> None:
        await self.store.start()
        await self.blackboard.start()

    def register(self, server: grpc.aio.Server) -> None:
        blackboard_servicer.register(server, self.blackboard)

    async def drain(self) -> None:
        await self.blackboard.stop()

    async def close(self) -> None:
        await self.store.close()


class _Link(Protocol):
    """A connection a capability keeps besides its store (Redis pub/sub)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class MessageBusCapability:
    """The message bus over either backend's store. Wake-ups and replies stay
    in process on the embedded store; in production they cross replicas over
    Redis pub/sub (without Redis: idle polling) through `links`, started
    after the store and stopped, in reverse order, before it closes."""

    def __init__(
        self,
        store: MessageStore,
        notifier: InboxNotifier,
        waiters: ReplyWaiters,
        settings: Settings,
        links: Sequence[_Link] = (),
    ) -> None:
        self.store = store
        self.links = links
        self.bus = MessageBus(
            store, notifier, waiters, settings.capability_limits.messagebus, settings.limits
        )

    async def start(self) -> None:
        await self.store.start()
        for link in self.links:
            await link.start()
        await self.bus.start()

    def register(self, server: grpc.aio.Server) -> None:
        messagebus_servicer.register(server, self.bus)

    async def drain(self) -> None:
        await self.bus.stop()

    async def close(self) -> None:
        for link in reversed(self.links):
            await link.stop()
        await self.store.close()


class Checkpoints:
    def __init__(
        self,
        checkpoint_store: CheckpointStore,
        workflow_store: WorkflowStore,
        limits: CapabilityLimits,
        storage: EmbeddedStorage | ProductionStorage | None = None,
    ) -> None:
        self.checkpoint_store = checkpoint_store
        self.workflow_store = workflow_store
        upgrades = builtin_registry()
        self.checkpoints = CheckpointManager(self.checkpoint_store, limits.checkpoints, upgrades)
        self.workflows = WorkflowManager(self.workflow_store, limits.workflows, upgrades)
        self._maintenance: asyncio.Task[None] | None = None
        # The backend the checkpoint store runs on (the archive's histories
        # read and write the same tables).
        self.storage = storage

    def attach_archive(self, archive: Archive, settings: Settings) -> None:
        """Checkpoint histories as archive units (core/archive/checkpoints.py),
        registered even without a policy so that archived ones stay readable;
        the service restores them when a read or an operation needs them."""
        from statekeeper.core.archive.checkpoints import (
            ArchivedHistories,
            CheckpointHistories,
            HistoryDatabase,
        )

        database: HistoryDatabase
        if isinstance(self.storage, EmbeddedStorage):
            from statekeeper.storage.archive.checkpoints_embedded import EmbeddedHistoryDatabase

            database = EmbeddedHistoryDatabase(self.storage, Path(settings.data_dir))
        elif isinstance(self.storage, ProductionStorage):
            from statekeeper.storage.archive.checkpoints_postgres import PostgresHistoryDatabase

            database = PostgresHistoryDatabase(self.storage.durable)
        else:
            return
        archive.add_kind(CheckpointHistories(database, settings.archive_checkpoints_after_days))
        self.checkpoints.histories = ArchivedHistories(archive)

    async def start(self) -> None:
        await self.checkpoint_store.start()
        await self.workflow_store.start()
        self._maintenance = asyncio.create_task(
            maintain_forever(self.checkpoints, self.workflows, CHECKPOINT_MAINTENANCE_SECONDS),
            name="checkpoint-maintenance",
        )

    def register(self, server: grpc.aio.Server) -> None:
        register_checkpoints(server, self.checkpoints, self.workflows)

    async def drain(self) -> None:
        if self._maintenance is not None:
            self._maintenance.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._maintenance

    async def close(self) -> None:
        return None


class Memory:
    def __init__(self, app: MemoryApp) -> None:
        self.app = app

    def attach_archive(self, archive: Archive, settings: Settings) -> None:
        """Episodes of idle users leave for the archive (core/archive/episodes.py)."""
        from statekeeper.storage.archive.episodes_embedded import EmbeddedEpisodeArchive

        storage = self.app.storage
        if isinstance(storage, EmbeddedStorage):
            database = EmbeddedEpisodeArchive(storage, Path(settings.data_dir))
            self.app.attach_archive(database, archive, settings.archive_episodes_after_days)

    async def start(self) -> None:
        await self.app.start()

    def register(self, server: grpc.aio.Server) -> None:
        self.app.register(server)

    async def drain(self) -> None:
        await self.app.stop()

    async def close(self) -> None:
        return None


class ProductionMemory:
    """Memory on PostgreSQL; replicas keep their FAISS indexes in sync through
    LISTEN/NOTIFY on the store's change log."""

    def __init__(
        self,
        storage: ProductionStorage,
        settings: Settings,
        sessions: SessionManager,
        counter: TokenCounter,
        summarizer: Summarizer | None,
    ) -> None:
        self.store = PostgresMemoryStore(storage.durable)
        self.feed = PostgresChangeFeed(self.store, settings.postgres_dsn)
        self.app = MemoryApp(
            storage,
            sessions,
            counter,
            summarizer,
            settings.limits,
            settings.capability_limits.memory,
            model_endpoints(settings),
            feed=self.feed,
            store=sealed.memory(self.store, sealer_for(settings)),
            index_dir=index_dir(settings),
        )
        self.feed.attach(self.app.indexes)
        self.durable = storage.durable

    def attach_archive(self, archive: Archive, settings: Settings) -> None:
        """Episodes of idle users leave for the archive (core/archive/episodes.py);
        their vectors leave every replica's index through the change log."""
        from statekeeper.storage.archive.episodes_postgres import PostgresEpisodeArchive

        database = PostgresEpisodeArchive(self.durable, self.store)
        self.app.attach_archive(database, archive, settings.archive_episodes_after_days)

    async def start(self) -> None:
        # The feed first: it migrates the memory schema and notes the change
        # log's head, so no change made while the indexes build is missed.
        await self.feed.start()
        await self.app.start()

    def register(self, server: grpc.aio.Server) -> None:
        self.app.register(server)

    async def drain(self) -> None:
        await self.app.stop()

    async def close(self) -> None:
        await self.feed.close()
        await self.store.close()


class Items:
    """ItemService: namespaced JSON items (LangGraph's BaseStore)."""

    def __init__(self, store: ItemStore, limits: ItemLimits) -> None:
        self.store = store
        self.items = ItemManager(store, limits)

    async def start(self) -> None:
        await self.store.start()

    def register(self, server: grpc.aio.Server) -> None:
        register_items(server, self.items)

    async def drain(self) -> None:
        return None

    async def close(self) -> None:
        await self.store.close()


def items_on(storage: EmbeddedStorage | ProductionStorage, settings: Settings) -> Items:
    limits = settings.capability_limits.items
    if isinstance(storage, EmbeddedStorage):
        return Items(EmbeddedItemStore(storage), limits)
    return Items(PostgresItemStore(storage.durable, migrate=settings.migrate_on_start), limits)


def blackboard_on(
    storage: EmbeddedStorage | ProductionStorage, settings: Settings
) -> BlackboardCapability:
    limits = settings.capability_limits.blackboard
    sealer = sealer_for(settings)
    if isinstance(storage, EmbeddedStorage):
        return BlackboardCapability(
            sealed.blackboard(EmbeddedBlackboardStore(storage), sealer), limits, storage
        )
    return BlackboardCapability(
        sealed.blackboard(
            PostgresBlackboardStore(
                storage.durable,
                settings.redis_url or None,
                settings.redis_key_prefix,
                migrate=settings.migrate_on_start,
            ),
            sealer,
        ),
        limits,
        storage,
    )


def messagebus_on(
    storage: EmbeddedStorage | ProductionStorage, settings: Settings
) -> MessageBusCapability:
    sealer = sealer_for(settings)
    if isinstance(storage, EmbeddedStorage):
        return MessageBusCapability(
            sealed.messages(EmbeddedMessageStore(storage), sealer),
            InProcessInboxNotifier(),
            InProcessReplyWaiters(),
            settings,
        )
    url, prefix = settings.redis_url or None, settings.redis_key_prefix
    notifier = RedisInboxNotifier(url, prefix)
    waiters = RedisReplyWaiters(url, prefix)
    return MessageBusCapability(
        sealed.messages(
            PostgresMessageStore(storage.durable, migrate=settings.migrate_on_start), sealer
        ),
        notifier,
        # Replies cross Redis sealed for sensitive tenants, as stored.
        sealed.waiters(waiters, sealer),
        settings,
        links=(notifier, waiters),
    )


def checkpoints_on(storage: EmbeddedStorage | ProductionStorage, settings: Settings) -> Checkpoints:
    limits = settings.capability_limits
    sealer = sealer_for(settings)
    if isinstance(storage, EmbeddedStorage):
        return Checkpoints(
            sealed.checkpoints(EmbeddedCheckpointStore(storage), sealer),
            EmbeddedWorkflowStore(storage),
            limits,
            storage,
        )
    return Checkpoints(
        sealed.checkpoints(PostgresCheckpointStore(storage.durable), sealer),
        PostgresWorkflowStore(storage.durable),
        limits,
        storage,
    )


def index_dir(settings: Settings) -> Path:
    """Where this process saves its vector indexes: derived state, local to
    the replica, rebuilt from the store when missing or damaged."""
    return Path(settings.index_dir) if settings.index_dir else Path(settings.data_dir) / "indexes"


def model_endpoints(settings: Settings) -> ModelEndpoints:
    return ModelEndpoints(
        embedder_url=settings.embedder_url,
        embedder_model=settings.embedder_model,
        embedder_api_key=settings.embedder_api_key,
        embedder_kind=settings.embedder_kind,
        local_model_path=settings.local_model_path,
        llm_url=settings.llm_url,
        llm_model=settings.llm_model,
        llm_api_key=settings.llm_api_key,
    )


def build_capabilities(
    settings: Settings,
    storage: Storage,
    sessions: SessionManager,
    counter: TokenCounter,
    summarizer: Summarizer | None,
) -> list[Capability]:
    """Every capability beyond sessions, on the configured backend."""
    if isinstance(storage, ProductionStorage):
        return [
            ProductionMemory(storage, settings, sessions, counter, summarizer),
            checkpoints_on(storage, settings),
            blackboard_on(storage, settings),
            messagebus_on(storage, settings),
            items_on(storage, settings),
        ]
    if not isinstance(storage, EmbeddedStorage):
        raise ValueError(f"no capabilities for {storage.description}")
    memory = MemoryApp(
        storage,
        sessions,
        counter,
        summarizer,
        settings.limits,
        settings.capability_limits.memory,
        model_endpoints(settings),
        index_dir=index_dir(settings),
        store=sealed.memory(embedded_store(storage), sealer_for(settings)),
    )
    return [
        Memory(memory),
        checkpoints_on(storage, settings),
        blackboard_on(storage, settings),
        messagebus_on(storage, settings),
        items_on(storage, settings),
    ]


CAPABILITY_SERVICES = [
    service.full_name
    for module in (memory_pb2, checkpoint_pb2, blackboard_pb2, message_pb2, items_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
]


def user_eraser(
    storage: Storage,
    capabilities: list[Capability],
    audit: AuditStore,
    limits: Limits,
    first: list[Participant] | None = None,
) -> UserEraser:
    """EraseUser over the sessions and every capability's stores: each
    store erases its own rows; memory also drops the user's vector index
    and snapshot in this process (other replicas through the change feed).
    `first` run before the sessions (the archive: so that a read during the
    erasure finds no archived session of the user left to restore)."""
    participants = [*(first or []), Participant("sessions", storage.sessions)]
    for capability in capabilities:
        if isinstance(capability, Memory | ProductionMemory):
            indexes = capability.app.indexes

            async def forget(
                tenant: str, subject: ErasureSubject, indexes: VectorIndexes = indexes
            ) -> None:
                # On the event loop: the indexes are its state (the snapshot
                # file's unlink is short).
                indexes.forget(tenant, subject.user_id)

            participants.append(Participant("memory", capability.app.store, forget))
            # After the sessions: the user's promotion watermarks.
            if capability.app.promotions is not None:
                participants.append(Participant("memory", capability.app.promotions))
        elif isinstance(capability, Checkpoints):
            participants.append(Participant("checkpoints", capability.checkpoint_store))
            participants.append(Participant("workflows", capability.workflow_store))
        elif isinstance(capability, BlackboardCapability):
            participants.append(Participant("blackboard", capability.store))
            participants.extend(capability.archive_participants)
        elif isinstance(capability, MessageBusCapability):
            participants.append(Participant("messagebus", capability.store))
        elif isinstance(capability, Items):
            participants.append(Participant("items", capability.store))
    return UserEraser(participants, audit, limits)
