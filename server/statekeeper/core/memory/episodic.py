"""Episodic memory: record interactions, deduplicate them, recall them.

Recall scores every candidate with three parts in [0, 1]:

* similarity: cosine similarity of unit vectors, clamped at 0 (VECTOR), or
  BM25 over the store's full-text index normalised by the best candidate's
  score (LEXICAL, see core/memory/lexical.py), or for a text query with an embedder
  (HYBRID) the weighted mean VECTOR_SHARE * cosine / best cosine +
  (1 - VECTOR_SHARE) * BM25 / best BM25 over the union of the best
  `_hybrid_depth` of each list (a lexical match outside the vector list
  gets its own cosine). Text recall then lets neighbours in a session (the
  episodes recorded just before and after a candidate) share in each
  other's similarity, and adds a gain to episodes from a period the query
  names; the rules and their weights are in core/memory/recall.py (the
  neighbour shares, `asks_something`, the named-period constants) and
  core/memory/periods.py. The result is divided by the best candidate's,
  so the best has similarity 1;
* recency: 0.5 ** (age / half_life), age from `occur_time` to now;
* importance: the episode's stored importance (age is already in recency,
  so the decayed value is not used here);

combined = (ws * similarity + wr * recency + wi * importance) / (ws + wr + wi).

VECTOR recall asks the index for the best n by similarity and stops when the
k-th best combined score is at least the best any unseen episode could reach
(its similarity is at most the n-th one's; its recency and importance at
most the user's maxima); otherwise n grows. On an exact index the top k by
combined score are therefore exact, not a re-ranking of a fixed short list.
LEXICAL and HYBRID re-rank fixed-depth candidate lists.

Vectors of different models are never compared: when the user's index holds
vectors of another model (or the client's own), text recall is LEXICAL and
new episodes are stored without a server embedding (still found lexically).
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import threadpoolctl  # type: ignore[import-untyped]

from statekeeper.core import paging
from statekeeper.core.audit.service import Actor
from statekeeper.core.errors import (
    InvalidArgumentError,
    LimitExceededError,
    NotFoundError,
    StorageUnavailableError,
)
from statekeeper.core.memory.episodes import (
    EpisodeDraft,
    ItemError,
    RecordOutcome,
)
from statekeeper.core.memory.models import (
    DimensionMismatchError,
    DuplicateKind,
    Episode,
    EpisodeCursor,
    EpisodeFilter,
    ValueSource,
    Vector,
    audit_template,
    content_hash,
    unit_vector,
)
from statekeeper.core.memory.recall import (
    EpisodicRecall,
    check_filter,
)
from statekeeper.core.memory.summaries import (
    SUMMARY_MAX_TOKENS,
    offline_summary,
    one_line,
)
from statekeeper.core.memory.vector_index import (
    Candidate,
    IndexEntry,
    IndexStats,
    VectorChange,
)
from statekeeper.core.sessions.models import Message, Role
from statekeeper.core.validation import check_id, check_metadata, check_text, page_size

log = logging.getLogger(__name__)


# What a batch did with one item: recorded or found a duplicate, or rejected it.
BatchOutcome = RecordOutcome | ItemError
# An item repeating an earlier one of its batch: (that item, kind, similarity).
_Repeat = tuple[int, DuplicateKind, float]


@dataclass
class _Pending:
    """One item of a batch that passed validation, on its way to the store."""

    index: int
    draft: EpisodeDraft
    digest: str
    vector: Vector | None = None
    source: ValueSource = ValueSource.NONE
    model: str = ""
    episode: Episode | None = None


class EpisodicMemory(EpisodicRecall):
    """Episodes: recording (one or a batch, with duplicate detection), reading and
    deleting them; recall is the read side it inherits (core/memory/recall.py)."""

    # ----- record ----------------------------------------------------------

    async def record(
        self, tenant: str, draft: EpisodeDraft, actor: Actor | None = None
    ) -> RecordOutcome:
        self._check_draft(draft)
        await self._restore_archived(tenant, [draft.user_id], writing=True)
        digest = content_hash(draft.user_message, draft.assistant_response)
        existing = await self._store.find_by_hash(tenant, draft.user_id, digest)
        if existing is not None:
            return RecordOutcome(existing, DuplicateKind.EXACT, 1.0)
        vector, vector_source, model = await self._embedding_for(tenant, draft)
        if vector is not None:
            near = await self._near_duplicate(tenant, draft, vector)
            if near is not None:
                return near
        summary, summary_source = await self._summary_for(draft)
        now = self._clock()
        pending = _Pending(0, draft, digest, vector, vector_source, model)
        episode = self._new_episode(pending, "e-" + uuid.uuid4().hex, summary, summary_source, now)
        stored, inserted = await self._store.insert_episode(
            tenant, episode, audit_template(actor, now)
        )
        if not inserted:  # an identical episode won a race with this one
            return RecordOutcome(stored, DuplicateKind.EXACT, 1.0)
        if vector is not None:
            await self._indexes.publish(_added(tenant, stored, vector))
        if self.archived is not None:
            self.archived.recorded(tenant, draft.user_id)
        return RecordOutcome(stored.evolve(embedding=None))

    async def record_many(
        self,
        tenant: str,
        drafts: Sequence[EpisodeDraft],
        actor: Actor | None = None,
        field_name: str = "episodes",
    ) -> list[BatchOutcome]:
        """Records a batch: each item as `record` would, with one outcome per
        item in order. A bad item fails only itself; embeddings missing from
        items are computed in one embedder call and every new episode is
        stored in one store write. A created episode's outcome holds it as
        stored, with its embedding (`record` leaves it out)."""
        if not drafts:
            raise InvalidArgumentError(field_name, "at least one episode is required")
        limit = self._limits.max_episodes_per_request
        if len(drafts) > limit:
            raise LimitExceededError(field_name, limit, f"has {len(drafts)} episodes")
        outcomes: dict[int, BatchOutcome] = {}
        pending: list[_Pending] = []
        for index, draft in enumerate(drafts):
            try:
                self._check_fields(draft)
            except (InvalidArgumentError, LimitExceededError) as exc:
                outcomes[index] = _item_error(field_name, index, exc)
                continue
            digest = content_hash(draft.user_message, draft.assistant_response)
            pending.append(_Pending(index, draft, digest))
        self._check_client_vectors(pending, outcomes, field_name)
        pending = [p for p in pending if p.index not in outcomes]
        await self._restore_archived(tenant, [p.draft.user_id for p in pending], writing=True)
        await self._batch_vectors(tenant, pending, outcomes, field_name)
        pending = [p for p in pending if p.index not in outcomes]
        same_as = await self._batch_duplicates(tenant, pending, outcomes)
        fresh = [p for p in pending if p.index not in outcomes and p.index not in same_as]
        await self._store_batch(tenant, fresh, outcomes, actor)
        for index, (first, kind, similarity) in same_as.items():
            outcomes[index] = _as_duplicate(outcomes[first], kind, similarity)
        return [outcomes[index] for index in range(len(drafts))]

    def _check_client_vectors(
        self, pending: Sequence[_Pending], outcomes: dict[int, BatchOutcome], field_name: str
    ) -> None:
        """`_check_vector` for the client embedding of each item, as unit
        vectors into the items (errors into `outcomes`): the checks run on
        one matrix per length instead of per vector; an item failing them
        gets the error `_check_vector` raises for it."""
        by_length: dict[int, list[_Pending]] = {}
        for item in pending:
            if len(item.draft.embedding):
                by_length.setdefault(len(item.draft.embedding), []).append(item)
        limit = self._config.limits.max_embedding_dimension
        for length, items in by_length.items():
            matrix = np.zeros((len(items), 0), dtype=np.float32)  # over the limit: none good
            if length <= limit:
                matrix = np.stack([np.asarray(i.draft.embedding, np.float32) for i in items])
            good = np.logical_and(np.isfinite(matrix).all(axis=1), matrix.any(axis=1))
            for row, item in enumerate(items):
                try:
                    if bool(good[row]):  # per row, so the vector is bit for bit `record`'s
                        item.vector = unit_vector(matrix[row])
                    else:
                        item.vector = self._check_vector("embedding", item.draft.embedding)
                except (InvalidArgumentError, LimitExceededError) as exc:
                    outcomes[item.index] = _item_error(field_name, item.index, exc)
                    continue
                item.source = ValueSource.CLIENT

    async def _batch_vectors(
        self,
        tenant: str,
        pending: Sequence[_Pending],
        outcomes: dict[int, BatchOutcome],
        field_name: str,
    ) -> None:
        """Gives each item its vector (the client's, or the embedder's in one
        call) and rejects the items whose dimension is not their user's."""
        to_embed: list[_Pending] = []
        model_ok: dict[str, bool] = {}
        for item in pending:
            if item.vector is not None:  # the client's, checked with the draft
                continue
            user_id = item.draft.user_id
            if self._embedder is not None and user_id not in model_ok:
                model_ok[user_id] = await self._model_matches(tenant, user_id)
            if model_ok.get(user_id, False):
                to_embed.append(item)
        if to_embed:
            assert self._embedder is not None
            texts = [_episode_text(item.draft) for item in to_embed]
            vectors = await self._embedder.embed(texts)
            for item, vector in zip(to_embed, vectors, strict=True):
                item.vector = unit_vector(vector)
                item.source, item.model = ValueSource.MODEL, self._embedder.model
        dimensions: dict[str, int] = {}
        for item in pending:
            if item.vector is None:
                continue
            user_id = item.draft.user_id
            if user_id not in dimensions:
                stored = await self._indexes.dimension(tenant, user_id)
                dimensions[user_id] = stored or int(item.vector.shape[0])
            got = int(item.vector.shape[0])
            if got != dimensions[user_id]:
                error = DimensionMismatchError("embedding", dimensions[user_id], got)
                outcomes[item.index] = _item_error(field_name, item.index, error)

    async def _batch_duplicates(
        self, tenant: str, pending: Sequence[_Pending], outcomes: dict[int, BatchOutcome]
    ) -> dict[int, _Repeat]:
        """Finds exact and near duplicates, in request order, of stored
        episodes (into `outcomes`) and of earlier items of the batch (returned
        as item -> the earlier item it repeats, how, and how closely)."""
        same_as: dict[int, _Repeat] = {}
        first_of: dict[tuple[str, str], int] = {}
        async with asyncio.TaskGroup() as reads:  # the store and the index at once
            by_hash = reads.create_task(self._stored_by_hash(tenant, pending))
            by_vector = reads.create_task(self._stored_twins(tenant, pending))
        stored, stored_twins = by_hash.result(), by_vector.result()
        twins = _BatchTwins(pending)
        for item in pending:
            user_id = item.draft.user_id
            earlier = first_of.setdefault((user_id, item.digest), item.index)
            if earlier != item.index:
                same_as[item.index] = (earlier, DuplicateKind.EXACT, 1.0)
                continue
            existing = stored.get((user_id, item.digest))
            if existing is not None:
                outcomes[item.index] = RecordOutcome(existing, DuplicateKind.EXACT, 1.0)
                continue
            if item.vector is not None:
                near = stored_twins.get(item.index)
                if near is not None:
                    outcomes[item.index] = near
                    continue
                twin = twins.nearest_kept(item, self._threshold(item.draft))
                if twin is not None:
                    same_as[item.index] = (twin[0], DuplicateKind.NEAR, twin[1])
                    continue
            twins.keep(item)
        return same_as

    async def _stored_by_hash(
        self, tenant: str, pending: Sequence[_Pending]
    ) -> dict[tuple[str, str], Episode]:
        """The stored episodes with the content of batch items, one read per
        user of the batch."""
        digests: dict[str, list[str]] = {}
        for item in pending:
            digests.setdefault(item.draft.user_id, []).append(item.digest)
        found: dict[tuple[str, str], Episode] = {}
        for user_id, user_digests in digests.items():
            by_hash = await self._store.find_by_hashes(tenant, user_id, user_digests)
            found.update(((user_id, digest), e) for digest, e in by_hash.items())
        return found

    async def _stored_nearest(
        self, tenant: str, pending: Sequence[_Pending]
    ) -> list[tuple[_Pending, Candidate]]:
        """Each item with a vector that near-deduplication applies to, with
        its most similar stored episode (if its user has any): one index
        search per user."""
        queries: dict[str, list[_Pending]] = {}
        for item in pending:
            if item.vector is not None and self._threshold(item.draft) < 1.0:
                queries.setdefault(item.draft.user_id, []).append(item)
        # The users' searches at once: each is a matrix product off the event
        # loop, so on a multi-core box they run side by side.
        async with asyncio.TaskGroup() as searches:
            found = [
                searches.create_task(
                    self._indexes.search_many(
                        tenant,
                        user_id,
                        np.stack([item.vector for item in items if item.vector is not None]),
                        1,
                    )
                )
                for user_id, items in queries.items()
            ]
        nearest: list[tuple[_Pending, Candidate]] = []
        for items, search in zip(queries.values(), found, strict=True):
            rows = search.result()
            nearest.extend((item, row[0]) for item, row in zip(items, rows, strict=True) if row)
        return nearest

    async def _stored_twins(
        self, tenant: str, pending: Sequence[_Pending]
    ) -> dict[int, RecordOutcome]:
        """A NEAR duplicate outcome, by item, for each item whose most similar
        stored episode is at or above its threshold: those episodes are read
        in one store read per user, not one per item."""
        matches: dict[str, list[tuple[_Pending, Candidate]]] = {}
        for item, best in await self._stored_nearest(tenant, pending):
            if best.similarity >= self._threshold(item.draft):
                matches.setdefault(item.draft.user_id, []).append((item, best))
        twins: dict[int, RecordOutcome] = {}
        for user_id, pairs in matches.items():
            keys = list(dict.fromkeys(best.key for _, best in pairs))
            episodes = await self._store.get_episodes_by_keys(tenant, user_id, keys, False)
            by_key = {episode.vector_key: episode for episode in episodes}
            for item, best in pairs:
                episode = by_key.get(best.key)
                if episode is not None:  # else deleted meanwhile
                    similarity = min(best.similarity, 1.0)
                    twins[item.index] = RecordOutcome(episode, DuplicateKind.NEAR, similarity)
        return twins

    async def _store_batch(
        self,
        tenant: str,
        fresh: Sequence[_Pending],
        outcomes: dict[int, BatchOutcome],
        actor: Actor | None,
    ) -> None:
        """Stores the new episodes in one write and publishes their vectors;
        an item another writer stored meanwhile becomes an exact duplicate."""
        if not fresh:
            return
        now = self._clock()
        for item, episode_id in zip(fresh, _episode_ids(len(fresh)), strict=True):
            summary, summary_source = await self._summary_for(item.draft)
            item.episode = self._new_episode(item, episode_id, summary, summary_source, now)
        episodes = [item.episode for item in fresh if item.episode is not None]
        stored = await self._store.insert_episodes(
            tenant, episodes, audit_template(actor, now), recorded=True
        )
        by_id = {episode.episode_id: episode for episode in stored}
        changes: dict[str, list[IndexEntry]] = {}
        for item in fresh:
            assert item.episode is not None
            episode = by_id.get(item.episode.episode_id)
            if episode is None:  # an identical episode won a race with this one
                outcomes[item.index] = await self._raced(tenant, item)
                continue
            # The episode as stored, its embedding included (not copied
            # without it: 7 us an episode; the API leaves embeddings out).
            outcomes[item.index] = RecordOutcome(episode)
            if self.archived is not None:
                self.archived.recorded(tenant, episode.user_id)
            if item.vector is not None:
                entry = IndexEntry(
                    episode.vector_key, episode.importance, episode.occur_time, item.vector
                )
                changes.setdefault(episode.user_id, []).append(entry)
        models = {item.draft.user_id: item.model for item in fresh}
        for user_id, entries in changes.items():
            await self._indexes.publish(
                VectorChange(
                    tenant, user_id, upserts=tuple(entries), embedding_model=models[user_id]
                )
            )

    async def _raced(self, tenant: str, item: _Pending) -> BatchOutcome:
        existing = await self._store.find_by_hash(tenant, item.draft.user_id, item.digest)
        if existing is None:
            raise StorageUnavailableError("an episode was deleted while recorded; retry")
        return RecordOutcome(existing, DuplicateKind.EXACT, 1.0)

    def _new_episode(
        self,
        item: _Pending,
        episode_id: str,
        summary: str,
        summary_source: ValueSource,
        now: float,
    ) -> Episode:
        """The episode `item` records (one recorded alone or in a batch)."""
        draft, vector = item.draft, item.vector
        return Episode(
            episode_id=episode_id,
            user_id=draft.user_id,
            session_id=draft.session_id,
            user_message=draft.user_message,
            assistant_response=draft.assistant_response,
            summary=summary,
            summary_source=summary_source,
            embedding_source=item.source,
            embedding_model=item.model,
            importance=(
                self._config.default_importance if draft.importance is None else draft.importance
            ),
            metadata=dict(draft.metadata),
            occur_time=now if draft.occur_time is None else draft.occur_time,
            create_time=now,
            content_hash=item.digest,
            dimension=0 if vector is None else int(vector.shape[0]),
            embedding=vector,
        )

    def _threshold(self, draft: EpisodeDraft) -> float:
        if draft.near_duplicate_threshold is None:
            return self._config.near_duplicate_threshold
        return draft.near_duplicate_threshold

    def _check_draft(self, draft: EpisodeDraft) -> Vector | None:
        """Raises for the first bad field; returns the client's embedding as
        a unit vector (None without one)."""
        self._check_fields(draft)
        return self._check_vector("embedding", draft.embedding) if draft.embedding else None

    def _check_fields(self, draft: EpisodeDraft) -> None:
        """`_check_draft` without the embedding (checked last)."""
        limits = self._config.limits
        check_id("user_id", draft.user_id, self._limits)
        check_id("session_id", draft.session_id, self._limits, required=False)
        if not draft.user_message and not draft.assistant_response:
            raise InvalidArgumentError(
                "user_message", "user_message or assistant_response is required"
            )
        for name in ("user_message", "assistant_response", "summary"):
            check_text(name, getattr(draft, name), limits.max_text_bytes)
        check_metadata("metadata", draft.metadata, self._limits)
        if draft.importance is not None:
            _check_unit("importance", draft.importance)
        if draft.near_duplicate_threshold is not None:
            _check_unit("near_duplicate_threshold", draft.near_duplicate_threshold)

    async def _embedding_for(
        self, tenant: str, draft: EpisodeDraft
    ) -> tuple[Vector | None, ValueSource, str]:
        if draft.embedding:
            vector = self._check_vector("embedding", draft.embedding)
            await self._check_dimension(tenant, draft.user_id, "embedding", vector)
            return vector, ValueSource.CLIENT, ""
        if self._embedder is None or not await self._model_matches(tenant, draft.user_id):
            return None, ValueSource.NONE, ""
        text = "\n".join(p for p in (draft.user_message, draft.assistant_response) if p)
        vector = unit_vector((await self._embedder.embed([text]))[0])
        await self._check_dimension(tenant, draft.user_id, "embedding", vector)
        return vector, ValueSource.MODEL, self._embedder.model

    async def _near_duplicate(
        self, tenant: str, draft: EpisodeDraft, vector: Vector
    ) -> RecordOutcome | None:
        threshold = draft.near_duplicate_threshold
        if threshold is None:
            threshold = self._config.near_duplicate_threshold
        if threshold >= 1.0:
            return None  # 1 keeps only exact deduplication
        found = await self._indexes.search(tenant, draft.user_id, vector, 1, None)
        if not found.candidates or found.candidates[0].similarity < threshold:
            return None
        best = found.candidates[0]
        episodes = await self._store.get_episodes_by_keys(tenant, draft.user_id, [best.key], False)
        if not episodes:
            return None  # deleted meanwhile
        return RecordOutcome(episodes[0], DuplicateKind.NEAR, min(best.similarity, 1.0))

    async def _summary_for(self, draft: EpisodeDraft) -> tuple[str, ValueSource]:
        if draft.summary:
            return one_line(draft.summary), ValueSource.CLIENT
        if self._summarizer is not None:
            messages = [
                Message(0, "", role, text)
                for role, text in (
                    (Role.USER, draft.user_message),
                    (Role.ASSISTANT, draft.assistant_response),
                )
                if text
            ]
            result = await self._summarizer.summarize(messages, SUMMARY_MAX_TOKENS)
            if not result.is_fallback and result.text.strip():
                return one_line(result.text), ValueSource.MODEL
        return offline_summary(draft.user_message, draft.assistant_response), ValueSource.FALLBACK

    async def _restore_archived(
        self, tenant: str, user_ids: Sequence[str], writing: bool = False
    ) -> None:
        """Brings the users' archived episodes back hot before a write or a
        listing that must see their whole history (deduplication included)."""
        if self.archived is None:
            return
        for user_id in dict.fromkeys(user_ids):
            await self.archived.restore_user(tenant, user_id, writing)

    # ----- read and delete -------------------------------------------------

    async def get(self, tenant: str, episode_id: str, include_embedding: bool) -> Episode:
        check_id("episode_id", episode_id, self._limits)
        episode = await self._store.get_episode(tenant, episode_id, include_embedding)
        if episode is None and self.archived is not None:
            # Archived with its user's other episodes: all come back hot.
            owner = await self.archived.owner_of(tenant, episode_id)
            if owner is not None and await self.archived.restore_user(tenant, owner):
                episode = await self._store.get_episode(tenant, episode_id, include_embedding)
        if episode is None:
            raise NotFoundError(f"episode {episode_id!r} not found")
        return episode

    async def list_episodes(
        self,
        tenant: str,
        user_id: str,
        episode_filter: EpisodeFilter,
        requested_page_size: int,
        page_token: str,
        include_embedding: bool,
    ) -> tuple[list[Episode], str]:
        check_id("user_id", user_id, self._limits, required=False)
        check_filter(episode_filter)
        size = page_size("page_size", requested_page_size, self._limits)
        if user_id:
            # Every user's listing would restore every archived user: only
            # a listing of one user brings that user's episodes back.
            await self._restore_archived(tenant, [user_id])
        filters = [user_id, *episode_filter.as_key()]
        after = _episode_cursor(paging.decode(page_token, "episodes", filters))
        rows = await self._store.list_episodes(
            tenant, user_id, episode_filter, after, size + 1, include_embedding
        )
        next_token = ""
        if len(rows) > size:
            rows = rows[:size]
            last = rows[-1]
            next_token = paging.encode("episodes", filters, [last.occur_time, last.episode_id])
        # min_importance depends on the clock, so it filters after paging.
        now = self._clock()
        kept = [e for e in rows if self.decayed_importance(e, now) >= episode_filter.min_importance]
        return kept, next_token

    async def delete(self, tenant: str, episode_id: str, actor: Actor | None = None) -> str:
        check_id("episode_id", episode_id, self._limits)
        deleted = await self.delete_many(tenant, [episode_id], actor)
        if not deleted and self.archived is not None:
            # Archived: restored with its user's episodes, then deleted.
            owner = await self.archived.owner_of(tenant, episode_id)
            if owner is not None and await self.archived.restore_user(tenant, owner):
                deleted = await self.delete_many(tenant, [episode_id], actor)
        if not deleted:
            raise NotFoundError(f"episode {episode_id!r} not found")
        return episode_id

    async def delete_many(
        self, tenant: str, episode_ids: Sequence[str], actor: Actor | None = None
    ) -> list[Episode]:
        """Deletes from the store, then from every replica's index."""
        audit = audit_template(actor, self._clock())
        deleted = await self._store.delete_episodes(tenant, episode_ids, audit)
        by_user: dict[str, list[int]] = {}
        for episode in deleted:
            if episode.has_embedding:
                by_user.setdefault(episode.user_id, []).append(episode.vector_key)
        for user_id, keys in by_user.items():
            await self._indexes.publish(VectorChange(tenant, user_id, removed=tuple(keys)))
        return deleted

    async def index_stats(self, tenant: str, user_id: str) -> IndexStats:
        check_id("user_id", user_id, self._limits)
        return await self._indexes.load_stats(tenant, user_id)

    async def rebuild_index(self, tenant: str, user_id: str) -> IndexStats:
        check_id("user_id", user_id, self._limits)
        return await self._indexes.rebuild(tenant, user_id)

    # ----- recall ----------------------------------------------------------


