import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from statekeeper_client.v1 import common_pb2 as _common_pb2
from statekeeper_client.v1 import session_pb2 as _session_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryValueSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_VALUE_SOURCE_UNSPECIFIED: _ClassVar[MemoryValueSource]
    MEMORY_VALUE_SOURCE_CLIENT: _ClassVar[MemoryValueSource]
    MEMORY_VALUE_SOURCE_MODEL: _ClassVar[MemoryValueSource]
    MEMORY_VALUE_SOURCE_FALLBACK: _ClassVar[MemoryValueSource]
    MEMORY_VALUE_SOURCE_NONE: _ClassVar[MemoryValueSource]

class DuplicateKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DUPLICATE_KIND_UNSPECIFIED: _ClassVar[DuplicateKind]
    DUPLICATE_KIND_EXACT: _ClassVar[DuplicateKind]
    DUPLICATE_KIND_NEAR: _ClassVar[DuplicateKind]

class RecordEpisodeStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECORD_EPISODE_STATUS_UNSPECIFIED: _ClassVar[RecordEpisodeStatus]
    RECORD_EPISODE_STATUS_CREATED: _ClassVar[RecordEpisodeStatus]
    RECORD_EPISODE_STATUS_DUPLICATE: _ClassVar[RecordEpisodeStatus]
    RECORD_EPISODE_STATUS_ERROR: _ClassVar[RecordEpisodeStatus]

