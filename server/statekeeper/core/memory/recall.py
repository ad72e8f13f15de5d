"""Recall, the read side of episodic memory: vector, lexical and hybrid search over a
user's episodes, fused with recency and importance into one score whose parts are
returned. EpisodicMemory (core/memory/episodic.py) adds recording on top."""

from __future__ import annotations

import asyncio
import itertools
import math
import re
import time
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import NamedTuple, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from statekeeper.core.errors import (
    InvalidArgumentError,
    LimitExceededError,
)
from statekeeper.core.limits import Limits
from statekeeper.core.memory import lexical
from statekeeper.core.memory.config import MemoryConfig, RecallDefaults
from statekeeper.core.memory.episodes import (
    ArchivedEpisodes,
    Embedder,
    Recalled,
    RecallOutcome,
    RecallQuery,
    Score,
    WeightOverrides,
    Weights,
)
from statekeeper.core.memory.lexical import Neighbour
from statekeeper.core.memory.models import (
    DimensionMismatchError,
    Episode,
    EpisodeFilter,
    Ranking,
    Vector,
    decayed_importance,
    unit_vector,
)
from statekeeper.core.memory.periods import named_period
from statekeeper.core.memory.store import EpisodeStore
from statekeeper.core.memory.vector_index import (
    Candidate,
    SearchColumns,
    SearchOutcome,
    VectorIndexes,
)
from statekeeper.core.sessions.summarizer import Summarizer
from statekeeper.core.validation import check_id, check_text


