"""Domain records of long-term memory: episodes, facts, predicates.

Times are POSIX seconds (float, UTC), as in core/sessions/models.py. Enum values equal
the proto enum numbers so that the transport converts them with `int()`.
Vectors are float32 numpy arrays; numpy is the lingua franca of every vector
library, so the domain uses it rather than lists of floats.
"""

from __future__ import annotations

import enum
import hashlib
import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import Actor, record_for
from statekeeper.core.errors import InvalidArgumentError, StorageUnavailableError
from statekeeper.core.records import evolved, field_names

Vector = npt.NDArray[np.float32]
SECONDS_PER_DAY = 86_400.0


class DimensionMismatchError(InvalidArgumentError):
    """A vector does not have the dimension of the index it is meant for."""

    reason = "DIMENSION_MISMATCH"

    def __init__(self, field: str, expected: int, got: int) -> None:
        super().__init__(field, f"has dimension {got}, but the user's index has {expected}")
        self.metadata.update(expected=str(expected), got=str(got))


class DependencyUnavailableError(StorageUnavailableError):
    """A configured model endpoint (embedder, LLM) cannot be reached."""

    def __init__(self, dependency: str, message: str) -> None:
        super().__init__(message, dependency=dependency)


class ValueSource(enum.IntEnum):
    """Where a derived value came from (proto MemoryValueSource)."""

    CLIENT = 1
    MODEL = 2
    FALLBACK = 3
    NONE = 4


class DuplicateKind(enum.IntEnum):
    NONE = 0
    EXACT = 1
    NEAR = 2


class Ranking(enum.IntEnum):
    UNSPECIFIED = 0
    VECTOR = 1
    LEXICAL = 2
    HYBRID = 3


class FactOrigin(enum.IntEnum):
    CLIENT = 1
    EXTRACTION = 2
    CONSOLIDATION = 3


class FactOutcome(enum.IntEnum):
    CREATED = 1
    DEDUPLICATED = 2


class IndexState(enum.IntEnum):
    ABSENT = 1
    READY = 2
    BUILDING = 3


def audit_template(actor: Actor | None, now: float) -> AuditRecord | None:
    """Who, through which RPC, when: the store completes it per entity and
    writes it in the transaction of the change. None: no audit (in-process
    callers that are not serving an RPC, such as tests)."""
    return None if actor is None else record_for(actor, "", "", 0, now, "")


def normalize_text(text: str) -> str:
    """Whitespace collapsed and case folded: the form duplicates are compared in."""
    return " ".join(text.split()).casefold()


def entity_key(name: str) -> str:
    """Entities (subjects, objects) and predicates compare in this form."""
    return normalize_text(name)


