"""Storage contracts of long-term memory (episodes, facts, predicates).

The embedded SQLite store implements them now (storage/embedded/memory.py);
the PostgreSQL store follows the same rules, and tests/contract/
test_memory_store.py runs against every backend. The general rules of
storage/interfaces.py apply: tenant isolation, durability on return,
`StorageUnavailableError` when the store cannot be reached, never a partial
change. The rules below are MUST rules on top of those.

Vector keys: each stored episode gets a positive 64-bit integer
`vector_key`, unique in the whole store and never reused, under which its
embedding sits in the in-process vector indexes (FAISS wants integer ids).
A PostgreSQL `bigserial` or SQLite `AUTOINCREMENT` column satisfies this.

Audit: every mutating method takes `audit`, a template naming who made the
change, through which RPC, and when. When it is not None the store MUST write
one audit record per entity it changes (entity_type "episode", "fact" or
"predicate", the entity's id, revision 0 because memory records carry no
revision, and a summary of the change) in the same transaction as the change.

Entity keys: subjects, objects and predicates are compared in the form
`core.memory_models.entity_key` gives (whitespace collapsed, case folded);
the domain passes keys in that form, and a backend stores them next to the
original spelling.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.memory.lexical import LexicalMatches, Neighbour
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    Episode,
    EpisodeCursor,
    EpisodeFilter,
    Fact,
    FactBatch,
    FactCursor,
    FactQuery,
    FactResult,
    Neighbourhood,
    NeighbourhoodQuery,
    Predicate,
    VectorBatch,
    VectorManifest,
)
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject


class EpisodeStore(abc.ABC):
    """Durable store of episodes: the source of truth for vector indexes."""

    @abc.abstractmethod
    async def insert_episode(
        self, tenant: str, episode: Episode, audit: AuditRecord | None = None
    ) -> tuple[Episode, bool]:
        """Stores `episode` unless the user already has one with the same
        `content_hash`; returns (stored or existing episode, inserted).

        The duplicate check and the insert MUST be one atomic step, so two
        concurrent identical episodes store one. The returned episode carries
        its assigned `vector_key`. If `episode` has an embedding and the user
        already has an episode with an embedding of another dimension, MUST
        raise `DimensionMismatchError` (field "embedding") and store nothing.
        """

    @abc.abstractmethod
    async def find_by_hash(self, tenant: str, user_id: str, digest: str) -> Episode | None:
        """The user's episode with this `content_hash`, or None."""

    @abc.abstractmethod
    async def find_by_hashes(
        self, tenant: str, user_id: str, digests: Sequence[str]
    ) -> dict[str, Episode]:
        """The user's episodes with any of these `content_hash`es, by hash
        (a batch of `find_by_hash` in one read)."""

    @abc.abstractmethod
    async def insert_episodes(
        self,
        tenant: str,
        episodes: Sequence[Episode],
        audit: AuditRecord | None = None,
        recorded: bool = False,
    ) -> list[Episode]:
        """Bulk import: inserts every episode that is not an exact duplicate
        (same rule as `insert_episode`) in one transaction, and returns the
        inserted ones with their keys. Dimension rule as above.

        `recorded` says the domain publishes the vector changes itself (the
        RecordEpisodes batch): audited as "recorded" and, where the store logs
        changes, logged as this replica's own, like `insert_episode`; an
        import (False) is audited as "imported" and left to the change feed."""

    @abc.abstractmethod
    async def get_episode(
        self, tenant: str, episode_id: str, include_embedding: bool
    ) -> Episode | None:
        """One episode, or None. `embedding` is set only if asked for."""

    @abc.abstractmethod
    async def get_episodes_by_keys(
        self, tenant: str, user_id: str, keys: Sequence[int], include_embedding: bool
    ) -> list[Episode]:
        """The user's episodes with these vector keys, in no particular
        order; unknown keys (deleted, other user, other tenant) are skipped."""

    @abc.abstractmethod
    async def list_episodes(
        self,
        tenant: str,
        user_id: str,
        episode_filter: EpisodeFilter,
        after: EpisodeCursor | None,
        limit: int,
        include_embedding: bool,
    ) -> list[Episode]:
        """Up to `limit` episodes, `occur_time` descending then `episode_id`
        descending, strictly after `after` in that order.

        Empty `user_id` means every user of the tenant. Filters: session
        equality, start_time <= occur_time < end_time, every metadata pair
        present with that exact value. `min_importance` is the domain's (it
        depends on the clock and the decay rate) and MUST be ignored here.
        """

    @abc.abstractmethod
    async def matching_keys(
        self, tenant: str, user_id: str, episode_filter: EpisodeFilter, limit: int
    ) -> list[int]:
        """Vector keys of the user's embedded episodes that match the filter
        (same rules as `list_episodes`), at most `limit`, newest first."""

    @abc.abstractmethod
    async def lexical_matches(
        self,
        tenant: str,
        user_id: str,
        query_terms: Sequence[str],
        episode_filter: EpisodeFilter,
        limit: int,
        match_budget: int = 0,
    ) -> LexicalMatches:
        """The user's episodes whose stored terms (`core.lexical.document_terms`
        of user message, assistant response and summary, computed at insert)
        contain at least one of the `query_terms` that `core.lexical.match_terms`
        keeps for `match_budget` (given the frequencies below), found
        through a full-text index (not a scan of the user's episodes), filtered as `list_episodes`
        filters. At most `limit`; when more match, the backend's own relevance
        order picks which. Also returns the user's episode count and, for each
        query term, how many of the user's episodes contain it (filters
        ignored). Episodes stored before the index existed MUST be indexed by
        the migration that added it."""

    @abc.abstractmethod
    async def neighbours(self, tenant: str, user_id: str, keys: Sequence[int]) -> list[Neighbour]:
        """For each of the user's episodes in `keys`, the episode of the same
        user and `session_id` with the next smaller vector key (recorded
        just before it) and the one with the next greater key, where they
        exist; unknown keys are skipped. Through an index, not a scan. An
        episode with an empty session_id has no neighbours."""

    @abc.abstractmethod
    async def delete_episodes(
        self, tenant: str, episode_ids: Sequence[str], audit: AuditRecord | None = None
    ) -> list[Episode]:
        """Deletes these episodes; returns those that existed (without
        embeddings). Facts derived from them stay."""

    @abc.abstractmethod
    async def load_vectors(self, tenant: str, user_id: str) -> VectorBatch | None:
        """Every embedding of the user, with key, importance and occur_time,
        or None if the user has none. Used to (re)build the user's index."""

    @abc.abstractmethod
    async def vector_manifest(self, tenant: str, user_id: str) -> VectorManifest | None:
        """Key, importance and occur_time of every embedded episode of the
        user (no vectors), the dimension and the model as `load_vectors`
        gives them, or None if the user has none. Read from one snapshot;
        used to bring a saved index up to date."""

    @abc.abstractmethod
    async def index_owners(self) -> list[tuple[str, str]]:
        """(tenant, user_id) of every user with at least one embedding, in
        any tenant: the indexes to build at startup."""

    @abc.abstractmethod
    async def tenants(self) -> list[str]:
        """Every tenant that has episodes, for background jobs."""

    @abc.abstractmethod
    async def users(self, tenant: str) -> list[str]:
        """Every user of the tenant that has episodes, ascending."""

    @abc.abstractmethod
    async def unconsolidated_episodes(self, tenant: str, user_id: str, limit: int) -> list[Episode]:
        """Up to `limit` of the user's embedded episodes never consolidated
        (`consolidate_time` unset), oldest `occur_time` first, with their
        embeddings."""

    @abc.abstractmethod
    async def scan_episodes(
        self, tenant: str, user_id: str, after_key: int, limit: int
    ) -> list[Episode]:
        """Up to `limit` episodes with vector_key > `after_key`, ascending by
        key, without embeddings; empty `user_id` means every user. A stable
        order for batch jobs that delete as they go."""