class EpisodicRecall:
    """The dependencies of episodic memory and its recall."""

    def __init__(
        self,
        store: EpisodeStore,
        indexes: VectorIndexes,
        config: MemoryConfig,
        limits: Limits,
        embedder: Embedder | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock = time.time,
        reranker: Reranker | None = None,
    ) -> None:
        self._store = store
        self._reranker = reranker
        self._indexes = indexes
        self._config = config
        self._limits = limits
        self._embedder = embedder
        self._summarizer = summarizer
        self._clock = clock
        # The archive tier's hook (None: no archive): episodes of an idle
        # user that were archived are restored by the reads that need them.
        self.archived: ArchivedEpisodes | None = None

    @property
    def has_embedder(self) -> bool:
        return self._embedder is not None

    def decayed_importance(self, episode: Episode, now: float | None = None) -> float:
        when = self._clock() if now is None else now
        rate = self._config.decay_rate_per_day
        return decayed_importance(episode.importance, episode.occur_time, when, rate)

    def _check_vector(self, name: str, values: Sequence[float]) -> Vector:
        limit = self._config.limits.max_embedding_dimension
        if len(values) > limit:
            raise LimitExceededError(name, limit, f"has {len(values)} dimensions")
        vector = np.asarray(values, dtype=np.float32)
        # The arrays' own methods: np.all/np.any add a Python wrapper per call.
        if not np.isfinite(vector).all():
            raise InvalidArgumentError(name, "holds a non-finite value")
        if not vector.any():
            raise InvalidArgumentError(name, "must not be the zero vector")
        return unit_vector(vector)

    async def _model_matches(self, tenant: str, user_id: str) -> bool:
        """True if the user has no vectors yet or only the embedder's: its
        vectors must not be compared with another model's (or a client's)."""
        assert self._embedder is not None
        stats = await self._indexes.load_stats(tenant, user_id)
        return stats.dimension == 0 or stats.embedding_model == self._embedder.model

    async def _check_dimension(self, tenant: str, user_id: str, name: str, vector: Vector) -> None:
        expected = await self._indexes.dimension(tenant, user_id)
        if expected and expected != vector.shape[0]:
            raise DimensionMismatchError(name, expected, int(vector.shape[0]))

    def resolve_weights(self, overrides: WeightOverrides) -> Weights:
        defaults: RecallDefaults = self._config.recall
        weights = Weights(
            similarity=_pick(overrides.similarity, defaults.similarity_weight),
            recency=_pick(overrides.recency, defaults.recency_weight),
            importance=_pick(overrides.importance, defaults.importance_weight),
            half_life_seconds=_pick(
                overrides.half_life_seconds, defaults.recency_half_life_seconds
            ),
        )
        for name in ("similarity", "recency", "importance"):
            value = getattr(weights, name)
            if value < 0 or math.isnan(value):
                raise InvalidArgumentError(f"weights.{name}", "must not be negative")
        if weights.total <= 0:
            raise InvalidArgumentError("weights", "at least one weight must be positive")
        if not weights.half_life_seconds > 0:
            raise InvalidArgumentError("weights.recency_half_life", "must be positive")
        return weights

    async def recall(self, tenant: str, query: RecallQuery) -> RecallOutcome:
        limits = self._config.limits
        check_id("user_id", query.user_id, self._limits)
        check_filter(query.episode_filter)
        if query.top_k < 0:
            raise InvalidArgumentError("top_k", "must not be negative")
        if query.min_score < 0 or math.isnan(query.min_score):
            raise InvalidArgumentError("min_score", "must not be negative")
        weights = self.resolve_weights(query.weights)
        if query.include_archived and self.archived is not None:
            # Opt-in: archived episodes are recalled only when asked for.
            await self.archived.restore_user(tenant, query.user_id)
        top_k = min(query.top_k or limits.default_top_k, limits.max_top_k)
        if query.query_vector is not None:
            if not query.query_vector:
                raise InvalidArgumentError("query_vector.values", "must not be empty")
            vector = self._check_vector("query_vector.values", query.query_vector)
        elif query.query_text.strip():
            check_text("query_text", query.query_text, limits.max_text_bytes)
            if self._embedder is None or not await self._model_matches(tenant, query.user_id):
                return await self._recall_lexical(tenant, query, weights, top_k)
            return await self._recall_hybrid(tenant, query, weights, top_k)
        else:
            raise InvalidArgumentError("query", "set query_text or query_vector")
        return await self._recall_vector(tenant, query, vector, weights, top_k)

    async def _recall_vector(
        self, tenant: str, query: RecallQuery, vector: Vector, weights: Weights, top_k: int
    ) -> RecallOutcome:
        field_name = "query_vector.values" if query.query_vector is not None else "query_text"
        await self._check_dimension(tenant, query.user_id, field_name, vector)
        allowed = await self._allowed(tenant, query)
        now = self._clock()
        ranked, index_type = await self._best_by_combined(
            tenant, query, vector, weights, top_k, allowed, now
        )
        qualified = ranked.qualified(query.min_score)
        results = await self._materialize(tenant, query, ranked.best(min(qualified, top_k)))
        return RecallOutcome(results, Ranking.VECTOR, index_type, weights, len(ranked), qualified)

    async def _best_by_combined(
        self,
        tenant: str,
        query: RecallQuery,
        vector: Vector,
        weights: Weights,
        top_k: int,
        allowed: npt.NDArray[np.int64] | None,
        now: float,
    ) -> tuple[_RankedColumns, str]:
        """Widens the similarity search until the top k by combined score
        are proven (see the module docstring). Ends: n grows geometrically
        and the search is exhausted once n covers every allowed vector."""
        wanted = max(top_k * _GROWTH, _FIRST_SEARCH)
        ceiling: Score | None = None
        minimum, rate = query.episode_filter.min_importance, self._config.decay_rate_per_day
        while True:
            found = await self._indexes.search_columns(
                tenant, query.user_id, vector, wanted, allowed
            )
            ranked = _RankedColumns(found, now, weights, minimum, rate)
            if found.exhausted or len(found.keys) < wanted:
                return ranked, found.index_type
            if len(ranked) >= top_k:
                kth = ranked.combined_at(top_k - 1)
                floor = max(float(found.similarity[-1]), 0.0)
                # Cheap bound first (recency and importance at most 1), then
                # the user's real maxima.
                if kth >= combine(floor, 1.0, now, now, weights).combined:
                    return ranked, found.index_type
                if ceiling is None:
                    importance, newest = self._indexes.ranking_ceiling(tenant, query.user_id)
                    ceiling = combine(1.0, importance, min(newest, now), now, weights)
                lowered = weights.similarity * (1.0 - floor) / weights.total
                if kth >= ceiling.combined - lowered:
                    return ranked, found.index_type
            wanted *= _GROWTH

    def _ranked(
        self, parts: Iterable[_Parts], query: RecallQuery, weights: Weights, now: float
    ) -> list[_Scored]:
        """The candidates (key, similarity, importance, occur_time) that pass
        the filter's min_importance, best combined score first (then newest,
        then lowest key)."""
        minimum = query.episode_filter.min_importance
        if minimum:
            rate = self._config.decay_rate_per_day
            parts = (p for p in parts if decayed_importance(p[2], p[3], now, rate) >= minimum)
        scored = _combined_scores(parts, now, weights)
        scored.sort(key=_rank_order)
        return scored

    async def _materialize(
        self,
        tenant: str,
        query: RecallQuery,
        kept: list[_Scored],
        read: dict[int, Episode] | None = None,
    ) -> list[Recalled]:
        """The kept candidates' episodes: those this recall has `read`
        already, the others from the store. (A text recall has read its best
        candidates, the neighbour sources, to see if they ask something; on
        LoCoMo four in ten recalls need no other read, the rest a few rows.)"""
        by_key = dict(read or {})
        missing = [s.key for s in kept if s.key not in by_key]
        if missing:
            episodes = await self._store.get_episodes_by_keys(
                tenant, query.user_id, missing, query.include_embedding
            )
            by_key.update((e.vector_key, e) for e in episodes)
        return [Recalled(by_key[s.key], s.score) for s in kept if s.key in by_key]

    async def _recall_lexical(
        self, tenant: str, query: RecallQuery, weights: Weights, top_k: int
    ) -> RecallOutcome:
        lexical_scores = await self._lexical_scores(tenant, query, self._lexical_depth(top_k))
        read: dict[int, Episode] = {}
        fused = await self._with_neighbours(tenant, query, _fuse({}, lexical_scores, 0.0), read)
        scored = self._score_fused(query, fused, weights, self._clock())
        return await self._outcome(tenant, query, scored, top_k, Ranking.LEXICAL, "", weights, read)

    async def _allowed(self, tenant: str, query: RecallQuery) -> npt.NDArray[np.int64] | None:
        """The vector keys the filter admits; None when it admits every episode."""
        if not query.episode_filter.narrows_storage:
            return None
        keys = await self._store.matching_keys(
            tenant,
            query.user_id,
            query.episode_filter,
            self._config.limits.max_filter_candidates,
        )
        return np.asarray(keys, dtype=np.int64)

    async def _hybrid_search(
        self, tenant: str, query: RecallQuery, top_k: int
    ) -> tuple[Vector, npt.NDArray[np.int64] | None, SearchOutcome]:
        """The query text's vector, the keys the filter admits, and the most
        similar episodes among them."""
        assert self._embedder is not None
        vector = unit_vector((await self._embedder.embed([query.query_text]))[0])
        await self._check_dimension(tenant, query.user_id, "query_text", vector)
        depth = max(top_k * _GROWTH, _HYBRID_MIN_DEPTH)
        allowed = await self._allowed(tenant, query)
        found = await self._indexes.search(tenant, query.user_id, vector, depth, allowed)
        return vector, allowed, found

    async def _recall_hybrid(
        self, tenant: str, query: RecallQuery, weights: Weights, top_k: int
    ) -> RecallOutcome:
        # The lexical matches are read (in the store's thread) while the query
        # is embedded (in the embedder's) and searched: neither waits for the
        # other.
        lexical_scores, (vector, allowed, found) = await _both(
            self._lexical_scores(tenant, query, self._lexical_depth(top_k)),
            _after_yield(self._hybrid_search(tenant, query, top_k)),
        )
        vector_scores = {c.key: c for c in found.candidates if c.similarity > 0}
        # Lexical matches beyond the vector list get their real cosine, not 0:
        # the cut at `depth` would otherwise cost them the whole vector part.
        lexical_only = [key for key in lexical_scores if key not in vector_scores]
        vector_scores.update(await self._cosines(tenant, query.user_id, vector, lexical_only))
        fused = _fuse(vector_scores, lexical_scores, VECTOR_SHARE)
        best_cosine = max((c.similarity for c in vector_scores.values()), default=0.0)

        async def score_new(links: list[Neighbour]) -> dict[int, tuple[float, Candidate]]:
            """Neighbours that are not candidates yet, by their own cosine
            (the vector part of `_fuse`), within the filter."""
            if allowed is not None and links:
                inside = np.isin([link.neighbour_key for link in links], allowed)
                links = [link for link, kept in zip(links, inside, strict=True) if kept]
            keys = [link.neighbour_key for link in links]
            cosines = await self._cosines(tenant, query.user_id, vector, keys)
            new = {}
            for link in links:
                candidate = cosines.get(link.neighbour_key)
                similarity = 0.0 if candidate is None else candidate.similarity
                if best_cosine > 0:
                    new[link.neighbour_key] = (
                        VECTOR_SHARE * similarity / best_cosine,
                        Candidate(link.neighbour_key, similarity, link.importance, link.occur_time),
                    )
            return new

        read: dict[int, Episode] = {}
        fused = await self._with_neighbours(tenant, query, fused, read, score_new)
        scored = self._score_fused(query, fused, weights, self._clock())
        return await self._outcome(
            tenant, query, scored, top_k, Ranking.HYBRID, found.index_type, weights, read
        )

    def _lexical_depth(self, top_k: int) -> int:
        wanted = max(top_k * _GROWTH, _LEXICAL_MIN_DEPTH)
        return min(wanted, self._config.limits.max_lexical_candidates)

    async def _lexical_scores(
        self, tenant: str, query: RecallQuery, depth: int
    ) -> dict[int, tuple[float, Candidate]]:
        """BM25 of the index's matches, by vector key, with what ranking
        needs (importance, occur_time) in a Candidate."""
        wanted = lexical.query_terms(query.query_text)
        matches = await self._store.lexical_matches(
            tenant,
            query.user_id,
            wanted,
            query.episode_filter,
            depth,
            self._config.limits.lexical_match_budget,
        )
        scores = lexical.bm25_scores(wanted, matches)
        return {
            c.key: (score, Candidate(c.key, 0.0, c.importance, c.occur_time))
            for c, score in zip(matches.candidates, scores, strict=True)
            if score > 0
        }

    async def _cosines(
        self, tenant: str, user_id: str, vector: Vector, keys: Sequence[int]
    ) -> dict[int, Candidate]:
        """The positive cosines of these episodes with `vector` (an exact
        search restricted to them; episodes without a vector are absent)."""
        if not keys:
            return {}
        wanted = np.asarray(sorted(set(keys)), dtype=np.int64)
        found = await self._indexes.search(tenant, user_id, vector, len(wanted), wanted)
        return {c.key: c for c in found.candidates if c.similarity > 0}

    async def _with_neighbours(
        self,
        tenant: str,
        query: RecallQuery,
        fused: dict[int, tuple[float, Candidate]],
        read: dict[int, Episode],
        score_new: NewCandidates | None = None,
    ) -> dict[int, tuple[float, Candidate]]:
        """Adds to each candidate a share of its session neighbours'
        similarity (NEIGHBOUR_* below), boosts those that occurred in
        a period the query names and those spoken by a speaker it names,
        and makes the best similarity 1. With
        `score_new` (hybrid), a neighbour of a best candidate that is no
        candidate yet becomes one, scored by its own cosine: the answer to a
        matching question often shares no word with the query. Without it
        (lexical), only candidates gain: an episode that matched nothing is
        not recalled for its neighbour's sake. The best candidates' episodes
        are added to `read`."""
        if not fused:
            return fused
        sources = sorted(fused, key=lambda key: -fused[key][0])[:_NEIGHBOUR_SOURCES]
        # Which sources ask something is read with the links, not after them:
        # one wait for the store instead of two (only the answer for a source
        # with a link after it is used).
        asking, links = await _both(
            self._asking(tenant, query, sources, read),
            self._store.neighbours(tenant, query.user_id, sources),
        )
        fresh = [link for link in links if link.neighbour_key not in fused]
        new = await score_new(fresh) if score_new is not None else {}
        boosted = fused | new
        for link in links:
            gain = _neighbour_share(link, asking.get(link.key)) * fused[link.key][0]
            if link.neighbour_key in boosted:
                similarity, candidate = boosted[link.neighbour_key]
                boosted[link.neighbour_key] = (similarity + gain, candidate)
        period = named_period(query.query_text)
        if period is not None:
            for key, (similarity, candidate) in boosted.items():
                if period.contains(candidate.occur_time):
                    boosted[key] = (similarity + NAMED_PERIOD_BOOST, candidate)
        await self._favour_named_speakers(tenant, query, boosted, read)
        best = max(similarity for similarity, _ in boosted.values())
        return {key: (sim / best, candidate) for key, (sim, candidate) in boosted.items()}

    async def _favour_named_speakers(
        self,
        tenant: str,
        query: RecallQuery,
        boosted: dict[int, tuple[float, Candidate]],
        read: dict[int, Episode],
    ) -> None:
        """Adds NAMED_SPEAKER_BOOST to the best _SPEAKER_DEPTH candidates
        spoken by a speaker the query names (transcript turns, "Caroline:
        ...", see lexical.speaker_tag): "What did Caroline research?" asks
        what Caroline said, and her name alone also matches every turn that
        only speaks to her ("Thanks, Caroline!"). The speakers come from the
        episodes already `read` (the best candidates); when the query names
        none of them nothing else is read. The best candidates not read yet
        are read (and added to `read`, as the results want them)."""
        tags = {tag for episode in read.values() if (tag := _speaker(episode)) is not None}
        terms = lexical.query_terms(query.query_text)
        named = {tag for tag in tags if lexical.names_speaker(query.query_text, terms, tag)}
        if not named:
            return
        best = sorted(boosted, key=lambda key: (-boosted[key][0], key))[:_SPEAKER_DEPTH]
        missing = [key for key in best if key not in read]
        if missing:
            episodes = await self._store.get_episodes_by_keys(
                tenant, query.user_id, missing, query.include_embedding
            )
            read.update((e.vector_key, e) for e in episodes)
        for key in best:
            episode = read.get(key)
            if episode is not None and _speaker(episode) in named:
                similarity, candidate = boosted[key]
                boosted[key] = (similarity + NAMED_SPEAKER_BOOST, candidate)

    async def _asking(
        self, tenant: str, query: RecallQuery, keys: Sequence[int], read: dict[int, Episode]
    ) -> dict[int, bool]:
        """The episodes among `keys` that ask something (see questions_asked),
        each with whether one of its questions holds a term of the query
        (see asks_about); the episodes are added to `read` (as the results
        want them)."""
        if not keys:
            return {}
        episodes = await self._store.get_episodes_by_keys(
            tenant, query.user_id, keys, query.include_embedding
        )
        read.update((e.vector_key, e) for e in episodes)
        wanted = set(lexical.query_terms(query.query_text))
        asking = {}
        for episode in episodes:
            asked = questions_asked(episode.user_message, episode.assistant_response)
            if asked:
                asking[episode.vector_key] = asks_about(asked, wanted)
        return asking

    def _score_fused(
        self,
        query: RecallQuery,
        fused: dict[int, tuple[float, Candidate]],
        weights: Weights,
        now: float,
    ) -> list[_Scored]:
        return self._ranked(
            ((key, sim, c.importance, c.occur_time) for key, (sim, c) in fused.items()),
            query,
            weights,
            now,
        )

    async def _outcome(
        self,
        tenant: str,
        query: RecallQuery,
        scored: list[_Scored],
        top_k: int,
        ranking: Ranking,
        index_type: str,
        weights: Weights,
        read: dict[int, Episode],
    ) -> RecallOutcome:
        reranked = await self._reranked(tenant, query, scored, weights, read)
        ranked = scored if reranked is None else reranked
        qualified = [s for s in ranked if s.combined >= query.min_score]
        results = await self._materialize(tenant, query, qualified[:top_k], read)
        return RecallOutcome(
            results,
            ranking,
            index_type,
            weights,
            len(scored),
            len(qualified),
            reranked=reranked is not None,
        )

    async def _reranked(
        self,
        tenant: str,
        query: RecallQuery,
        scored: list[_Scored],
        weights: Weights,
        read: dict[int, Episode],
    ) -> list[_Scored] | None:
        """`scored` reordered by the reranker stage (see rerank_similarities),
        or None when there is no reranker, fewer than two candidates to
        reorder, or the reranker did not answer (the recall then goes on as
        without one). The reranked episodes are added to `read`."""
        if self._reranker is None:
            return None
        head = scored[: self._config.rerank.depth]
        missing = [s.key for s in head if s.key not in read]
        if missing:
            episodes = await self._store.get_episodes_by_keys(
                tenant, query.user_id, missing, query.include_embedding
            )
            read.update((e.vector_key, e) for e in episodes)
        head = [s for s in head if s.key in read]  # one deleted meanwhile is not sent
        if len(head) < 2:
            return None
        texts = [rerank_text(read[s.key]) for s in head]
        scores = await self._reranker.scores(query.query_text, texts)
        if scores is None:
            return None
        rescored = rerank_similarities(head, scores, weights)
        sent = {s.key for s in head}
        rescored.extend(s for s in scored if s.key not in sent)
        rescored.sort(key=_rank_order)
        return rescored


