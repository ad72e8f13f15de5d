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
    # Lexical recall scores at most this many of the user's newest episodes.
    max_lexical_candidates: int = 5000
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
    "auto" (flat below `hnsw_min_vectors` live vectors, HNSW from there)."""

    kind: str = "auto"
    hnsw_min_vectors: int = 50_000
    # Measured on 100k x 384 embedding-like vectors (tests/memory/
    # test_hnsw_recall.py): recall@10 about 0.97, about 24 CPU-seconds to build.
    hnsw_m: int = 24
    hnsw_ef_construction: int = 32
    hnsw_ef_search: int = 256
    # A rebuild is scheduled when tombstones exceed this share of an index.
    tombstone_rebuild_ratio: float = 0.2


@dataclass(frozen=True)
class RecallDefaults:
    """combined = (ws*similarity + wr*recency + wi*importance) / (ws+wr+wi),
    recency = 0.5 ** (age / half_life)."""

    similarity_weight: float = 0.6
    recency_weight: float = 0.2
    importance_weight: float = 0.2
    recency_half_life_seconds: float = 30 * 86_400.0


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
    limits: MemoryLimits = field(default_factory=MemoryLimits)
