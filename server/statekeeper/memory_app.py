"""Assembles long-term memory: store, vector indexes, models, domain, jobs.

server.py builds one `MemoryApp` next to its SessionManager, registers it on
the gRPC server, and starts and stops it with the storage:

    memory = MemoryApp(storage, sessions, counter, summarizer, limits,
                       MemoryConfig(), ModelEndpoints(...), index_dir=Path(...))
    await memory.start()          # after storage.start()
    memory.register(server)
    ...
    await memory.stop()           # before storage.close()

With `index_dir`, vector indexes survive restarts: big ones are saved there
(periodically and at stop) and loaded at start, then brought up to date with
the store (see VectorIndexes). Without it every index is rebuilt from the
store at start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from statekeeper.adapters.openai_embeddings import OpenAIEmbedder
from statekeeper.adapters.openai_facts import OpenAIFactExtractor
from statekeeper.adapters.rerank_endpoint import RerankEndpoint
from statekeeper.api.memory_servicer import MemoryDomain, MemoryServicer, register
from statekeeper.core.archive.episodes import EpisodeArchiveDatabase, EpisodeUnits
from statekeeper.core.archive.service import Archive
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.context import MemoryContextBuilder
from statekeeper.core.memory.episodes import Embedder
from statekeeper.core.memory.episodic import EpisodicMemory
from statekeeper.core.memory.faiss_index import FaissIndexFactory
from statekeeper.core.memory.forgetting import Consolidation, Forgetting, MemoryMaintenance
from statekeeper.core.memory.promotion import PromotionStore, SessionPromoter
from statekeeper.core.memory.semantic import FactExtractor, PatternFactExtractor, SemanticMemory
from statekeeper.core.memory.store import MemoryStore
from statekeeper.core.memory.vector_index import (
    ChangeFeed,
    InProcessChangeFeed,
    LoadingState,
    VectorIndexes,
)
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import Summarizer
from statekeeper.core.tasks import cancel_and_wait, repeat_every
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.memory_promotion import EmbeddedPromotionStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.index_snapshots import FileSnapshotStore
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.memory_promotion import PostgresPromotionStore
from statekeeper.storage.postgres.sessions import PostgresStorage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelEndpoints:
    """Where embeddings and fact extraction come from. Empty URL: none
    configured (no embedder: lexical recall; no LLM: offline extractor)."""

    embedder_url: str = ""
    embedder_model: str = "text-embedding-3-small"
    embedder_api_key: str = ""
    # "openai": the URL if set, else no embedder. The server's settings
    # default to "auto" (see build_embedder); "local" uses the optional
    # all-MiniLM-L6-v2 extra instead of a URL.
    embedder_kind: str = "openai"
    local_model_path: str = ""
    llm_url: str = ""
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str = ""


def build_embedder(endpoints: ModelEndpoints) -> Embedder | None:
    """The embedder for `embedder_kind`: "auto" (the server's default) is the
    endpoint when one is configured, else the bundled multilingual model;
    "openai" without a URL, and "none", mean no embedder (client vectors,
    lexical text recall)."""
    kind = endpoints.embedder_kind
    if kind == "local":
        from statekeeper.adapters.local_embedder import LocalEmbedder

        return LocalEmbedder(endpoints.local_model_path)
    if kind in ("openai", "auto") and endpoints.embedder_url:
        return OpenAIEmbedder(
            endpoints.embedder_url, endpoints.embedder_model, endpoints.embedder_api_key
        )
    if kind in ("auto", "multilingual"):
        from statekeeper.adapters.multilingual_embedder import MultilingualEmbedder

        return MultilingualEmbedder()
    return None


def build_extractor(endpoints: ModelEndpoints, config: MemoryConfig) -> FactExtractor:
    limits = config.limits
    if endpoints.llm_url:
        return OpenAIFactExtractor(
            endpoints.llm_url,
            endpoints.llm_model,
            endpoints.llm_api_key,
            max_facts=limits.max_extracted_facts,
            max_field_chars=limits.max_fact_field_bytes,
        )
    return PatternFactExtractor(limits.max_extracted_facts)


def embedded_store(storage: Storage) -> MemoryStore:
    """The memory store sharing the embedded backend's SQLite file. Other
    backends pass their own MemoryStore to MemoryApp (PostgreSQL: not built
    yet)."""
    if not isinstance(storage, EmbeddedStorage):
        raise ValueError(f"no memory store for {storage.description}; pass one")
    return EmbeddedMemoryStore(storage)


def promotion_store(storage: Storage) -> PromotionStore | None:
    """Where promotion watermarks live: the embedded file, or the PostgreSQL
    database of the production tier (its `durable` part); None for other
    storages (sessions are then not promoted)."""
    if isinstance(storage, EmbeddedStorage):
        return EmbeddedPromotionStore(storage)
    durable = getattr(storage, "durable", storage)
    if isinstance(durable, PostgresStorage):
        return PostgresPromotionStore(durable)
    return None


class MemoryApp:
    def __init__(
        self,
        storage: Storage,
        sessions: SessionManager,
        counter: TokenCounter,
        summarizer: Summarizer | None,
        limits: Limits,
        config: MemoryConfig,
        endpoints: ModelEndpoints,
        feed: ChangeFeed | None = None,
        clock: Callable[[], float] = time.time,
        store: MemoryStore | None = None,
        index_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.storage = storage
        self.store: MemoryStore = store if store is not None else embedded_store(storage)
        self.feed = feed if feed is not None else InProcessChangeFeed()
        self.snapshots = None if index_dir is None else FileSnapshotStore(index_dir)
        self.indexes = VectorIndexes(
            self.store,
            FaissIndexFactory(config.index),
            self.feed,
            clock,
            snapshots=self.snapshots,
            config=config.index,
        )
        self.embedder = build_embedder(endpoints)
        extractor = build_extractor(endpoints, config)
        # The optional reranker stage of text recall (off while no url is set).
        rerank = config.rerank
        self.reranker = RerankEndpoint(rerank.url, rerank.timeout_seconds) if rerank.url else None
        episodes = EpisodicMemory(
            self.store,
            self.indexes,
            config,
            limits,
            self.embedder,
            summarizer,
            clock,
            reranker=self.reranker,
        )
        semantic = SemanticMemory(self.store, self.store, extractor, limits, config.limits, clock)
        forgetting = Forgetting(episodes, self.store, config, limits, clock)
        consolidation = Consolidation(
            self.store, self.store, self.indexes, extractor, config, limits, clock
        )
        self.domain = MemoryDomain(
            episodes=episodes,
            semantic=semantic,
            context=MemoryContextBuilder(
                sessions, episodes, semantic, counter, config, limits, clock
            ),
            forgetting=forgetting,
            consolidation=consolidation,
        )
        self.maintenance = MemoryMaintenance(
            self.store, forgetting, consolidation, self.indexes, config
        )
        # Sessions feed episodic memory (opt-in; core/memory/promotion.py).
        # Facts are extracted from promoted turns only by a configured LLM.
        promotions = promotion_store(storage)
        # EraseUser removes the user's watermark rows through this store
        # (`erase_user`), as one more participant.
        self.promotions = promotions
        self.promoter: SessionPromoter | None = None
        if promotions is not None:
            self.promoter = SessionPromoter(
                sessions,
                episodes,
                promotions,
                config.promotion,
                config.limits.max_text_bytes,
                semantic if endpoints.llm_url else None,
                clock,
            )
        self._sessions = sessions
        self._rebuild: asyncio.Task[int] | None = None
        self._saver: asyncio.Task[None] | None = None

    async def start(self, wait_for_indexes: bool = False) -> None:
        """Migrates the memory schema, starts loading every index (from its
        snapshot, else from the store; recall on a user not loaded yet
        loads that user first), and starts the background jobs."""
        await self.store.start()
        self._rebuild = asyncio.create_task(self.indexes.rebuild_all(), name="memory-rebuild")
        if wait_for_indexes:
            await self._rebuild
        self.maintenance.start()
        if self.promoter is not None:
            await self.promoter.start()
            self._sessions.add_append_listener(self.promoter.notify)
        interval = self.config.index_snapshot_interval_seconds
        if self.snapshots is not None and interval > 0:
            self._saver = asyncio.create_task(self._save_forever(interval), name="memory-snapshots")

    def attach_archive(
        self, database: EpisodeArchiveDatabase, archive: Archive, after_days: float
    ) -> EpisodeUnits:
        """The archive tier's `episodes` kind (core/archive/episodes.py):
        registered on `archive` whatever `after_days` (0: nothing is archived,
        what was stays readable), and the reads' restore hook."""
        units = EpisodeUnits(database, self.store, self.indexes, after_days)
        units.attach(archive)
        self.domain.episodes.archived = units
        return units

    def index_loading(self) -> LoadingState:
        """How many indexes are loading, and whether the startup load ended:
        health stays SERVING meanwhile (other users are served, and a
        loading user's recall answers from an exact scan or waits, bounded)."""
        return self.indexes.loading_state()

    async def _save_forever(self, interval: float) -> None:
        save = self.indexes.save_snapshots
        await repeat_every(interval, save, "saving vector index snapshots", log)

    def register(self, server: grpc.aio.Server) -> MemoryServicer:
        return register(server, self.domain)

    async def stop(self) -> None:
        """Stops the jobs, saves the indexes changed since their last
        snapshot (so the next start loads them), and unsubscribes."""
        await self.maintenance.stop()
        if self.promoter is not None:
            self._sessions.remove_append_listener(self.promoter.notify)
            await self.promoter.stop()
        # One already done is not awaited: its outcome was the start's to see.
        running = [t for t in (self._rebuild, self._saver) if t is not None and not t.done()]
        await cancel_and_wait(running)
        try:
            await self.indexes.save_snapshots()
        except Exception:  # a failed save costs a rebuild at the next start, no data
            log.exception("saving vector index snapshots at shutdown failed")
        self.indexes.close()
        closer = getattr(self.embedder, "aclose", None)
        if closer is not None:
            await closer()
        if self.reranker is not None:
            await self.reranker.aclose()
