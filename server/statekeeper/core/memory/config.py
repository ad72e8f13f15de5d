"""Tunables and limits of long-term memory, with their documented defaults.

`MemoryConfig` is what an operator configures (see the README section the
server wiring adds); `MemoryLimits` are the size limits checked before a
request touches storage, to be folded into core/limits.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MemoryLimits:
    max_text_bytes: int = 64 * 1024  # user_message, assistant_response, summary, query
    max_embedding_dimension: int = 4096
    default_top_k: int = 10
    max_top_k: int = 1000
    max_facts_per_request: int = 500
    max_fact_field_bytes: int = 2048  # subject, object, source
    max_predicate_bytes: int = 256  # predicate names and descriptions' key part
    max_description_bytes: int = 4096
    default_entity_facts: int = 200
    max_entity_facts: int = 2000
    max_entity_depth: int = 3
    # Vector recall with filters asks the store for the matching keys first.
    max_filter_candidates: int = 200_000
    # Lexical recall re-ranks at most this many full-text index matches
    # (it asks for max(4 * top_k, 200), capped here).
    max_lexical_candidates: int = 5000
    # The full-text index is asked to match the query terms while their
    # document frequencies add up to at most this (else the rarest that fit);
    # the others still count in BM25 for every candidate
    # (core.lexical.match_terms). 0: every term, whatever it costs.
    lexical_match_budget: int = 5000
    max_extracted_facts: int = 50
    report_id_limit: int = 1000
    report_cluster_limit: int = 100
    # Consolidation compares at most this many unconsolidated episodes of a
    # user per run (a dense similarity matrix: n^2 floats).
    consolidation_batch: int = 2000
    # Entity spotting in BuildContext: n-grams of up to this many words, from
    # at most this many words of the message.
    entity_ngram_words: int = 5
    entity_scan_words: int = 2000
    max_token_budget: int = 2_000_000


@dataclass(frozen=True)
class IndexConfig:
    """Vector index type per user: "flat" (exact inner product), "hnsw", or
    "auto" (flat below `hnsw_min_vectors` live vectors, HNSW from there).

    The HNSW parameters were chosen by measurement (bench/memory_index.py,
    figures in README "Memory"): recall@10 against exact search >= 0.95 on
    the hard case (isotropic random unit vectors, 120k x 256) and on
    clustered data."""

    kind: str = "auto"
    hnsw_min_vectors: int = 50_000
    hnsw_m: int = 32
    hnsw_ef_construction: int = 128
    # Search breadth (efSearch). 0: measured per index after each build, the
    # smallest breadth reaching `hnsw_target_recall` recall@10 against exact
    # search on a sample of the index's own vectors (an exact scan if none up
    # to `hnsw_max_ef_search` does, or if the scan is faster). A RecallRequest
    # may ask for another breadth.
    hnsw_ef_search: int = 0
    # 0.99, not just above the goal of 0.95: the sample's queries are easier
    # than real ones. On 120k x 256 clustered vectors the breadth the sample
    # put at 0.97 (efSearch 32) gave 0.955 on unseen points of the clusters;
    # the next one (64) gave 0.993, still 50x faster than the exact scan.
    hnsw_target_recall: float = 0.99
    # When the tuned graph search is measured slower than an exact scan of
    # the same vectors (small or very hard indexes), search exactly.
    hnsw_prefer_exact_scan: bool = True
    # Also the cap of a filtered search's widened efSearch (live / admitted).
    hnsw_max_ef_search: int = 4096
    # A filter admitting at most this many vectors is searched exactly (the
    # admitted vectors only) instead of through the graph. Measured on 120k x
    # 256 random vectors (bench/memory_index.py, p50 on a loaded 2-core box):
    # exact scan of 10k / 40k / 60k admitted 7 / 17 / 42 ms, widened graph
    # search 49 / 47 / 55 ms. On easier data the graph wins earlier, but the
    # exact scan stays under ~20 ms up to here and is never wrong.
    exact_filter_max_vectors: int = 50_000
    # A rebuild is scheduled when tombstones exceed this share of an index.
    tombstone_rebuild_ratio: float = 0.2
    # Snapshots (indexes that survive restarts): indexes with at least this
    # many live vectors are saved (smaller ones rebuild from the store in
    # well under a second).
    snapshot_min_vectors: int = 10_000
    # A snapshot missing more than this share of the user's vectors is not
    # worth patching: the index is rebuilt from the store instead.
    snapshot_max_tail_fraction: float = 0.25
    # A recall on a user whose index is loading waits at most this long for
    # an exact scan or the index to be available, then answers UNAVAILABLE
    # (reason INDEX_LOADING, retryable).
    load_wait_seconds: float = 5.0


@dataclass(frozen=True)
class RecallDefaults:
    """combined = (ws*similarity + wr*recency + wi*importance) / (ws+wr+wi),
    recency = 0.5 ** (age / half_life)."""

    similarity_weight: float = 0.6
    recency_weight: float = 0.2
    importance_weight: float = 0.2
    recency_half_life_seconds: float = 30 * 86_400.0


@dataclass(frozen=True)
class PromotionConfig:
    """Sessions feeding episodic memory (core/memory/promotion.py). A session
    is promoted when its metadata has `statekeeper.memory.promote` = "true",
    or when its agent is listed in `agents` (comma separated; "*": every
    session). `statekeeper.memory.promote` = "false" opts a session out."""

    agents: str = ""
    # An appended session waits this long before its turns are read, so that
    # the appends of one exchange are promoted in one batch.
    delay_seconds: float = 0.2
    # Turns recorded per batch (one RecordEpisodes-style write).
    batch_turns: int = 100
    # Sessions waiting in this process's queue at most; beyond, the periodic
    # sweep promotes them (they are marked in the store first).
    max_queued_sessions: int = 10_000
    # The sweep that finishes sessions whose promotion was interrupted (a
    # replica stopped or failed between the append and the promotion).
    sweep_interval_seconds: float = 30.0
    # Facts extracted from promoted episodes (only with an LLM endpoint)
    # waiting at most; beyond, extraction of the newest is skipped (logged).
    max_queued_extractions: int = 1_000


@dataclass(frozen=True)
class RerankConfig:
    """The optional reranker stage of text recall: a cross-encoder served
    over HTTP by the operator, speaking the Text Embeddings Inference rerank
    protocol (adapters/rerank_endpoint.py). `url` unset (the default): no
    reranking. The best `depth` candidates of a text recall (hybrid or
    lexical), by combined score, are sent with the query; an endpoint that
    does not answer well within `timeout_seconds` leaves the recall as it
    would be without one."""

    url: str = ""
    depth: int = 30
    timeout_seconds: float = 2.0


@dataclass(frozen=True)
class MemoryConfig:
    default_importance: float = 0.5
    near_duplicate_threshold: float = 0.95
    recall: RecallDefaults = field(default_factory=RecallDefaults)
    index: IndexConfig = field(default_factory=IndexConfig)
    # Forgetting: decayed = importance * exp(-decay_rate * age_days).
    decay_rate_per_day: float = 0.01
    forget_threshold: float = 0.05
    # Consolidation.
    consolidation_similarity: float = 0.85
    consolidation_min_cluster: int = 3
    consolidation_demotion: float = 0.3
    # BuildContext defaults.
    context_token_budget: int = 4000
    context_max_episodes: int = 5
    context_max_facts: int = 10
    # Background jobs (seconds; 0 disables the job).
    forgetting_interval_seconds: float = 3600.0
    consolidation_interval_seconds: float = 3600.0
    index_maintenance_interval_seconds: float = 60.0
    # Indexes changed since their last snapshot are saved this often (and at
    # shutdown) when a snapshot directory is configured.
    index_snapshot_interval_seconds: float = 300.0
    limits: MemoryLimits = field(default_factory=MemoryLimits)
    promotion: PromotionConfig = field(default_factory=PromotionConfig)
    rerank: RerankConfig = field(default_factory=RerankConfig)