class Reranker(Protocol):
    """A cross-encoder scoring texts against a query (adapters/rerank_endpoint.py)."""

    async def scores(self, query: str, texts: Sequence[str]) -> list[float] | None:
        """One score per text, in order (higher: more relevant), or None
        when unavailable: reranking is then skipped, never an error."""


def rerank_text(episode: Episode) -> str:
    """What the cross-encoder reads of an episode: its user message and
    response (the texts the lexical index holds, without the derived summary)."""
    parts = (episode.user_message, episode.assistant_response)
    return "\n".join(part for part in parts if part.strip())


def rerank_similarities(
    head: list[_Scored], scores: Sequence[float], weights: Weights
) -> list[_Scored]:
    """The reranked candidates `head`, rescored: the similarities they held
    (from the lowest, lo, to the highest, hi) are dealt out again by the
    cross-encoder's scores, linearly: similarity = lo + (hi - lo) * (score -
    min score) / (max score - min score), so the one it scores best gets hi
    and its worst gets lo (equal scores change nothing). Recency and
    importance are kept and the combined score recomputed with the same
    weights; candidates beyond the depth keep their scores and the whole
    list is ranked again. The reranker thus reorders by relevance within
    the similarity range those candidates already had, and recency and
    importance weigh as much as without it."""
    low, high = min(s.similarity for s in head), max(s.similarity for s in head)
    lowest, spread = min(scores), max(scores) - min(scores)
    if spread <= 0:
        return list(head)
    rescored = []
    for candidate, score in zip(head, scores, strict=True):
        similarity = low + (high - low) * (score - lowest) / spread
        combined = (
            weights.similarity * similarity
            + weights.recency * candidate.recency
            + weights.importance * candidate.importance
        ) / weights.total
        rescored.append(candidate._replace(similarity=similarity, combined=combined))
    return rescored


