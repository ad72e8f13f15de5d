"""Forgetting and consolidation, on demand and as background jobs.

Forgetting: each episode's importance decays with age as
importance * exp(-decay_rate * age_days); episodes whose decayed importance
is under the threshold are deleted (store first, then every replica's index
through the change feed). Facts are never forgotten.

Consolidation: per user, episodes never consolidated are grouped greedily
into clusters whose members are all pairwise at least `similarity_threshold`
similar (complete linkage); each cluster of at least `min_cluster_size`
becomes semantic facts (the extractor's, or one "recurring_topic" summary
fact when it finds none), stored as AddFacts would, and the importance of
its episodes is multiplied by the demotion factor, in one transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from statekeeper.core.audit.service import Actor, system_actor
from statekeeper.core.errors import FailedPreconditionError, InvalidArgumentError
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.episodic import EpisodicMemory
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    Episode,
    FactBatch,
    FactDraft,
    FactOrigin,
    FactOutcome,
    FactResult,
    ValueSource,
    audit_template,
    decayed_importance,
)
from statekeeper.core.memory.semantic import FactExtractor, new_fact_id, resolve_fact
from statekeeper.core.memory.store import EpisodeStore, FactStore
from statekeeper.core.memory.vector_index import IndexEntry, VectorChange, VectorIndexes
from statekeeper.core.tasks import cancel_and_wait, repeat_every
from statekeeper.core.validation import check_id

log = logging.getLogger(__name__)

Clock = Callable[[], float]
SCAN_BATCH = 500
SUMMARY_PREDICATE = "recurring_topic"


class RunGuard:
    """At most one run per overlapping scope: a tenant-wide run (user "")
    overlaps every run of that tenant."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._active: set[tuple[str, str]] = set()

    @contextlib.asynccontextmanager
    async def hold(self, tenant: str, user_id: str) -> AsyncIterator[None]:
        if self._overlaps(tenant, user_id):
            raise FailedPreconditionError(
                f"a {self._what} run over an overlapping scope is in progress",
                condition="RUN_IN_PROGRESS",
            )
        self._active.add((tenant, user_id))
        try:
            yield
        finally:
            self._active.discard((tenant, user_id))

    def _overlaps(self, tenant: str, user_id: str) -> bool:
        for active_tenant, active_user in self._active:
            if active_tenant == tenant and (
                not user_id or not active_user or active_user == user_id
            ):
                return True
        return False


@dataclass(frozen=True)
class ForgettingReport:
    dry_run: bool
    decay_rate: float
    threshold: float
    episodes_scanned: int
    episodes_deleted: int
    deleted_episode_ids: list[str]
    deleted_ids_truncated: bool
    start_time: float
    end_time: float


@dataclass(frozen=True)
class Cluster:
    user_id: str
    episode_ids: list[str]
    facts: list[FactResult]


@dataclass(frozen=True)
class ConsolidationReport:
    dry_run: bool
    episodes_scanned: int
    clusters: list[Cluster]
    cluster_count: int
    facts_created: int
    episodes_demoted: int
    extractor: ValueSource
    start_time: float
    end_time: float


@dataclass(frozen=True)
class ConsolidationRequest:
    user_id: str = ""
    dry_run: bool = False
    similarity_threshold: float | None = None
    min_cluster_size: int | None = None
    demotion_factor: float | None = None


@dataclass
class _Tally:
    scanned: int = 0
    clusters: list[Cluster] = field(default_factory=list)
    cluster_count: int = 0
    facts_created: int = 0
    demoted: int = 0
    extractor: ValueSource = ValueSource.NONE  # until a cluster is extracted


class Forgetting:
    def __init__(
        self,
        episodes: EpisodicMemory,
        store: EpisodeStore,
        config: MemoryConfig,
        limits: Limits,
        clock: Clock = time.time,
    ) -> None:
        self._episodes = episodes
        self._store = store
        self._config = config
        self._limits = limits
        self._clock = clock
        self._guard = RunGuard("forgetting")

    async def run(
        self,
        tenant: str,
        user_id: str = "",
        dry_run: bool = False,
        decay_rate: float | None = None,
        threshold: float | None = None,
        actor: Actor | None = None,
    ) -> ForgettingReport:
        """`actor` is who asked; the server itself (a system actor) if None."""
        check_id("user_id", user_id, self._limits, required=False)
        rate = self._config.decay_rate_per_day if decay_rate is None else decay_rate
        floor = self._config.forget_threshold if threshold is None else threshold
        if not rate >= 0 or not np.isfinite(rate):
            raise InvalidArgumentError("decay_rate", "must not be negative")
        if not 0.0 <= floor <= 1.0:
            raise InvalidArgumentError("threshold", "must be in [0, 1]")
        who = actor if actor is not None else system_actor("RunForgetting", tenant)
        async with self._guard.hold(tenant, user_id):
            return await self._run(tenant, user_id, dry_run, rate, floor, who)

    async def _run(
        self, tenant: str, user_id: str, dry_run: bool, rate: float, floor: float, actor: Actor
    ) -> ForgettingReport:
        started = self._clock()
        limit = self._config.limits.report_id_limit
        scanned, deleted = 0, 0
        ids: list[str] = []
        after_key = 0
        while True:  # ends: keys strictly increase and the store is finite
            batch = await self._store.scan_episodes(tenant, user_id, after_key, SCAN_BATCH)
            if not batch:
                break
            after_key = batch[-1].vector_key
            scanned += len(batch)
            doomed = [
                e.episode_id
                for e in batch
                if decayed_importance(e.importance, e.occur_time, started, rate) < floor
            ]
            if doomed and not dry_run:
                deleted_now = await self._episodes.delete_many(tenant, doomed, actor)
                doomed = [e.episode_id for e in deleted_now]
            deleted += len(doomed)
            ids.extend(doomed[: max(0, limit - len(ids))])
        return ForgettingReport(
            dry_run, rate, floor, scanned, deleted, ids, deleted > len(ids), started, self._clock()
        )