def content_hash(user_message: str, assistant_response: str) -> str:
    """Exact-duplicate key of an interaction."""
    joined = normalize_text(user_message) + "\x1f" + normalize_text(assistant_response)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def unit_vector(values: npt.ArrayLike) -> Vector:
    """`values` as float32 scaled to length 1 (a zero vector stays zero), so
    that inner product is cosine similarity."""
    vector = np.asarray(values, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def decayed_importance(importance: float, occur_time: float, now: float, rate: float) -> float:
    """importance * exp(-rate * age_days); the future counts as age 0."""
    age_days = max(0.0, now - occur_time) / SECONDS_PER_DAY
    return importance * math.exp(-rate * age_days)


@dataclass(frozen=True)
class EpisodeFilter:
    """Every set field must match; defaults do not filter."""

    session_id: str = ""
    start_time: float | None = None
    end_time: float | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    min_importance: float = 0.0

    @property
    def narrows_storage(self) -> bool:
        """True if the store must be asked which episodes match."""
        return bool(
            self.session_id
            or self.start_time is not None
            or self.end_time is not None
            or self.metadata
        )

    def as_key(self) -> list[Any]:
        """A JSON-able description, for page-token digests."""
        return [
            self.session_id,
            self.start_time,
            self.end_time,
            sorted(self.metadata.items()),
            self.min_importance,
        ]


@dataclass(frozen=True, eq=False)
class Episode:
    """One recorded interaction. `vector_key` is the store-assigned integer
    under which the embedding sits in the user's vector index (0 before the
    episode is stored); `embedding` is loaded only when a read asks for it."""

    episode_id: str
    user_id: str
    session_id: str
    user_message: str
    assistant_response: str
    summary: str
    summary_source: ValueSource
    embedding_source: ValueSource
    embedding_model: str
    importance: float
    metadata: dict[str, str]
    occur_time: float
    create_time: float
    content_hash: str
    dimension: int = 0
    vector_key: int = 0
    embedding: Vector | None = None
    consolidate_time: float | None = None
    derived_fact_ids: tuple[str, ...] = ()

    @property
    def has_embedding(self) -> bool:
        return self.dimension > 0

    def evolve(self, **changes: Any) -> Episode:
        """A copy with `changes` (a batch's stores copy each episode)."""
        return evolved(self, _EPISODE_FIELDS, changes)


_EPISODE_FIELDS = field_names(Episode)


@dataclass(frozen=True)
class EpisodeCursor:
    """Position in ListEpisodes order (occur_time desc, episode_id desc)."""

    occur_time: float
    episode_id: str


@dataclass(frozen=True, eq=False)
class VectorBatch:
    """Vectors of one user's index as stored durably, with what ranking needs."""

    keys: npt.NDArray[np.int64]
    vectors: Vector
    importance: npt.NDArray[np.float32]
    occur_time: npt.NDArray[np.float64]
    embedding_model: str = ""

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0

    def __len__(self) -> int:
        return int(self.keys.shape[0])


@dataclass(frozen=True)
class VectorManifest:
    """A user's embedded episodes without their vectors: what a saved index
    is compared with to find the changes it misses."""

    keys: npt.NDArray[np.int64]
    importance: npt.NDArray[np.float32]
    occur_time: npt.NDArray[np.float64]
    dimension: int
    embedding_model: str = ""


@dataclass(frozen=True)
class FactDraft:
    """A fact to add, as the caller or an extractor gave it."""

    subject: str
    predicate: str
    object: str
    source: str = ""
    confidence: float = 1.0
    valid_from: float | None = None
    valid_to: float | None = None


@dataclass(frozen=True)
class Fact:
    """A stored knowledge triple.

    Valid at instant T when valid_from <= T, T < valid_to (if set), and it
    had not been invalidated yet at T (T < invalidate_time, if set).
    """

    fact_id: str
    user_id: str
    subject: str
    predicate: str
    object: str
    source: str
    confidence: float
    valid_from: float
    valid_to: float | None
    origin: FactOrigin
    source_episode_ids: tuple[str, ...]
    create_time: float
    invalidate_time: float | None = None
    invalidated_by: str = ""
    invalidation_reason: str = ""

    def valid_at(self, instant: float) -> bool:
        return (
            self.valid_from <= instant
            and (self.valid_to is None or instant < self.valid_to)
            and (self.invalidate_time is None or instant < self.invalidate_time)
        )

    def evolve(self, **changes: Any) -> Fact:
        return replace(self, **changes)

    def invalidated(self, reason: str, valid_to: float | None, now: float) -> Fact | None:
        """The fact invalidated at `now`, valid until `valid_to` (None: now)
        but never longer than it already was; None if it already is
        invalidated (a second invalidation changes nothing)."""
        if self.invalidate_time is not None:
            return None
        end = now if valid_to is None else valid_to
        if self.valid_to is not None and self.valid_to < end:
            end = self.valid_to
        return self.evolve(valid_to=end, invalidate_time=now, invalidation_reason=reason)


@dataclass(frozen=True)
class FactBatch:
    """Facts to apply atomically in one scope. `new_ids[i]` is the id the
    i-th draft gets if it creates a fact."""

    user_id: str
    drafts: tuple[FactDraft, ...]
    new_ids: tuple[str, ...]
    origin: FactOrigin
    now: float
    source_episode_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactResult:
    fact: Fact
    outcome: FactOutcome
    invalidated_fact_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactQuery:
    """ListFacts filters. Scope: `user_id`'s facts plus tenant-wide ones."""

    user_id: str = ""
    subject: str = ""
    predicate: str = ""
    object: str = ""
    include_invalidated: bool = False

    def as_key(self) -> list[Any]:
        return [self.user_id, self.subject, self.predicate, self.object, self.include_invalidated]


@dataclass(frozen=True)
class FactCursor:
    """Position in ListFacts order (create_time desc, fact_id desc)."""

    create_time: float
    fact_id: str


@dataclass(frozen=True)
class NeighbourhoodQuery:
    user_id: str
    entity: str
    depth: int
    as_of: float
    include_invalidated: bool
    predicates: tuple[str, ...]
    max_facts: int


@dataclass(frozen=True)
class EntityNode:
    name: str
    depth: int


@dataclass(frozen=True)
class Neighbourhood:
    nodes: list[EntityNode]
    edges: list[Fact]
    truncated: bool


@dataclass(frozen=True)
class Predicate:
    name: str
    single_valued: bool
    description: str
    create_time: float
    update_time: float


@dataclass(frozen=True)
class ConsolidationPlan:
    """One cluster to fold into facts: the facts to apply and the episodes
    whose importance is multiplied by `demotion_factor`."""

    user_id: str
    episode_ids: tuple[str, ...]
    facts: FactBatch
    demotion_factor: float