def _added(tenant: str, episode: Episode, vector: Vector) -> VectorChange:
    entry = IndexEntry(episode.vector_key, episode.importance, episode.occur_time, vector)
    return VectorChange(
        tenant, episode.user_id, upserts=(entry,), embedding_model=episode.embedding_model
    )


def _episode_ids(count: int) -> list[str]:
    """`count` new episode ids, each "e-" and the hex of a random (version 4)
    UUID as `uuid.uuid4()` makes it, from one read of the system's random
    source instead of one per id (5 us an id)."""
    octets = np.frombuffer(os.urandom(16 * count), dtype=np.uint8).reshape(count, 16).copy()
    octets[:, 6] = (octets[:, 6] & 0x0F) | 0x40  # version 4
    octets[:, 8] = (octets[:, 8] & 0x3F) | 0x80  # RFC 4122 variant
    digits = octets.tobytes().hex()
    return ["e-" + digits[start : start + 32] for start in range(0, 32 * count, 32)]


def _item_error(
    field_name: str, index: int, error: InvalidArgumentError | LimitExceededError
) -> ItemError:
    field = f"{field_name}[{index}].{error.field}"
    return ItemError(field, error.reason, error.message.replace(error.field, field, 1))


def _episode_text(draft: EpisodeDraft) -> str:
    return "\n".join(p for p in (draft.user_message, draft.assistant_response) if p)