class FactStore(abc.ABC):
    """Durable knowledge graph of one tenant per call.

    Scopes: a fact's `user_id` is its scope; "" is tenant-wide. A read "for
    user U" sees scope U and scope "" together (U may be "": tenant-wide
    only).
    """

    @abc.abstractmethod
    async def apply_facts(
        self, tenant: str, batch: FactBatch, audit: AuditRecord | None = None
    ) -> list[FactResult]:
        """Applies the drafts in order, all in one transaction, with the
        rules of `core.semantic.resolve_fact` (dedup, contradiction of
        single-valued predicates), each draft seeing the effects of earlier
        ones. Returns one result per draft, in order."""

    @abc.abstractmethod
    async def consolidate(
        self, tenant: str, plan: ConsolidationPlan, audit: AuditRecord | None = None
    ) -> list[FactResult]:
        """In one transaction: applies `plan.facts` as `apply_facts` does,
        then, for each of `plan.episode_ids` that still exists and has no
        `consolidate_time`, multiplies its importance by
        `plan.demotion_factor`, sets `consolidate_time` to `plan.facts.now`
        and appends the ids of the resulting facts to `derived_fact_ids`.
        If any of those episodes was consolidated meanwhile (a concurrent
        run), MUST change nothing and return an empty list."""

    @abc.abstractmethod
    async def get_fact(self, tenant: str, fact_id: str) -> Fact | None:
        """One fact, valid or not, or None."""

    @abc.abstractmethod
    async def list_facts(
        self,
        tenant: str,
        query: FactQuery,
        now: float,
        after: FactCursor | None,
        limit: int,
    ) -> list[Fact]:
        """Up to `limit` facts visible to `query.user_id`, `create_time`
        descending then `fact_id` descending, strictly after `after`.
        Subject/object filters compare entity keys; the predicate filter
        compares predicate keys. Unless `include_invalidated`, only facts
        valid at `now` (see `Fact.valid_at`)."""

    @abc.abstractmethod
    async def neighbourhood(self, tenant: str, query: NeighbourhoodQuery) -> Neighbourhood:
        """Facts reachable from `query.entity` (an entity key) in at most
        `query.depth` hops, following facts in either direction, computed
        with a recursive SQL query (WITH RECURSIVE) in the store.

        Only facts visible to `query.user_id`, valid at `query.as_of` unless
        `include_invalidated`, and with a predicate key in `predicates` if
        that is not empty, are followed. A fact's depth is one more than the
        smaller depth of its two entities. Edges are ordered by depth, then
        `create_time` descending, then `fact_id`; at most `max_facts` are
        returned and `truncated` says whether more existed. Nodes are the
        queried entity first (depth 0, spelled as given), then every entity
        of a returned edge, by depth, spelled as in the first returned edge
        that names it.
        """

    @abc.abstractmethod
    async def entities_among(self, tenant: str, user_id: str, keys: Sequence[str]) -> list[str]:
        """The subset of `keys` (entity keys) that are the subject or object
        of a fact visible to `user_id`, in any validity state."""

    @abc.abstractmethod
    async def invalidate_fact(
        self,
        tenant: str,
        fact_id: str,
        reason: str,
        valid_to: float | None,
        now: float,
        audit: AuditRecord | None = None,
    ) -> tuple[Fact, bool] | None:
        """Invalidates one fact: `invalidate_time` = now, `invalidation_reason`
        = reason, `valid_to` = the given value, or now if None, but never
        later than an existing `valid_to`. Returns (fact after, already
        invalidated) — an already invalidated fact is returned unchanged —
        or None if there is no such fact."""

    @abc.abstractmethod
    async def declare_predicate(
        self, tenant: str, predicate: Predicate, audit: AuditRecord | None = None
    ) -> Predicate:
        """Creates or replaces the predicate with this name (a predicate key).
        A replacement keeps the original `create_time`. Returns it as stored."""

    @abc.abstractmethod
    async def list_predicates(self, tenant: str, after_name: str, limit: int) -> list[Predicate]:
        """Up to `limit` predicates with name > `after_name`, by name."""


class MemoryStore(EpisodeStore, FactStore):
    """One backend's episodes and facts together (consolidation writes both
    in one transaction, so they live in the same database)."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Applies pending memory schema migrations. Idempotent."""

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """Deletes the user's episodes (with their lexical terms and
        vectors) and facts, current and invalidated, in bounded batches; on a
        backend with a vector change log, earlier rows of the user are
        blanked and one erase row (the keys, no user id) tells the other
        replicas to drop the user's index. Returns the rows deleted per kind;
        `dry_run` deletes nothing. Idempotent."""