_FIRST_SEARCH = 64  # candidates fetched by the first vector search, at least


_GROWTH = 4  # how much a vector search widens when the answer is not proven yet


# HYBRID similarity: share of the vector part, the rest is lexical. Chosen on
# the LoCoMo development conversations (bench/locomo.py).
VECTOR_SHARE = 0.4


# Neighbour propagation (see _with_neighbours), as shares of a candidate's
# similarity: in a conversation the answer follows the question that names
# its topic, so the episode just after a candidate whose question holds a
# query term gains NEIGHBOUR_BEFORE_ASKING, the one after a candidate that
# asks about something else NEIGHBOUR_BEFORE_ASKING_ELSE, the one after any
# other candidate NEIGHBOUR_BEFORE, and the one just before a candidate
# NEIGHBOUR_AFTER. Chosen on the LoCoMo development conversations
# (bench/locomo_offline.py): one share for every episode after a candidate
# (0.35, as before) gave evidence recall@10 0.686 there, 0.5 after any
# question and 0.1 otherwise 0.712 (with the other changes 0.746), and
# telling the questions on the query's topic from the others (0.8 and 0.3)
# 0.768 -> 0.777 with the named speaker's gain (leave-one-conversation-out:
# 0.773, 4 of 5 conversations gaining).
NEIGHBOUR_BEFORE_ASKING = 0.8