class Consolidation:
    def __init__(
        self,
        store: EpisodeStore,
        facts: FactStore,
        indexes: VectorIndexes,
        extractor: FactExtractor,
        config: MemoryConfig,
        limits: Limits,
        clock: Clock = time.time,
    ) -> None:
        self._store = store
        self._facts = facts
        self._indexes = indexes
        self._extractor = extractor
        self._config = config
        self._limits = limits
        self._clock = clock
        self._guard = RunGuard("consolidation")

    async def run(
        self, tenant: str, request: ConsolidationRequest, actor: Actor | None = None
    ) -> ConsolidationReport:
        """`actor` is who asked; the server itself (a system actor) if None."""
        who = actor if actor is not None else system_actor("RunConsolidation", tenant)
        check_id("user_id", request.user_id, self._limits, required=False)
        config = self._config
        threshold = _pick(request.similarity_threshold, config.consolidation_similarity)
        size = (
            config.consolidation_min_cluster
            if request.min_cluster_size is None
            else request.min_cluster_size
        )
        demotion = _pick(request.demotion_factor, config.consolidation_demotion)
        if not 0.0 <= threshold <= 1.0:
            raise InvalidArgumentError("similarity_threshold", "must be in [0, 1]")
        if not 0.0 <= demotion <= 1.0:
            raise InvalidArgumentError("demotion_factor", "must be in [0, 1]")
        if size < 2:
            raise InvalidArgumentError("min_cluster_size", "must be at least 2")
        async with self._guard.hold(tenant, request.user_id):
            started = self._clock()
            users = [request.user_id] if request.user_id else await self._store.users(tenant)
            tally = _Tally()
            for user_id in users:
                await self._consolidate_user(
                    tenant, user_id, threshold, size, demotion, request.dry_run, tally, who
                )
            return ConsolidationReport(
                dry_run=request.dry_run,
                episodes_scanned=tally.scanned,
                clusters=tally.clusters,
                cluster_count=tally.cluster_count,
                facts_created=tally.facts_created,
                episodes_demoted=tally.demoted,
                extractor=tally.extractor,
                start_time=started,
                end_time=self._clock(),
            )

    async def _consolidate_user(
        self,
        tenant: str,
        user_id: str,
        threshold: float,
        size: int,
        demotion: float,
        dry_run: bool,
        tally: _Tally,
        actor: Actor,
    ) -> None:
        limit = self._config.limits.consolidation_batch
        episodes = await self._store.unconsolidated_episodes(tenant, user_id, limit)
        tally.scanned += len(episodes)
        for members in find_clusters(episodes, threshold, size):
            drafts, source = await self._facts_for(user_id, members)
            tally.extractor = source
            tally.cluster_count += 1
            results = await self._apply(tenant, user_id, members, drafts, demotion, dry_run, actor)
            if not dry_run and not results:
                continue  # a concurrent run consolidated some of them first
            if not dry_run:
                tally.facts_created += sum(r.outcome == FactOutcome.CREATED for r in results)
                tally.demoted += len(members)
                await self._publish_demotion(tenant, user_id, members, demotion)
            if len(tally.clusters) < self._config.limits.report_cluster_limit:
                ids = [e.episode_id for e in members]
                tally.clusters.append(Cluster(user_id, ids, results))

    async def _facts_for(
        self, user_id: str, members: Sequence[Episode]
    ) -> tuple[list[FactDraft], ValueSource]:
        text = "\n".join(
            "\n".join(p for p in (e.user_message, e.assistant_response) if p) for e in members
        )
        extraction = await self._extractor.extract(text)
        drafts = extraction.facts[: self._config.limits.max_extracted_facts]
        if not drafts:
            # Nothing extractable: the cluster still becomes one semantic
            # summary, its most central episode's one-line summary.
            drafts = [FactDraft(user_id, SUMMARY_PREDICATE, _central(members).summary, "", 0.5)]
        source = ", ".join(f"episode:{e.episode_id}" for e in members[:3])
        drafts = [
            FactDraft(d.subject, d.predicate, d.object, d.source or source, d.confidence)
            for d in drafts
        ]
        return drafts, extraction.source

    async def _apply(
        self,
        tenant: str,
        user_id: str,
        members: Sequence[Episode],
        drafts: list[FactDraft],
        demotion: float,
        dry_run: bool,
        actor: Actor,
    ) -> list[FactResult]:
        now = self._clock()
        batch = FactBatch(
            user_id=user_id,
            drafts=tuple(drafts),
            new_ids=tuple(new_fact_id() for _ in drafts),
            origin=FactOrigin.CONSOLIDATION,
            now=now,
            source_episode_ids=tuple(e.episode_id for e in members),
        )
        if dry_run:
            return [
                _preview(draft, fact_id, batch)
                for draft, fact_id in zip(drafts, batch.new_ids, strict=True)
            ]
        plan = ConsolidationPlan(user_id, batch.source_episode_ids, batch, demotion)
        return await self._facts.consolidate(tenant, plan, audit_template(actor, now))

    async def _publish_demotion(
        self, tenant: str, user_id: str, members: Sequence[Episode], demotion: float
    ) -> None:
        entries = tuple(
            IndexEntry(e.vector_key, e.importance * demotion, e.occur_time) for e in members
        )
        await self._indexes.publish(VectorChange(tenant, user_id, upserts=entries))


