"""MemoryService: translates requests into memory domain calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import grpc

from statekeeper.api import memory_convert as convert
from statekeeper.api.convert import timestamp
from statekeeper.api.interceptor import current_actor, current_tenant
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.core.memory.context import ContextRequest, MemoryContextBuilder
from statekeeper.core.memory.episodes import ItemError, RecallQuery, RecordOutcome
from statekeeper.core.memory.episodic import EpisodicMemory
from statekeeper.core.memory.forgetting import Consolidation, ConsolidationRequest, Forgetting
from statekeeper.core.memory.models import Episode, FactQuery
from statekeeper.core.memory.semantic import EntityRequest, SemanticMemory
from statekeeper_client.v1 import common_pb2 as common_pb
from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc

Context: TypeAlias = grpc.aio.ServicerContext


@dataclass(frozen=True)
class MemoryDomain:
    """The domain objects MemoryService calls."""

    episodes: EpisodicMemory
    semantic: SemanticMemory
    context: MemoryContextBuilder
    forgetting: Forgetting
    consolidation: Consolidation


class MemoryServicer(memory_pb2_grpc.MemoryServiceServicer):
    def __init__(self, domain: MemoryDomain) -> None:
        self._episodes = domain.episodes
        self._semantic = domain.semantic
        self._context = domain.context
        self._forgetting = domain.forgetting
        self._consolidation = domain.consolidation

    def _episode(self, episode: Episode, with_embedding: bool = True) -> pb.Episode:
        decayed = self._episodes.decayed_importance(episode)
        return convert.episode_to_proto(episode, decayed, with_embedding)

    # ----- episodes ------------------------------------------------------

    async def RecordEpisode(
        self, request: pb.RecordEpisodeRequest, context: Context
    ) -> pb.RecordEpisodeResponse:
        outcome = await self._episodes.record(
            current_tenant(), convert.episode_draft(request), current_actor()
        )
        return self._record_response(outcome)

    async def RecordEpisodes(
        self, request: pb.RecordEpisodesRequest, context: Context
    ) -> pb.RecordEpisodesResponse:
        drafts = [convert.episode_draft(item) for item in request.episodes]
        outcomes = await self._episodes.record_many(current_tenant(), drafts, current_actor())
        response = pb.RecordEpisodesResponse()
        add = response.results.add
        created = duplicates = errors = 0
        for outcome in outcomes:
            if isinstance(outcome, ItemError):
                errors += 1
                add(
                    status=pb.RECORD_EPISODE_STATUS_ERROR,
                    error_field=outcome.field,
                    error_reason=common_pb.ErrorReason.Value("ERROR_REASON_" + outcome.reason),
                    error_message=outcome.message,
                )
                continue
            if outcome.duplicate:
                duplicates += 1
                result = add(status=pb.RECORD_EPISODE_STATUS_DUPLICATE)
            else:
                created += 1
                result = add(status=pb.RECORD_EPISODE_STATUS_CREATED)
            # Filled in place: a result built apart and passed to add() would be
            # copied (with its episode) once more, a third of the response's cost.
            self._fill_record_response(result.result, outcome)
        response.created_count = created
        response.duplicate_count = duplicates
        response.error_count = errors
        return response

    def _record_response(self, outcome: RecordOutcome) -> pb.RecordEpisodeResponse:
        response = pb.RecordEpisodeResponse()
        self._fill_record_response(response, outcome)
        return response

    def _fill_record_response(
        self, target: pb.RecordEpisodeResponse, outcome: RecordOutcome
    ) -> None:
        episode = outcome.episode
        target.episode.MergeFrom(self._episode(episode, with_embedding=False))
        if outcome.duplicate:
            target.duplicate = True
            target.duplicate_of = episode.episode_id
        target.duplicate_kind = int(outcome.duplicate_kind)  # type: ignore[assignment]
        target.duplicate_similarity = outcome.similarity

    async def GetEpisode(
        self, request: pb.GetEpisodeRequest, context: Context
    ) -> pb.GetEpisodeResponse:
        episode = await self._episodes.get(
            current_tenant(), request.episode_id, request.include_embedding
        )
        return pb.GetEpisodeResponse(episode=self._episode(episode))

    async def ListEpisodes(
        self, request: pb.ListEpisodesRequest, context: Context
    ) -> pb.ListEpisodesResponse:
        episodes, next_token = await self._episodes.list_episodes(
            current_tenant(),
            request.user_id,
            convert.episode_filter(request.filter),
            request.page_size,
            request.page_token,
            request.include_embedding,
        )
        return pb.ListEpisodesResponse(
            episodes=[self._episode(e) for e in episodes], next_page_token=next_token
        )

    async def DeleteEpisode(
        self, request: pb.DeleteEpisodeRequest, context: Context
    ) -> pb.DeleteEpisodeResponse:
        deleted = await self._episodes.delete(current_tenant(), request.episode_id, current_actor())
        return pb.DeleteEpisodeResponse(episode_id=deleted)

    async def Recall(self, request: pb.RecallRequest, context: Context) -> pb.RecallResponse:
        which = request.WhichOneof("query")
        outcome = await self._episodes.recall(
            current_tenant(),
            RecallQuery(
                user_id=request.user_id,
                query_text=request.query_text if which == "query_text" else "",
                query_vector=(
                    convert.float32s(request.query_vector.values)
                    if which == "query_vector"
                    else None
                ),
                top_k=request.top_k,
                episode_filter=convert.episode_filter(request.filter),
                min_score=request.min_score,
                weights=convert.weight_overrides(request.weights),
                include_embedding=request.include_embedding,
                include_archived=request.include_archived,
            ),
        )
        response = pb.RecallResponse(
            ranking=int(outcome.ranking),  # type: ignore[arg-type]
            index_type=outcome.index_type,
            effective_weights=convert.weights_to_proto(outcome.weights),
            candidate_count=outcome.candidate_count,
            reranked=outcome.reranked,
        )
        # Each result filled in place (a result built apart would be copied).
        add = response.results.add
        decayed = self._episodes.decayed_importance
        for recalled in outcome.results:
            result = add()
            convert.fill_episode(result.episode, recalled.episode, decayed(recalled.episode))
            convert.fill_score(result.score, recalled.score)
        return response

    # ----- facts ---------------------------------------------------------

    async def AddFacts(self, request: pb.AddFactsRequest, context: Context) -> pb.AddFactsResponse:
        results = await self._semantic.add_facts(
            current_tenant(),
            request.user_id,
            [convert.fact_input(f) for f in request.facts],
            actor=current_actor(),
        )
        return pb.AddFactsResponse(results=convert.fact_results_to_proto(results))

    async def ExtractFacts(
        self, request: pb.ExtractFactsRequest, context: Context
    ) -> pb.ExtractFactsResponse:
        which = request.WhichOneof("input")
        if which is None:
            raise InvalidArgumentError("input", "set text or episode_id")
        outcome = await self._semantic.extract_facts(
            current_tenant(),
            request.user_id,
            request.text if which == "text" else "",
            request.episode_id if which == "episode_id" else "",
            request.source,
            request.dry_run,
            current_actor(),
        )
        return pb.ExtractFactsResponse(
            extracted=[convert.fact_input_to_proto(d) for d in outcome.extracted],
            results=convert.fact_results_to_proto(outcome.results),
            extractor=int(outcome.source),  # type: ignore[arg-type]
        )

    async def GetFact(self, request: pb.GetFactRequest, context: Context) -> pb.GetFactResponse:
        fact = await self._semantic.get_fact(current_tenant(), request.fact_id)
        return pb.GetFactResponse(fact=convert.fact_to_proto(fact))

    async def ListFacts(
        self, request: pb.ListFactsRequest, context: Context
    ) -> pb.ListFactsResponse:
        facts, next_token = await self._semantic.list_facts(
            current_tenant(),
            FactQuery(
                user_id=request.user_id,
                subject=request.subject,
                predicate=request.predicate,
                object=request.object,
                include_invalidated=request.include_invalidated,
            ),
            request.page_size,
            request.page_token,
        )
        return pb.ListFactsResponse(
            facts=[convert.fact_to_proto(f) for f in facts], next_page_token=next_token
        )

    async def QueryEntity(
        self, request: pb.QueryEntityRequest, context: Context
    ) -> pb.QueryEntityResponse:
        found = await self._semantic.query_entity(
            current_tenant(),
            EntityRequest(
                user_id=request.user_id,
                entity=request.entity,
                depth=request.depth,
                as_of=convert.optional_seconds(request, "as_of"),
                include_invalidated=request.include_invalidated,
                predicates=tuple(request.predicates),
                max_facts=request.max_facts,
            ),
        )
        return pb.QueryEntityResponse(
            nodes=[convert.node_to_proto(n) for n in found.nodes],
            edges=[convert.fact_to_proto(f) for f in found.edges],
            truncated=found.truncated,
        )

    async def InvalidateFact(
        self, request: pb.InvalidateFactRequest, context: Context
    ) -> pb.InvalidateFactResponse:
        fact, already = await self._semantic.invalidate_fact(
            current_tenant(),
            request.fact_id,
            request.reason,
            convert.optional_seconds(request, "valid_to"),
            current_actor(),
        )
        return pb.InvalidateFactResponse(
            fact=convert.fact_to_proto(fact), already_invalidated=already
        )

    async def DeclarePredicate(
        self, request: pb.DeclarePredicateRequest, context: Context
    ) -> pb.DeclarePredicateResponse:
        predicate = await self._semantic.declare_predicate(
            current_tenant(),
            request.name,
            request.single_valued,
            request.description,
            current_actor(),
        )
        return pb.DeclarePredicateResponse(predicate=convert.predicate_to_proto(predicate))

    async def ListPredicates(
        self, request: pb.ListPredicatesRequest, context: Context
    ) -> pb.ListPredicatesResponse:
        found, next_token = await self._semantic.list_predicates(
            current_tenant(), request.page_size, request.page_token
        )
        return pb.ListPredicatesResponse(
            predicates=[convert.predicate_to_proto(p) for p in found], next_page_token=next_token
        )

    # ----- context, jobs, indexes ----------------------------------------

    async def BuildContext(
        self, request: pb.BuildContextRequest, context: Context
    ) -> pb.BuildContextResponse:
        built = await self._context.build(
            current_tenant(),
            ContextRequest(
                user_id=request.user_id,
                session_id=request.session_id,
                message=request.message,
                token_budget=request.token_budget,
                reserved_output_tokens=request.reserved_output_tokens,
                max_episodes=request.max_episodes,
                max_facts=request.max_facts,
                max_working_tokens=(
                    request.max_working_tokens if request.HasField("max_working_tokens") else None
                ),
                weights=convert.weight_overrides(request.recall_weights),
                min_score=request.min_score,
                include_archived=request.include_archived,
            ),
        )
        return convert.built_context_to_proto(built, self._episode)

    async def RunForgetting(
        self, request: pb.RunForgettingRequest, context: Context
    ) -> pb.RunForgettingResponse:
        report = await self._forgetting.run(
            current_tenant(),
            request.user_id,
            request.dry_run,
            request.decay_rate if request.HasField("decay_rate") else None,
            request.threshold if request.HasField("threshold") else None,
            current_actor(),
        )
        return pb.RunForgettingResponse(
            dry_run=report.dry_run,
            decay_rate=report.decay_rate,
            threshold=report.threshold,
            episodes_scanned=report.episodes_scanned,
            episodes_deleted=report.episodes_deleted,
            deleted_episode_ids=report.deleted_episode_ids,
            deleted_episode_ids_truncated=report.deleted_ids_truncated,
            start_time=timestamp(report.start_time),
            end_time=timestamp(report.end_time),
        )

    async def RunConsolidation(
        self, request: pb.RunConsolidationRequest, context: Context
    ) -> pb.RunConsolidationResponse:
        report = await self._consolidation.run(
            current_tenant(),
            ConsolidationRequest(
                user_id=request.user_id,
                dry_run=request.dry_run,
                similarity_threshold=(
                    request.similarity_threshold
                    if request.HasField("similarity_threshold")
                    else None
                ),
                min_cluster_size=(
                    request.min_cluster_size if request.HasField("min_cluster_size") else None
                ),
                demotion_factor=(
                    request.demotion_factor if request.HasField("demotion_factor") else None
                ),
            ),
            current_actor(),
        )
        return pb.RunConsolidationResponse(
            dry_run=report.dry_run,
            episodes_scanned=report.episodes_scanned,
            clusters=[
                pb.ConsolidationCluster(
                    user_id=c.user_id,
                    episode_ids=c.episode_ids,
                    facts=convert.fact_results_to_proto(c.facts),
                )
                for c in report.clusters
            ],
            cluster_count=report.cluster_count,
            facts_created=report.facts_created,
            episodes_demoted=report.episodes_demoted,
            extractor=int(report.extractor),  # type: ignore[arg-type]
            start_time=timestamp(report.start_time),
            end_time=timestamp(report.end_time),
        )

    async def GetIndexStats(
        self, request: pb.GetIndexStatsRequest, context: Context
    ) -> pb.GetIndexStatsResponse:
        stats = await self._episodes.index_stats(current_tenant(), request.user_id)
        return pb.GetIndexStatsResponse(stats=convert.stats_to_proto(stats))

    async def RebuildIndex(
        self, request: pb.RebuildIndexRequest, context: Context
    ) -> pb.RebuildIndexResponse:
        stats = await self._episodes.rebuild_index(current_tenant(), request.user_id)
        return pb.RebuildIndexResponse(stats=convert.stats_to_proto(stats))


def register(server: grpc.aio.Server, domain: MemoryDomain) -> MemoryServicer:
    """Adds MemoryService to `server`; returns the servicer."""
    servicer = MemoryServicer(domain)
    memory_pb2_grpc.add_MemoryServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    return servicer