NEIGHBOUR_BEFORE_ASKING_ELSE = 0.3


NEIGHBOUR_BEFORE = 0.1


NEIGHBOUR_AFTER = 0.2


# Added to the similarity (before the best is scaled to 1) of a candidate
# that occurred in the calendar day or month the query names
# (core/memory/periods.py): "What did Maria donate in December 2022?" asks
# about December 2022. LoCoMo development: 0.2 to 0.5 all help (+0.02 to
# +0.025 recall@10); a boost, not a filter, because an event can be told
# later than the TOLD_AFTER slack.
NAMED_PERIOD_BOOST = 0.4


# Added to the similarity (before the best is scaled to 1) of a candidate
# spoken by a speaker the query names (see _favour_named_speakers). LoCoMo
# development (bench/locomo_offline.py, leave-one-conversation-out): 0.3
# is chosen on every 4 of the 5 conversations and gains on each 5th
# (recall@10 0.749 -> 0.768); 0.2 to 0.7 all gain. Among the best
# _SPEAKER_DEPTH candidates only: deeper gave the same figures.
NAMED_SPEAKER_BOOST = 0.3


_SPEAKER_DEPTH = 30


_HYBRID_MIN_DEPTH = 100


# Lexical matches re-ranked by BM25, at least: the store's own ranking picks
# them, so a deeper list mostly adds cost (at 50k episodes 5,000 matches took
# ~190 ms to fetch and score, 200 took ~40 ms, with the same LoCoMo recall).
_LEXICAL_MIN_DEPTH = 200