def find_clusters(
    episodes: Sequence[Episode], threshold: float, min_size: int
) -> list[list[Episode]]:
    """Greedy complete-linkage clusters, oldest seed first: a member joins if
    it is at least `threshold` similar to every member already in."""
    embedded = [e for e in episodes if e.embedding is not None]
    if len(embedded) < min_size:
        return []
    matrix = np.vstack([e.embedding for e in embedded if e.embedding is not None])
    similarity = matrix @ matrix.T
    taken = np.zeros(len(embedded), dtype=bool)
    clusters: list[list[Episode]] = []
    for seed in range(len(embedded)):
        if taken[seed]:
            continue
        members = [seed]
        for candidate in np.argsort(-similarity[seed]):
            index = int(candidate)
            if index == seed or taken[index] or similarity[seed, index] < threshold:
                continue
            if all(similarity[index, m] >= threshold for m in members):
                members.append(index)
        if len(members) >= min_size:
            taken[members] = True
            clusters.append([embedded[m] for m in members])
    return clusters


def _central(members: Sequence[Episode]) -> Episode:
    """The member most similar to the others (the medoid)."""
    matrix = np.vstack([e.embedding for e in members if e.embedding is not None])
    return members[int(np.argmax((matrix @ matrix.T).sum(axis=1)))]


def _preview(draft: FactDraft, fact_id: str, batch: FactBatch) -> FactResult:
    """What storing the draft would report, for dry runs (without looking
    for existing facts: a dry run does not read the graph)."""
    return resolve_fact(draft, fact_id, batch, (), False).result


def _pick(override: float | None, default: float) -> float:
    return default if override is None else override


class MemoryMaintenance:
    """The background jobs: forgetting and consolidation for every tenant,
    and index upkeep (tombstone rebuilds, Flat -> HNSW growth). Each job is
    one asyncio task with its own interval; 0 disables it."""

    def __init__(
        self,
        store: EpisodeStore,
        forgetting: Forgetting,
        consolidation: Consolidation,
        indexes: VectorIndexes,
        config: MemoryConfig,
    ) -> None:
        self._store = store
        self._forgetting = forgetting
        self._consolidation = consolidation
        self._indexes = indexes
        self._config = config
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        jobs = [
            ("memory-forgetting", self._config.forgetting_interval_seconds, self._forget_all),
            (
                "memory-consolidation",
                self._config.consolidation_interval_seconds,
                self._consolidate_all,
            ),
            (
                "memory-index",
                self._config.index_maintenance_interval_seconds,
                self._maintain_indexes,
            ),
        ]
        for name, interval, job in jobs:
            if interval > 0:
                self._tasks.append(asyncio.create_task(_every(interval, name, job), name=name))

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)

    async def _forget_all(self) -> None:
        for tenant in await self._store.tenants():
            report = await self._forgetting.run(tenant)
            if report.episodes_deleted:
                log.info(
                    "forgot episodes", extra={"tenant": tenant, "deleted": report.episodes_deleted}
                )

    async def _consolidate_all(self) -> None:
        for tenant in await self._store.tenants():
            report = await self._consolidation.run(tenant, ConsolidationRequest())
            if report.cluster_count:
                log.info(
                    "consolidated episodes",
                    extra={"tenant": tenant, "clusters": report.cluster_count},
                )

    async def _maintain_indexes(self) -> None:
        rebuilt = await self._indexes.maintain()
        if rebuilt:
            log.info("rebuilt vector indexes", extra={"rebuilt": rebuilt})


async def _every(interval: float, name: str, job: Callable[[], Awaitable[None]]) -> None:
    async def run() -> None:
        try:
            await job()
        except FailedPreconditionError:
            log.info("%s skipped: an on-demand run is in progress", name)

    await repeat_every(interval, run, name, log)