class RecallRanking(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_RANKING_UNSPECIFIED: _ClassVar[RecallRanking]
    RECALL_RANKING_VECTOR: _ClassVar[RecallRanking]
    RECALL_RANKING_LEXICAL: _ClassVar[RecallRanking]
    RECALL_RANKING_HYBRID: _ClassVar[RecallRanking]

class FactOrigin(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FACT_ORIGIN_UNSPECIFIED: _ClassVar[FactOrigin]
    FACT_ORIGIN_CLIENT: _ClassVar[FactOrigin]
    FACT_ORIGIN_EXTRACTION: _ClassVar[FactOrigin]
    FACT_ORIGIN_CONSOLIDATION: _ClassVar[FactOrigin]

class FactOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FACT_OUTCOME_UNSPECIFIED: _ClassVar[FactOutcome]
    FACT_OUTCOME_CREATED: _ClassVar[FactOutcome]
    FACT_OUTCOME_DEDUPLICATED: _ClassVar[FactOutcome]

class IndexState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INDEX_STATE_UNSPECIFIED: _ClassVar[IndexState]
    INDEX_STATE_ABSENT: _ClassVar[IndexState]
    INDEX_STATE_READY: _ClassVar[IndexState]
    INDEX_STATE_BUILDING: _ClassVar[IndexState]
MEMORY_VALUE_SOURCE_UNSPECIFIED: MemoryValueSource
MEMORY_VALUE_SOURCE_CLIENT: MemoryValueSource
MEMORY_VALUE_SOURCE_MODEL: MemoryValueSource
MEMORY_VALUE_SOURCE_FALLBACK: MemoryValueSource
MEMORY_VALUE_SOURCE_NONE: MemoryValueSource
DUPLICATE_KIND_UNSPECIFIED: DuplicateKind
DUPLICATE_KIND_EXACT: DuplicateKind
DUPLICATE_KIND_NEAR: DuplicateKind
RECORD_EPISODE_STATUS_UNSPECIFIED: RecordEpisodeStatus
RECORD_EPISODE_STATUS_CREATED: RecordEpisodeStatus
RECORD_EPISODE_STATUS_DUPLICATE: RecordEpisodeStatus
RECORD_EPISODE_STATUS_ERROR: RecordEpisodeStatus
RECALL_RANKING_UNSPECIFIED: RecallRanking
RECALL_RANKING_VECTOR: RecallRanking
RECALL_RANKING_LEXICAL: RecallRanking
RECALL_RANKING_HYBRID: RecallRanking
FACT_ORIGIN_UNSPECIFIED: FactOrigin
FACT_ORIGIN_CLIENT: FactOrigin
FACT_ORIGIN_EXTRACTION: FactOrigin
FACT_ORIGIN_CONSOLIDATION: FactOrigin
FACT_OUTCOME_UNSPECIFIED: FactOutcome
FACT_OUTCOME_CREATED: FactOutcome
FACT_OUTCOME_DEDUPLICATED: FactOutcome
INDEX_STATE_UNSPECIFIED: IndexState
INDEX_STATE_ABSENT: IndexState
INDEX_STATE_READY: IndexState
INDEX_STATE_BUILDING: IndexState

class Episode(_message.Message):
    __slots__ = ("id", "user_id", "session_id", "user_message", "assistant_response", "summary", "summary_source", "embedding", "embedding_source", "embedding_model", "importance", "decayed_importance", "metadata", "occur_time", "create_time", "consolidate_time", "derived_fact_ids")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ASSISTANT_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_SOURCE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_SOURCE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    DECAYED_IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    OCCUR_TIME_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    CONSOLIDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DERIVED_FACT_IDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    user_id: str
    session_id: str
    user_message: str
    assistant_response: str
    summary: str
    summary_source: MemoryValueSource
    embedding: _containers.RepeatedScalarFieldContainer[float]
    embedding_source: MemoryValueSource
    embedding_model: str
    importance: float
    decayed_importance: float
    metadata: _containers.ScalarMap[str, str]
    occur_time: _timestamp_pb2.Timestamp
    create_time: _timestamp_pb2.Timestamp
    consolidate_time: _timestamp_pb2.Timestamp
    derived_fact_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., user_message: _Optional[str] = ..., assistant_response: _Optional[str] = ..., summary: _Optional[str] = ..., summary_source: _Optional[_Union[MemoryValueSource, str]] = ..., embedding: _Optional[_Iterable[float]] = ..., embedding_source: _Optional[_Union[MemoryValueSource, str]] = ..., embedding_model: _Optional[str] = ..., importance: _Optional[float] = ..., decayed_importance: _Optional[float] = ..., metadata: _Optional[_Mapping[str, str]] = ..., occur_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., consolidate_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., derived_fact_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class EpisodeFilter(_message.Message):
    __slots__ = ("session_id", "start_time", "end_time", "metadata", "min_importance")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    MIN_IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    metadata: _containers.ScalarMap[str, str]
    min_importance: float
    def __init__(self, session_id: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., min_importance: _Optional[float] = ...) -> None: ...

class RecordEpisodeRequest(_message.Message):
    __slots__ = ("user_id", "session_id", "user_message", "assistant_response", "summary", "embedding", "importance", "metadata", "occur_time", "near_duplicate_threshold")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ASSISTANT_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    OCCUR_TIME_FIELD_NUMBER: _ClassVar[int]
    NEAR_DUPLICATE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    session_id: str
    user_message: str
    assistant_response: str
    summary: str
    embedding: _containers.RepeatedScalarFieldContainer[float]
    importance: float
    metadata: _containers.ScalarMap[str, str]
    occur_time: _timestamp_pb2.Timestamp
    near_duplicate_threshold: float
    def __init__(self, user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., user_message: _Optional[str] = ..., assistant_response: _Optional[str] = ..., summary: _Optional[str] = ..., embedding: _Optional[_Iterable[float]] = ..., importance: _Optional[float] = ..., metadata: _Optional[_Mapping[str, str]] = ..., occur_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., near_duplicate_threshold: _Optional[float] = ...) -> None: ...

class RecordEpisodeResponse(_message.Message):
    __slots__ = ("episode", "duplicate", "duplicate_of", "duplicate_kind", "duplicate_similarity")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_OF_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_KIND_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    duplicate: bool
    duplicate_of: str
    duplicate_kind: DuplicateKind
    duplicate_similarity: float
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ..., duplicate: _Optional[bool] = ..., duplicate_of: _Optional[str] = ..., duplicate_kind: _Optional[_Union[DuplicateKind, str]] = ..., duplicate_similarity: _Optional[float] = ...) -> None: ...

class RecordEpisodesRequest(_message.Message):
    __slots__ = ("episodes",)
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    episodes: _containers.RepeatedCompositeFieldContainer[RecordEpisodeRequest]
    def __init__(self, episodes: _Optional[_Iterable[_Union[RecordEpisodeRequest, _Mapping]]] = ...) -> None: ...

class RecordEpisodesResult(_message.Message):
    __slots__ = ("status", "result", "error_field", "error_reason", "error_message")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_FIELD_NUMBER: _ClassVar[int]
    ERROR_REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    status: RecordEpisodeStatus
    result: RecordEpisodeResponse
    error_field: str
    error_reason: _common_pb2.ErrorReason
    error_message: str
    def __init__(self, status: _Optional[_Union[RecordEpisodeStatus, str]] = ..., result: _Optional[_Union[RecordEpisodeResponse, _Mapping]] = ..., error_field: _Optional[str] = ..., error_reason: _Optional[_Union[_common_pb2.ErrorReason, str]] = ..., error_message: _Optional[str] = ...) -> None: ...

class RecordEpisodesResponse(_message.Message):
    __slots__ = ("results", "created_count", "duplicate_count", "error_count")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_COUNT_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_COUNT_FIELD_NUMBER: _ClassVar[int]
    ERROR_COUNT_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RecordEpisodesResult]
    created_count: int
    duplicate_count: int
    error_count: int
    def __init__(self, results: _Optional[_Iterable[_Union[RecordEpisodesResult, _Mapping]]] = ..., created_count: _Optional[int] = ..., duplicate_count: _Optional[int] = ..., error_count: _Optional[int] = ...) -> None: ...