_NEIGHBOUR_SOURCES = 50  # best fused candidates whose neighbours are looked up


class _Scored(NamedTuple):
    """A ranked candidate: its Score's parts, kept as plain floats (a recall
    ranks hundreds of candidates and returns top_k; `score` builds the
    Score of those only)."""

    key: int
    combined: float
    occur_time: float
    similarity: float
    recency: float
    importance: float

    @property
    def score(self) -> Score:
        return Score(self.similarity, self.recency, self.importance, self.combined)


def _rank_order(scored: _Scored) -> tuple[float, float, int]:
    """Best combined score first, then the newest, then the lowest key."""
    return (-scored.combined, -scored.occur_time, scored.key)


# (key, similarity, importance, occur_time) of a candidate to rank.
_Parts = tuple[int, float, float, float]


class _RankedColumns:
    """A vector search's candidates ranked as `_ranked` ranks them, float for
    float and in the same order, with array arithmetic: a recall scores
    dozens of candidates and returns top_k, so `best` builds the _Scored of
    those only. The arithmetic is `_combined_scores`' in the same order
    (elementwise IEEE operations give the same doubles); recency is computed
    with Python's power, as there, and only for the returned candidates when
    its weight is zero (the term is then that zero whatever the recency, so
    the combined score is unchanged). A test pins it against the reference."""

    def __init__(
        self, found: SearchColumns, now: float, weights: Weights, minimum: float, rate: float
    ) -> None:
        keys = np.asarray(found.keys, dtype=np.int64)
        raw, importance, occur_time = found.similarity, found.importance, found.occur_time
        if minimum:  # the filter's min_importance, on the decayed importance
            kept = np.fromiter(
                (
                    decayed_importance(i, o, now, rate) >= minimum
                    for i, o in zip(importance.tolist(), occur_time.tolist(), strict=True)
                ),
                np.bool_,
                len(keys),
            )
            keys, raw, importance, occur_time = (
                keys[kept],
                raw[kept],
                importance[kept],
                occur_time[kept],
            )
        similarity = np.where(raw < 0.0, 0.0, raw)  # max(raw, 0.0), -0.0 kept
        similarity = np.where(similarity > 1.0, 1.0, similarity)
        elapsed = now - occur_time
        self._age = np.where(elapsed > 0.0, elapsed, 0.0)
        self._half_life = weights.half_life_seconds
        self._recency: npt.NDArray[np.float64] | None = None
        recency_part: float | npt.NDArray[np.float64] = weights.recency
        if weights.recency:
            self._recency = np.fromiter(
                (0.5 ** (age / self._half_life) for age in self._age.tolist()),
                np.float64,
                len(keys),
            )
            recency_part = weights.recency * self._recency
        self._combined = (
            weights.similarity * similarity + recency_part + weights.importance * importance
        ) / weights.total
        # Best combined first, then the newest, then the lowest key (_rank_order).
        self._order = np.lexsort((keys, -occur_time, -self._combined))
        self._keys, self._similarity, self._importance = keys, similarity, importance
        self._occur_time = occur_time

    def __len__(self) -> int:
        return len(self._keys)

    def combined_at(self, rank: int) -> float:
        return float(self._combined[self._order[rank]])

    def qualified(self, min_score: float) -> int:
        """How many reach `min_score` (the best ones: a prefix of the order)."""
        return int(np.count_nonzero(self._combined >= min_score))

    def best(self, count: int) -> list[_Scored]:
        """The first `count` in rank order."""
        scored = []
        for row in self._order[:count].tolist():
            if self._recency is None:
                recency = 0.5 ** (float(self._age[row]) / self._half_life)
            else:
                recency = float(self._recency[row])
            scored.append(
                _Scored(
                    int(self._keys[row]),
                    float(self._combined[row]),
                    float(self._occur_time[row]),
                    float(self._similarity[row]),
                    recency,
                    float(self._importance[row]),
                )
            )
        return scored