_BLAS = threadpoolctl.ThreadpoolController()


class _BatchTwins:
    """Near duplicates among the items of one batch: the similarities of
    every pair of a user's items are computed at once (one matrix product),
    then each item is compared with the earlier items kept for storing."""

    def __init__(self, pending: Sequence[_Pending]) -> None:
        by_user: dict[str, list[_Pending]] = {}
        for item in pending:
            if item.vector is not None:
                by_user.setdefault(item.draft.user_id, []).append(item)
        self._row: dict[int, int] = {}  # item index -> row in its user's matrix
        self._similarity: dict[str, Vector] = {}
        # Per user, -inf for rows not kept (yet): masks the similarity row.
        self._kept: dict[str, npt.NDArray[np.float32]] = {}
        self._index_of: dict[str, list[int]] = {}  # per user, row -> item index
        for user_id, items in by_user.items():
            matrix = np.stack([item.vector for item in items if item.vector is not None])
            with _BLAS.limit(limits=1, user_api="blas"):
                # One BLAS thread: on a busy 2-core box OpenBLAS's own
                # threads wait for each other many times longer than the
                # product of a batch takes on one core.
                self._similarity[user_id] = matrix @ matrix.T
            self._kept[user_id] = np.full(len(items), -np.inf, dtype=np.float32)
            self._index_of[user_id] = [item.index for item in items]
            for row, item in enumerate(items):
                self._row[item.index] = row

    def nearest_kept(self, item: _Pending, threshold: float) -> tuple[int, float] | None:
        """The kept item most similar to `item` and the similarity, if at or
        above `threshold` (1 keeps only exact deduplication), else None."""
        row = self._row.get(item.index)
        if threshold >= 1.0 or row is None:
            return None
        user_id = item.draft.user_id
        similarities = self._similarity[user_id][row] + self._kept[user_id]
        best = int(np.argmax(similarities))
        similarity = min(float(similarities[best]), 1.0)
        if similarity < threshold:  # also when nothing is kept: -inf
            return None
        return self._index_of[user_id][best], similarity

    def keep(self, item: _Pending) -> None:
        row = self._row.get(item.index)
        if row is not None:
            self._kept[item.draft.user_id][row] = 0.0


def _as_duplicate(first: BatchOutcome, kind: DuplicateKind, similarity: float) -> BatchOutcome:
    """The outcome of an item that repeats an earlier item of its batch: a
    duplicate of whatever episode that item created or was found to repeat."""
    if isinstance(first, ItemError):
        return first
    return RecordOutcome(first.episode, kind, similarity)


def _check_unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise InvalidArgumentError(name, "must be in [0, 1]")


def _episode_cursor(position: Any) -> EpisodeCursor | None:
    if position is None:
        return None
    try:
        occur_time, episode_id = position
        return EpisodeCursor(float(occur_time), str(episode_id))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("page_token", "is malformed") from exc