class GetEpisodeRequest(_message.Message):
    __slots__ = ("episode_id", "include_embedding")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    include_embedding: bool
    def __init__(self, episode_id: _Optional[str] = ..., include_embedding: _Optional[bool] = ...) -> None: ...

class GetEpisodeResponse(_message.Message):
    __slots__ = ("episode",)
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ...) -> None: ...

class ListEpisodesRequest(_message.Message):
    __slots__ = ("user_id", "filter", "page_size", "page_token", "include_embedding")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    filter: EpisodeFilter
    page_size: int
    page_token: str
    include_embedding: bool
    def __init__(self, user_id: _Optional[str] = ..., filter: _Optional[_Union[EpisodeFilter, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_embedding: _Optional[bool] = ...) -> None: ...

class ListEpisodesResponse(_message.Message):
    __slots__ = ("episodes", "next_page_token")
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    episodes: _containers.RepeatedCompositeFieldContainer[Episode]
    next_page_token: str
    def __init__(self, episodes: _Optional[_Iterable[_Union[Episode, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteEpisodeRequest(_message.Message):
    __slots__ = ("episode_id",)
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    def __init__(self, episode_id: _Optional[str] = ...) -> None: ...

class DeleteEpisodeResponse(_message.Message):
    __slots__ = ("episode_id",)
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    def __init__(self, episode_id: _Optional[str] = ...) -> None: ...

class QueryVector(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class RecallWeights(_message.Message):
    __slots__ = ("similarity", "recency", "importance", "recency_half_life")
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    RECENCY_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    RECENCY_HALF_LIFE_FIELD_NUMBER: _ClassVar[int]
    similarity: float
    recency: float
    importance: float
    recency_half_life: _duration_pb2.Duration
    def __init__(self, similarity: _Optional[float] = ..., recency: _Optional[float] = ..., importance: _Optional[float] = ..., recency_half_life: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("user_id", "query_text", "query_vector", "top_k", "filter", "min_score", "weights", "include_embedding", "include_archived")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_TEXT_FIELD_NUMBER: _ClassVar[int]
    QUERY_VECTOR_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    query_text: str
    query_vector: QueryVector
    top_k: int
    filter: EpisodeFilter
    min_score: float
    weights: RecallWeights
    include_embedding: bool
    include_archived: bool
    def __init__(self, user_id: _Optional[str] = ..., query_text: _Optional[str] = ..., query_vector: _Optional[_Union[QueryVector, _Mapping]] = ..., top_k: _Optional[int] = ..., filter: _Optional[_Union[EpisodeFilter, _Mapping]] = ..., min_score: _Optional[float] = ..., weights: _Optional[_Union[RecallWeights, _Mapping]] = ..., include_embedding: _Optional[bool] = ..., include_archived: _Optional[bool] = ...) -> None: ...

class RecallScore(_message.Message):
    __slots__ = ("similarity", "recency", "importance", "combined")
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    RECENCY_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    COMBINED_FIELD_NUMBER: _ClassVar[int]
    similarity: float
    recency: float
    importance: float
    combined: float
    def __init__(self, similarity: _Optional[float] = ..., recency: _Optional[float] = ..., importance: _Optional[float] = ..., combined: _Optional[float] = ...) -> None: ...

class RecallResult(_message.Message):
    __slots__ = ("episode", "score")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    score: RecallScore
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ..., score: _Optional[_Union[RecallScore, _Mapping]] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("results", "ranking", "index_type", "effective_weights", "candidate_count", "reranked")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    INDEX_TYPE_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_COUNT_FIELD_NUMBER: _ClassVar[int]
    RERANKED_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RecallResult]
    ranking: RecallRanking
    index_type: str
    effective_weights: RecallWeights
    candidate_count: int
    reranked: bool
    def __init__(self, results: _Optional[_Iterable[_Union[RecallResult, _Mapping]]] = ..., ranking: _Optional[_Union[RecallRanking, str]] = ..., index_type: _Optional[str] = ..., effective_weights: _Optional[_Union[RecallWeights, _Mapping]] = ..., candidate_count: _Optional[int] = ..., reranked: _Optional[bool] = ...) -> None: ...

class Fact(_message.Message):
    __slots__ = ("id", "user_id", "subject", "predicate", "object", "source", "confidence", "valid_from", "valid_to", "origin", "source_episode_ids", "create_time", "invalidate_time", "invalidated_by", "invalidation_reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    SOURCE_EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    INVALIDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    INVALIDATED_BY_FIELD_NUMBER: _ClassVar[int]
    INVALIDATION_REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    user_id: str
    subject: str
    predicate: str
    object: str
    source: str
    confidence: float
    valid_from: _timestamp_pb2.Timestamp
    valid_to: _timestamp_pb2.Timestamp
    origin: FactOrigin
    source_episode_ids: _containers.RepeatedScalarFieldContainer[str]
    create_time: _timestamp_pb2.Timestamp
    invalidate_time: _timestamp_pb2.Timestamp
    invalidated_by: str
    invalidation_reason: str
    def __init__(self, id: _Optional[str] = ..., user_id: _Optional[str] = ..., subject: _Optional[str] = ..., predicate: _Optional[str] = ..., object: _Optional[str] = ..., source: _Optional[str] = ..., confidence: _Optional[float] = ..., valid_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., origin: _Optional[_Union[FactOrigin, str]] = ..., source_episode_ids: _Optional[_Iterable[str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., invalidate_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., invalidated_by: _Optional[str] = ..., invalidation_reason: _Optional[str] = ...) -> None: ...

class FactInput(_message.Message):
    __slots__ = ("subject", "predicate", "object", "source", "confidence", "valid_from", "valid_to")
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    subject: str
    predicate: str
    object: str
    source: str
    confidence: float
    valid_from: _timestamp_pb2.Timestamp
    valid_to: _timestamp_pb2.Timestamp
    def __init__(self, subject: _Optional[str] = ..., predicate: _Optional[str] = ..., object: _Optional[str] = ..., source: _Optional[str] = ..., confidence: _Optional[float] = ..., valid_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class FactResult(_message.Message):
    __slots__ = ("fact", "outcome", "invalidated_fact_ids")
    FACT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    INVALIDATED_FACT_IDS_FIELD_NUMBER: _ClassVar[int]
    fact: Fact
    outcome: FactOutcome
    invalidated_fact_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, fact: _Optional[_Union[Fact, _Mapping]] = ..., outcome: _Optional[_Union[FactOutcome, str]] = ..., invalidated_fact_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AddFactsRequest(_message.Message):
    __slots__ = ("user_id", "facts")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    facts: _containers.RepeatedCompositeFieldContainer[FactInput]
    def __init__(self, user_id: _Optional[str] = ..., facts: _Optional[_Iterable[_Union[FactInput, _Mapping]]] = ...) -> None: ...

class AddFactsResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[FactResult]
    def __init__(self, results: _Optional[_Iterable[_Union[FactResult, _Mapping]]] = ...) -> None: ...

class ExtractFactsRequest(_message.Message):
    __slots__ = ("user_id", "text", "episode_id", "source", "dry_run")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    text: str
    episode_id: str
    source: str
    dry_run: bool
    def __init__(self, user_id: _Optional[str] = ..., text: _Optional[str] = ..., episode_id: _Optional[str] = ..., source: _Optional[str] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class ExtractFactsResponse(_message.Message):
    __slots__ = ("extracted", "results", "extractor")
    EXTRACTED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    extracted: _containers.RepeatedCompositeFieldContainer[FactInput]
    results: _containers.RepeatedCompositeFieldContainer[FactResult]
    extractor: MemoryValueSource
    def __init__(self, extracted: _Optional[_Iterable[_Union[FactInput, _Mapping]]] = ..., results: _Optional[_Iterable[_Union[FactResult, _Mapping]]] = ..., extractor: _Optional[_Union[MemoryValueSource, str]] = ...) -> None: ...

class GetFactRequest(_message.Message):
    __slots__ = ("fact_id",)
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    fact_id: str
    def __init__(self, fact_id: _Optional[str] = ...) -> None: ...

class GetFactResponse(_message.Message):
    __slots__ = ("fact",)
    FACT_FIELD_NUMBER: _ClassVar[int]
    fact: Fact
    def __init__(self, fact: _Optional[_Union[Fact, _Mapping]] = ...) -> None: ...

class ListFactsRequest(_message.Message):
    __slots__ = ("user_id", "subject", "predicate", "object", "include_invalidated", "page_size", "page_token")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_INVALIDATED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    subject: str
    predicate: str
    object: str
    include_invalidated: bool
    page_size: int
    page_token: str
    def __init__(self, user_id: _Optional[str] = ..., subject: _Optional[str] = ..., predicate: _Optional[str] = ..., object: _Optional[str] = ..., include_invalidated: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListFactsResponse(_message.Message):
    __slots__ = ("facts", "next_page_token")
    FACTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    facts: _containers.RepeatedCompositeFieldContainer[Fact]
    next_page_token: str
    def __init__(self, facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class EntityNode(_message.Message):
    __slots__ = ("name", "depth")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    name: str
    depth: int
    def __init__(self, name: _Optional[str] = ..., depth: _Optional[int] = ...) -> None: ...

class QueryEntityRequest(_message.Message):
    __slots__ = ("user_id", "entity", "depth", "as_of", "include_invalidated", "predicates", "max_facts")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_INVALIDATED_FIELD_NUMBER: _ClassVar[int]
    PREDICATES_FIELD_NUMBER: _ClassVar[int]
    MAX_FACTS_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    entity: str
    depth: int
    as_of: _timestamp_pb2.Timestamp
    include_invalidated: bool
    predicates: _containers.RepeatedScalarFieldContainer[str]
    max_facts: int
    def __init__(self, user_id: _Optional[str] = ..., entity: _Optional[str] = ..., depth: _Optional[int] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_invalidated: _Optional[bool] = ..., predicates: _Optional[_Iterable[str]] = ..., max_facts: _Optional[int] = ...) -> None: ...

class QueryEntityResponse(_message.Message):
    __slots__ = ("nodes", "edges", "truncated")
    NODES_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[EntityNode]
    edges: _containers.RepeatedCompositeFieldContainer[Fact]
    truncated: bool
    def __init__(self, nodes: _Optional[_Iterable[_Union[EntityNode, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class InvalidateFactRequest(_message.Message):
    __slots__ = ("fact_id", "reason", "valid_to")
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    fact_id: str
    reason: str
    valid_to: _timestamp_pb2.Timestamp
    def __init__(self, fact_id: _Optional[str] = ..., reason: _Optional[str] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class InvalidateFactResponse(_message.Message):
    __slots__ = ("fact", "already_invalidated")
    FACT_FIELD_NUMBER: _ClassVar[int]
    ALREADY_INVALIDATED_FIELD_NUMBER: _ClassVar[int]
    fact: Fact
    already_invalidated: bool
    def __init__(self, fact: _Optional[_Union[Fact, _Mapping]] = ..., already_invalidated: _Optional[bool] = ...) -> None: ...

class Predicate(_message.Message):
    __slots__ = ("name", "single_valued", "description", "create_time", "update_time")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SINGLE_VALUED_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    name: str
    single_valued: bool
    description: str
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., single_valued: _Optional[bool] = ..., description: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class DeclarePredicateRequest(_message.Message):
    __slots__ = ("name", "single_valued", "description")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SINGLE_VALUED_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    single_valued: bool
    description: str
    def __init__(self, name: _Optional[str] = ..., single_valued: _Optional[bool] = ..., description: _Optional[str] = ...) -> None: ...

class DeclarePredicateResponse(_message.Message):
    __slots__ = ("predicate",)
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    predicate: Predicate
    def __init__(self, predicate: _Optional[_Union[Predicate, _Mapping]] = ...) -> None: ...

class ListPredicatesRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListPredicatesResponse(_message.Message):
    __slots__ = ("predicates", "next_page_token")
    PREDICATES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    predicates: _containers.RepeatedCompositeFieldContainer[Predicate]
    next_page_token: str
    def __init__(self, predicates: _Optional[_Iterable[_Union[Predicate, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class MemoryContextMessage(_message.Message):
    __slots__ = ("message_id", "role", "text", "token_count")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    role: _session_pb2.Role
    text: str
    token_count: int
    def __init__(self, message_id: _Optional[str] = ..., role: _Optional[_Union[_session_pb2.Role, str]] = ..., text: _Optional[str] = ..., token_count: _Optional[int] = ...) -> None: ...

class MemoryContextEpisode(_message.Message):
    __slots__ = ("episode", "score", "text", "token_count")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    score: RecallScore
    text: str
    token_count: int
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ..., score: _Optional[_Union[RecallScore, _Mapping]] = ..., text: _Optional[str] = ..., token_count: _Optional[int] = ...) -> None: ...

class MemoryContextFact(_message.Message):
    __slots__ = ("fact", "text", "token_count")
    FACT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    fact: Fact
    text: str
    token_count: int
    def __init__(self, fact: _Optional[_Union[Fact, _Mapping]] = ..., text: _Optional[str] = ..., token_count: _Optional[int] = ...) -> None: ...

class MemoryContextTokens(_message.Message):
    __slots__ = ("budget", "reserved_output", "overhead", "working", "episodes", "facts", "total", "remaining")
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    RESERVED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    OVERHEAD_FIELD_NUMBER: _ClassVar[int]
    WORKING_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    budget: int
    reserved_output: int
    overhead: int
    working: int
    episodes: int
    facts: int
    total: int
    remaining: int
    def __init__(self, budget: _Optional[int] = ..., reserved_output: _Optional[int] = ..., overhead: _Optional[int] = ..., working: _Optional[int] = ..., episodes: _Optional[int] = ..., facts: _Optional[int] = ..., total: _Optional[int] = ..., remaining: _Optional[int] = ...) -> None: ...

class BuildContextRequest(_message.Message):
    __slots__ = ("user_id", "session_id", "message", "token_budget", "reserved_output_tokens", "max_episodes", "max_facts", "max_working_tokens", "recall_weights", "min_score", "include_archived")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    RESERVED_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_EPISODES_FIELD_NUMBER: _ClassVar[int]
    MAX_FACTS_FIELD_NUMBER: _ClassVar[int]
    MAX_WORKING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    RECALL_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    session_id: str
    message: str
    token_budget: int
    reserved_output_tokens: int
    max_episodes: int
    max_facts: int
    max_working_tokens: int
    recall_weights: RecallWeights
    min_score: float
    include_archived: bool
    def __init__(self, user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., message: _Optional[str] = ..., token_budget: _Optional[int] = ..., reserved_output_tokens: _Optional[int] = ..., max_episodes: _Optional[int] = ..., max_facts: _Optional[int] = ..., max_working_tokens: _Optional[int] = ..., recall_weights: _Optional[_Union[RecallWeights, _Mapping]] = ..., min_score: _Optional[float] = ..., include_archived: _Optional[bool] = ...) -> None: ...

class BuildContextResponse(_message.Message):
    __slots__ = ("working_messages", "episodes", "facts", "markdown", "tokens", "omitted_messages", "omitted_episodes", "omitted_facts", "ranking")
    WORKING_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    OMITTED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OMITTED_EPISODES_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FACTS_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    working_messages: _containers.RepeatedCompositeFieldContainer[MemoryContextMessage]
    episodes: _containers.RepeatedCompositeFieldContainer[MemoryContextEpisode]
    facts: _containers.RepeatedCompositeFieldContainer[MemoryContextFact]
    markdown: str
    tokens: MemoryContextTokens
    omitted_messages: int
    omitted_episodes: int
    omitted_facts: int
    ranking: RecallRanking
    def __init__(self, working_messages: _Optional[_Iterable[_Union[MemoryContextMessage, _Mapping]]] = ..., episodes: _Optional[_Iterable[_Union[MemoryContextEpisode, _Mapping]]] = ..., facts: _Optional[_Iterable[_Union[MemoryContextFact, _Mapping]]] = ..., markdown: _Optional[str] = ..., tokens: _Optional[_Union[MemoryContextTokens, _Mapping]] = ..., omitted_messages: _Optional[int] = ..., omitted_episodes: _Optional[int] = ..., omitted_facts: _Optional[int] = ..., ranking: _Optional[_Union[RecallRanking, str]] = ...) -> None: ...

class RunForgettingRequest(_message.Message):
    __slots__ = ("user_id", "dry_run", "decay_rate", "threshold")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    DECAY_RATE_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    dry_run: bool
    decay_rate: float
    threshold: float
    def __init__(self, user_id: _Optional[str] = ..., dry_run: _Optional[bool] = ..., decay_rate: _Optional[float] = ..., threshold: _Optional[float] = ...) -> None: ...

class RunForgettingResponse(_message.Message):
    __slots__ = ("dry_run", "decay_rate", "threshold", "episodes_scanned", "episodes_deleted", "deleted_episode_ids", "deleted_episode_ids_truncated", "start_time", "end_time")
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    DECAY_RATE_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    EPISODES_SCANNED_FIELD_NUMBER: _ClassVar[int]
    EPISODES_DELETED_FIELD_NUMBER: _ClassVar[int]
    DELETED_EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    DELETED_EPISODE_IDS_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    dry_run: bool
    decay_rate: float
    threshold: float
    episodes_scanned: int
    episodes_deleted: int
    deleted_episode_ids: _containers.RepeatedScalarFieldContainer[str]
    deleted_episode_ids_truncated: bool
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    def __init__(self, dry_run: _Optional[bool] = ..., decay_rate: _Optional[float] = ..., threshold: _Optional[float] = ..., episodes_scanned: _Optional[int] = ..., episodes_deleted: _Optional[int] = ..., deleted_episode_ids: _Optional[_Iterable[str]] = ..., deleted_episode_ids_truncated: _Optional[bool] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RunConsolidationRequest(_message.Message):
    __slots__ = ("user_id", "dry_run", "similarity_threshold", "min_cluster_size", "demotion_factor")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    MIN_CLUSTER_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEMOTION_FACTOR_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    dry_run: bool
    similarity_threshold: float
    min_cluster_size: int
    demotion_factor: float
    def __init__(self, user_id: _Optional[str] = ..., dry_run: _Optional[bool] = ..., similarity_threshold: _Optional[float] = ..., min_cluster_size: _Optional[int] = ..., demotion_factor: _Optional[float] = ...) -> None: ...

class ConsolidationCluster(_message.Message):
    __slots__ = ("user_id", "episode_ids", "facts")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    episode_ids: _containers.RepeatedScalarFieldContainer[str]
    facts: _containers.RepeatedCompositeFieldContainer[FactResult]
    def __init__(self, user_id: _Optional[str] = ..., episode_ids: _Optional[_Iterable[str]] = ..., facts: _Optional[_Iterable[_Union[FactResult, _Mapping]]] = ...) -> None: ...

class RunConsolidationResponse(_message.Message):
    __slots__ = ("dry_run", "episodes_scanned", "clusters", "cluster_count", "facts_created", "episodes_demoted", "extractor", "start_time", "end_time")
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    EPISODES_SCANNED_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_COUNT_FIELD_NUMBER: _ClassVar[int]
    FACTS_CREATED_FIELD_NUMBER: _ClassVar[int]
    EPISODES_DEMOTED_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    dry_run: bool
    episodes_scanned: int
    clusters: _containers.RepeatedCompositeFieldContainer[ConsolidationCluster]
    cluster_count: int
    facts_created: int
    episodes_demoted: int
    extractor: MemoryValueSource
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    def __init__(self, dry_run: _Optional[bool] = ..., episodes_scanned: _Optional[int] = ..., clusters: _Optional[_Iterable[_Union[ConsolidationCluster, _Mapping]]] = ..., cluster_count: _Optional[int] = ..., facts_created: _Optional[int] = ..., episodes_demoted: _Optional[int] = ..., extractor: _Optional[_Union[MemoryValueSource, str]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MemoryIndexStats(_message.Message):
    __slots__ = ("user_id", "state", "index_type", "dimension", "vector_count", "tombstone_count", "last_rebuild_time", "embedding_model")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    INDEX_TYPE_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    VECTOR_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOMBSTONE_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_REBUILD_TIME_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    state: IndexState
    index_type: str
    dimension: int
    vector_count: int
    tombstone_count: int
    last_rebuild_time: _timestamp_pb2.Timestamp
    embedding_model: str
    def __init__(self, user_id: _Optional[str] = ..., state: _Optional[_Union[IndexState, str]] = ..., index_type: _Optional[str] = ..., dimension: _Optional[int] = ..., vector_count: _Optional[int] = ..., tombstone_count: _Optional[int] = ..., last_rebuild_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., embedding_model: _Optional[str] = ...) -> None: ...

class GetIndexStatsRequest(_message.Message):
    __slots__ = ("user_id",)
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    def __init__(self, user_id: _Optional[str] = ...) -> None: ...

class GetIndexStatsResponse(_message.Message):
    __slots__ = ("stats",)
    STATS_FIELD_NUMBER: _ClassVar[int]
    stats: MemoryIndexStats
    def __init__(self, stats: _Optional[_Union[MemoryIndexStats, _Mapping]] = ...) -> None: ...

class RebuildIndexRequest(_message.Message):
    __slots__ = ("user_id",)
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    def __init__(self, user_id: _Optional[str] = ...) -> None: ...

class RebuildIndexResponse(_message.Message):
    __slots__ = ("stats",)
    STATS_FIELD_NUMBER: _ClassVar[int]
    stats: MemoryIndexStats
    def __init__(self, stats: _Optional[_Union[MemoryIndexStats, _Mapping]] = ...) -> None: ...