def _combined_scores(parts: Iterable[_Parts], now: float, weights: Weights) -> list[_Scored]:
    """`combine` for many candidates, in one loop with the weights read once
    (the same arithmetic in the same order, so the same floats: a test pins
    it). The conditional expressions pick what combine's min and max pick
    (the first argument unless the second is strictly better), NaN and -0.0
    included."""
    by_similarity, by_recency = weights.similarity, weights.recency
    by_importance, total = weights.importance, weights.total
    half_life = weights.half_life_seconds
    scored = []
    for key, raw, importance, occur_time in parts:
        similarity = 0.0 if raw < 0.0 else raw  # max(raw, 0.0)
        similarity = 1.0 if similarity > 1.0 else similarity  # min(similarity, 1.0)
        elapsed = now - occur_time
        age = elapsed if elapsed > 0.0 else 0.0  # max(0.0, now - occur_time)
        recency = 0.5 ** (age / half_life)
        combined = (
            by_similarity * similarity + by_recency * recency + by_importance * importance
        ) / total
        scored.append(_Scored(key, combined, occur_time, similarity, recency, importance))
    return scored


def _fuse(
    vector_scores: dict[int, Candidate],
    lexical_scores: dict[int, tuple[float, Candidate]],
    vector_share: float,
) -> dict[int, tuple[float, Candidate]]:
    """vector_share * cosine / best cosine + (1 - vector_share) * BM25 /
    best BM25, each part 0 for an episode its list lacks."""
    best_vector = max((c.similarity for c in vector_scores.values()), default=0.0)
    best_lexical = max((score for score, _ in lexical_scores.values()), default=0.0)
    fused: dict[int, tuple[float, Candidate]] = {}
    for key, (score, candidate) in lexical_scores.items():
        fused[key] = ((1 - vector_share) * score / best_lexical, candidate)
    for key, candidate in vector_scores.items():
        part = vector_share * candidate.similarity / best_vector
        fused[key] = (fused.get(key, (0.0, candidate))[0] + part, candidate)
    return fused


async def _both(first: Awaitable[_A], second: Awaitable[_B]) -> tuple[_A, _B]:
    """Awaits both at once; if one fails the other is cancelled."""
    started = asyncio.ensure_future(first)
    try:
        later = await second
        return await started, later
    finally:
        if started.done() and not started.cancelled():
            started.exception()  # read: both may have failed, `second`'s error is raised
        started.cancel()  # a no-op once it is done


async def _after_yield(work: Awaitable[_A]) -> _A:
    """`work`, once the tasks already started have run to their first wait:
    a store read started just before is then running in its thread while
    `work` (an in-process search) runs here."""
    await asyncio.sleep(0)
    return await work


