"""Episodic memory's types: what a caller records (EpisodeDraft) and asks (RecallQuery, with
weight overrides), what it gets back (RecordOutcome, RecallOutcome with each score's parts),
and the embedder a deployment plugs in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from statekeeper.core.memory.models import (
    DuplicateKind,
    Episode,
    EpisodeFilter,
    Ranking,
    Vector,
)


class Embedder(Protocol):
    """Turns texts into vectors. Raises `DependencyUnavailableError`
    (dependency "embedder") when it cannot."""

    @property
    def model(self) -> str: ...

    async def embed(self, texts: Sequence[str]) -> list[Vector]: ...


@dataclass(frozen=True)
class EpisodeDraft:
    user_id: str
    session_id: str = ""
    user_message: str = ""
    assistant_response: str = ""
    summary: str = ""
    embedding: Sequence[float] = ()
    importance: float | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    occur_time: float | None = None
    near_duplicate_threshold: float | None = None


@dataclass(frozen=True)
class RecordOutcome:
    episode: Episode
    duplicate_kind: DuplicateKind = DuplicateKind.NONE
    similarity: float = 0.0

    @property
    def duplicate(self) -> bool:
        return self.duplicate_kind != DuplicateKind.NONE


@dataclass(frozen=True)
class ItemError:
    """Why one item of a batch was rejected; `field` is prefixed with the
    item (e.g. "episodes[3].user_id")."""

    field: str
    reason: str
    message: str


@dataclass(frozen=True)
class WeightOverrides:
    similarity: float | None = None
    recency: float | None = None
    importance: float | None = None
    half_life_seconds: float | None = None


@dataclass(frozen=True)
class Weights:
    similarity: float
    recency: float
    importance: float
    half_life_seconds: float

    @property
    def total(self) -> float:
        return self.similarity + self.recency + self.importance


@dataclass(frozen=True)
class RecallQuery:
    user_id: str
    query_text: str = ""
    query_vector: Sequence[float] | None = None
    top_k: int = 0
    episode_filter: EpisodeFilter = field(default_factory=EpisodeFilter)
    min_score: float = 0.0
    weights: WeightOverrides = field(default_factory=WeightOverrides)
    include_embedding: bool = False
    # Restore the user's archived episodes first (the archive tier), so
    # they are recalled too; unset: only hot episodes are candidates.
    include_archived: bool = False


@dataclass(frozen=True)
class Score:
    similarity: float
    recency: float
    importance: float
    combined: float


@dataclass(frozen=True)
class Recalled:
    episode: Episode
    score: Score


@dataclass(frozen=True)
class RecallOutcome:
    results: list[Recalled]
    ranking: Ranking
    index_type: str
    weights: Weights
    candidate_count: int
    # Candidates at or above min_score, before the top_k cut.
    qualified_count: int = 0
    # Whether the reranker stage reordered the best candidates.
    reranked: bool = False


class ArchivedEpisodes(Protocol):
    """The archive tier's side of episodic memory (core/archive/episodes.py):
    a user's episodes archived as one unit, brought back hot on demand."""

    async def restore_user(self, tenant: str, user_id: str, writing: bool = False) -> bool:
        """Restores the user's archived episodes (True: some came back).
        `writing`: before a write, which may skip the archive lookup for a
        user known to have recorded recently (such a user is not archived)."""

    async def owner_of(self, tenant: str, episode_id: str) -> str | None:
        """The user whose archived episodes hold `episode_id`, or None."""

    def recorded(self, tenant: str, user_id: str) -> None:
        """The user just recorded a new episode (not archivable for a while)."""