# A question mark that ends a question: not one inside a URL's query string
# or other code ("/search?q=cats", "a?b"). NFKC first folds the full-width
# one of Chinese and Japanese, which needs no space after it.
_QUESTION = re.compile(r"\?(?![A-Za-z0-9_=&/%#])")


# What ends the sentence a question mark ends: the question is the text
# from the last of these before it ("Wow, great! What got you into running?"
# asks "What got you into running").
_SENTENCE_END = re.compile(r"[.!?\u3002]")  # \u3002: the ideographic full stop


def asks_something(user_message: str, assistant_response: str) -> bool:
    """True if the episode asks something its next episode may answer: the
    user's message holds a question, or, in an episode without one (a turn
    recorded as the response alone), the response does. When an episode has
    both, the response is not read: an assistant reply often ends with a
    stock offer ("Anything else I can help with?") that would lift every
    next turn, and the user's question is the one that names a topic."""
    text = user_message if user_message.strip() else assistant_response
    return _QUESTION.search(unicodedata.normalize("NFKC", text)) is not None


# An episode's questions are read from its first _QUESTION_SCAN_CHARS
# characters, at most _MAX_QUESTIONS of them: a turn asks a few, and a text
# of thousands of question marks must not hold up the event loop.
_QUESTION_SCAN_CHARS = 4096


_MAX_QUESTIONS = 8


def questions_asked(user_message: str, assistant_response: str) -> list[str]:
    """The questions of an episode that asks something (see asks_something;
    empty if it asks nothing): each question mark's sentence, NFKC-folded,
    without the turn's speaker tag (a query naming the speaker does not make
    every question they ask one on its topic)."""
    text = user_message if user_message.strip() else assistant_response
    text = lexical.without_speaker_tag(unicodedata.normalize("NFKC", text[:_QUESTION_SCAN_CHARS]))
    questions = []
    start = 0
    for mark in itertools.islice(_QUESTION.finditer(text), _MAX_QUESTIONS):
        ends = [end.end() for end in _SENTENCE_END.finditer(text, start, mark.start())]
        questions.append(text[ends[-1] if ends else start : mark.end()].strip())
        start = mark.end()
    return questions


def asks_about(questions: Sequence[str], wanted: set[str]) -> bool:
    """True if one of `questions` holds one of the `wanted` query terms: the
    turn after it likely answers what the query asks about ("Melanie: What
    got you into running?" for "Why did Caroline start running?"), where a
    question on another topic ("Thanks! How are you?") leads to an answer on
    that other topic."""
    return any(not wanted.isdisjoint(lexical.terms(question)) for question in questions)


def _speaker(episode: Episode) -> str | None:
    """The speaker tag of an episode's text (lexical.speaker_tag): its user
    message's, or in an episode without one (a turn recorded as the response
    alone) its response's."""
    text = episode.user_message if episode.user_message.strip() else episode.assistant_response
    return lexical.speaker_tag(text)


def _neighbour_share(link: Neighbour, asks_about_query: bool | None) -> float:
    """The share of a candidate's similarity its neighbour gains: `link.after`
    means the neighbour comes after the candidate; `asks_about_query` is
    None when the candidate asks nothing, else whether one of its questions
    holds a query term (see asks_about)."""
    if not link.after:
        return NEIGHBOUR_AFTER
    if asks_about_query is None:
        return NEIGHBOUR_BEFORE
    return NEIGHBOUR_BEFORE_ASKING if asks_about_query else NEIGHBOUR_BEFORE_ASKING_ELSE


def combine(
    similarity: float, importance: float, occur_time: float, now: float, weights: Weights
) -> Score:
    """The documented recall formula (see the module docstring)."""
    similarity = min(max(similarity, 0.0), 1.0)
    age = max(0.0, now - occur_time)
    recency = 0.5 ** (age / weights.half_life_seconds)
    combined = (
        weights.similarity * similarity
        + weights.recency * recency
        + weights.importance * importance
    ) / weights.total
    return Score(similarity, recency, importance, combined)


def _pick(override: float | None, default: float) -> float:
    return default if override is None else override


def check_filter(episode_filter: EpisodeFilter) -> None:
    start, end = episode_filter.start_time, episode_filter.end_time
    if start is not None and end is not None and start > end:
        raise InvalidArgumentError("filter.start_time", "is after filter.end_time")
    if episode_filter.min_importance < 0 or math.isnan(episode_filter.min_importance):
        raise InvalidArgumentError("filter.min_importance", "must not be negative")


Clock = Callable[[], float]


_A = TypeVar("_A")
_B = TypeVar("_B")


NewCandidates = Callable[[list[Neighbour]], Awaitable[dict[int, tuple[float, Candidate]]]]
