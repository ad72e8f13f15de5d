import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from statekeeper_client.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TxnCompareOperator(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TXN_COMPARE_OPERATOR_UNSPECIFIED: _ClassVar[TxnCompareOperator]
    TXN_COMPARE_OPERATOR_EQUAL: _ClassVar[TxnCompareOperator]
    TXN_COMPARE_OPERATOR_NOT_EQUAL: _ClassVar[TxnCompareOperator]
    TXN_COMPARE_OPERATOR_GREATER: _ClassVar[TxnCompareOperator]
    TXN_COMPARE_OPERATOR_LESS: _ClassVar[TxnCompareOperator]

class BlackboardEventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BLACKBOARD_EVENT_TYPE_UNSPECIFIED: _ClassVar[BlackboardEventType]
    BLACKBOARD_EVENT_TYPE_PUT: _ClassVar[BlackboardEventType]
    BLACKBOARD_EVENT_TYPE_DELETE: _ClassVar[BlackboardEventType]
    BLACKBOARD_EVENT_TYPE_EXPIRE: _ClassVar[BlackboardEventType]
TXN_COMPARE_OPERATOR_UNSPECIFIED: TxnCompareOperator
TXN_COMPARE_OPERATOR_EQUAL: TxnCompareOperator
TXN_COMPARE_OPERATOR_NOT_EQUAL: TxnCompareOperator
TXN_COMPARE_OPERATOR_GREATER: TxnCompareOperator
TXN_COMPARE_OPERATOR_LESS: TxnCompareOperator
BLACKBOARD_EVENT_TYPE_UNSPECIFIED: BlackboardEventType
BLACKBOARD_EVENT_TYPE_PUT: BlackboardEventType
BLACKBOARD_EVENT_TYPE_DELETE: BlackboardEventType
BLACKBOARD_EVENT_TYPE_EXPIRE: BlackboardEventType

class BlackboardHeader(_message.Message):
    __slots__ = ("revision", "oldest_revision")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    OLDEST_REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    oldest_revision: int
    def __init__(self, revision: _Optional[int] = ..., oldest_revision: _Optional[int] = ...) -> None: ...

class BlackboardValue(_message.Message):
    __slots__ = ("payload", "json")
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    payload: _common_pb2.Payload
    json: _struct_pb2.Struct
    def __init__(self, payload: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., json: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class BlackboardEntry(_message.Message):
    __slots__ = ("board", "key", "value", "create_revision", "mod_revision", "version", "writer_agent_id", "expire_time", "update_time")
    BOARD_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CREATE_REVISION_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WRITER_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    board: str
    key: str
    value: BlackboardValue
    create_revision: int
    mod_revision: int
    version: int
    writer_agent_id: str
    expire_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, board: _Optional[str] = ..., key: _Optional[str] = ..., value: _Optional[_Union[BlackboardValue, _Mapping]] = ..., create_revision: _Optional[int] = ..., mod_revision: _Optional[int] = ..., version: _Optional[int] = ..., writer_agent_id: _Optional[str] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PutEntryRequest(_message.Message):
    __slots__ = ("board", "key", "value", "writer_agent_id", "ttl", "keep_ttl", "expected_mod_revision", "return_previous")
    BOARD_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    WRITER_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    KEEP_TTL_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    RETURN_PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    board: str
    key: str
    value: BlackboardValue
    writer_agent_id: str
    ttl: _duration_pb2.Duration
    keep_ttl: bool
    expected_mod_revision: int
    return_previous: bool
    def __init__(self, board: _Optional[str] = ..., key: _Optional[str] = ..., value: _Optional[_Union[BlackboardValue, _Mapping]] = ..., writer_agent_id: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., keep_ttl: _Optional[bool] = ..., expected_mod_revision: _Optional[int] = ..., return_previous: _Optional[bool] = ...) -> None: ...

class PutEntryResponse(_message.Message):
    __slots__ = ("header", "entry", "previous")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    header: BlackboardHeader
    entry: BlackboardEntry
    previous: BlackboardEntry
    def __init__(self, header: _Optional[_Union[BlackboardHeader, _Mapping]] = ..., entry: _Optional[_Union[BlackboardEntry, _Mapping]] = ..., previous: _Optional[_Union[BlackboardEntry, _Mapping]] = ...) -> None: ...

class GetEntryRequest(_message.Message):
    __slots__ = ("board", "key", "revision")
    BOARD_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    board: str
    key: str
    revision: int
    def __init__(self, board: _Optional[str] = ..., key: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class GetEntryResponse(_message.Message):
    __slots__ = ("header", "found", "entry")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    header: BlackboardHeader
    found: bool
    entry: BlackboardEntry
    def __init__(self, header: _Optional[_Union[BlackboardHeader, _Mapping]] = ..., found: _Optional[bool] = ..., entry: _Optional[_Union[BlackboardEntry, _Mapping]] = ...) -> None: ...

class DeleteEntryRequest(_message.Message):
    __slots__ = ("board", "key", "expected_mod_revision", "return_previous")
    BOARD_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    RETURN_PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    board: str
    key: str
    expected_mod_revision: int
    return_previous: bool
    def __init__(self, board: _Optional[str] = ..., key: _Optional[str] = ..., expected_mod_revision: _Optional[int] = ..., return_previous: _Optional[bool] = ...) -> None: ...

class DeleteEntryResponse(_message.Message):
    __slots__ = ("header", "deleted", "previous")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    header: BlackboardHeader
    deleted: bool
    previous: BlackboardEntry
    def __init__(self, header: _Optional[_Union[BlackboardHeader, _Mapping]] = ..., deleted: _Optional[bool] = ..., previous: _Optional[_Union[BlackboardEntry, _Mapping]] = ...) -> None: ...

class ListEntriesRequest(_message.Message):
    __slots__ = ("board", "prefix", "pattern", "revision", "page_size", "page_token", "keys_only")
    BOARD_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    KEYS_ONLY_FIELD_NUMBER: _ClassVar[int]
    board: str
    prefix: str
    pattern: str
    revision: int
    page_size: int
    page_token: str
    keys_only: bool
    def __init__(self, board: _Optional[str] = ..., prefix: _Optional[str] = ..., pattern: _Optional[str] = ..., revision: _Optional[int] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., keys_only: _Optional[bool] = ...) -> None: ...

class ListEntriesResponse(_message.Message):
    __slots__ = ("header", "entries", "next_page_token")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    header: BlackboardHeader
    entries: _containers.RepeatedCompositeFieldContainer[BlackboardEntry]
    next_page_token: str
    def __init__(self, header: _Optional[_Union[BlackboardHeader, _Mapping]] = ..., entries: _Optional[_Iterable[_Union[BlackboardEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class TxnCompare(_message.Message):
    __slots__ = ("key", "operator", "mod_revision", "create_revision", "version", "value", "exists")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    CREATE_REVISION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    key: str
    operator: TxnCompareOperator
    mod_revision: int
    create_revision: int
    version: int
    value: BlackboardValue
    exists: bool
    def __init__(self, key: _Optional[str] = ..., operator: _Optional[_Union[TxnCompareOperator, str]] = ..., mod_revision: _Optional[int] = ..., create_revision: _Optional[int] = ..., version: _Optional[int] = ..., value: _Optional[_Union[BlackboardValue, _Mapping]] = ..., exists: _Optional[bool] = ...) -> None: ...

class TxnPut(_message.Message):
    __slots__ = ("key", "value", "ttl", "keep_ttl", "return_previous")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    KEEP_TTL_FIELD_NUMBER: _ClassVar[int]
    RETURN_PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: BlackboardValue
    ttl: _duration_pb2.Duration
    keep_ttl: bool
    return_previous: bool
    def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[BlackboardValue, _Mapping]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., keep_ttl: _Optional[bool] = ..., return_previous: _Optional[bool] = ...) -> None: ...

class TxnDelete(_message.Message):
    __slots__ = ("key", "return_previous")
    KEY_FIELD_NUMBER: _ClassVar[int]
    RETURN_PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    key: str
    return_previous: bool
    def __init__(self, key: _Optional[str] = ..., return_previous: _Optional[bool] = ...) -> None: ...

class TxnGet(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class TxnOp(_message.Message):
    __slots__ = ("put_entry", "delete_entry", "get_entry")
    PUT_ENTRY_FIELD_NUMBER: _ClassVar[int]
    DELETE_ENTRY_FIELD_NUMBER: _ClassVar[int]
    GET_ENTRY_FIELD_NUMBER: _ClassVar[int]
    put_entry: TxnPut
    delete_entry: TxnDelete
    get_entry: TxnGet
    def __init__(self, put_entry: _Optional[_Union[TxnPut, _Mapping]] = ..., delete_entry: _Optional[_Union[TxnDelete, _Mapping]] = ..., get_entry: _Optional[_Union[TxnGet, _Mapping]] = ...) -> None: ...

class TxnPutResult(_message.Message):
    __slots__ = ("entry", "previous")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    entry: BlackboardEntry
    previous: BlackboardEntry
    def __init__(self, entry: _Optional[_Union[BlackboardEntry, _Mapping]] = ..., previous: _Optional[_Union[BlackboardEntry, _Mapping]] = ...) -> None: ...

class TxnDeleteResult(_message.Message):
    __slots__ = ("deleted", "previous")
    DELETED_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    previous: BlackboardEntry
    def __init__(self, deleted: _Optional[bool] = ..., previous: _Optional[_Union[BlackboardEntry, _Mapping]] = ...) -> None: ...

class TxnGetResult(_message.Message):
    __slots__ = ("found", "entry")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    found: bool
    entry: BlackboardEntry
    def __init__(self, found: _Optional[bool] = ..., entry: _Optional[_Union[BlackboardEntry, _Mapping]] = ...) -> None: ...

class TxnOpResult(_message.Message):
    __slots__ = ("put_entry", "delete_entry", "get_entry")
    PUT_ENTRY_FIELD_NUMBER: _ClassVar[int]
    DELETE_ENTRY_FIELD_NUMBER: _ClassVar[int]
    GET_ENTRY_FIELD_NUMBER: _ClassVar[int]
    put_entry: TxnPutResult
    delete_entry: TxnDeleteResult
    get_entry: TxnGetResult
    def __init__(self, put_entry: _Optional[_Union[TxnPutResult, _Mapping]] = ..., delete_entry: _Optional[_Union[TxnDeleteResult, _Mapping]] = ..., get_entry: _Optional[_Union[TxnGetResult, _Mapping]] = ...) -> None: ...

class TxnRequest(_message.Message):
    __slots__ = ("board", "compares", "success", "failure", "writer_agent_id")
    BOARD_FIELD_NUMBER: _ClassVar[int]
    COMPARES_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    WRITER_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    board: str
    compares: _containers.RepeatedCompositeFieldContainer[TxnCompare]
    success: _containers.RepeatedCompositeFieldContainer[TxnOp]
    failure: _containers.RepeatedCompositeFieldContainer[TxnOp]
    writer_agent_id: str
    def __init__(self, board: _Optional[str] = ..., compares: _Optional[_Iterable[_Union[TxnCompare, _Mapping]]] = ..., success: _Optional[_Iterable[_Union[TxnOp, _Mapping]]] = ..., failure: _Optional[_Iterable[_Union[TxnOp, _Mapping]]] = ..., writer_agent_id: _Optional[str] = ...) -> None: ...

class TxnResponse(_message.Message):
    __slots__ = ("header", "succeeded", "results")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    header: BlackboardHeader
    succeeded: bool
    results: _containers.RepeatedCompositeFieldContainer[TxnOpResult]
    def __init__(self, header: _Optional[_Union[BlackboardHeader, _Mapping]] = ..., succeeded: _Optional[bool] = ..., results: _Optional[_Iterable[_Union[TxnOpResult, _Mapping]]] = ...) -> None: ...

class BlackboardEvent(_message.Message):
    __slots__ = ("type", "entry", "previous", "revision")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    type: BlackboardEventType
    entry: BlackboardEntry
    previous: BlackboardEntry
    revision: int
    def __init__(self, type: _Optional[_Union[BlackboardEventType, str]] = ..., entry: _Optional[_Union[BlackboardEntry, _Mapping]] = ..., previous: _Optional[_Union[BlackboardEntry, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("board", "prefix", "pattern", "start_revision", "initial_snapshot", "prev_value", "progress_notify_interval", "event_types")
    BOARD_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    START_REVISION_FIELD_NUMBER: _ClassVar[int]
    INITIAL_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    PREV_VALUE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_NOTIFY_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    board: str
    prefix: str
    pattern: str
    start_revision: int
    initial_snapshot: bool
    prev_value: bool
    progress_notify_interval: _duration_pb2.Duration
    event_types: _containers.RepeatedScalarFieldContainer[BlackboardEventType]
    def __init__(self, board: _Optional[str] = ..., prefix: _Optional[str] = ..., pattern: _Optional[str] = ..., start_revision: _Optional[int] = ..., initial_snapshot: _Optional[bool] = ..., prev_value: _Optional[bool] = ..., progress_notify_interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., event_types: _Optional[_Iterable[_Union[BlackboardEventType, str]]] = ...) -> None: ...

class WatchStarted(_message.Message):
    __slots__ = ("start_revision",)
    START_REVISION_FIELD_NUMBER: _ClassVar[int]
    start_revision: int
    def __init__(self, start_revision: _Optional[int] = ...) -> None: ...

class WatchEvents(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[BlackboardEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[BlackboardEvent, _Mapping]]] = ...) -> None: ...

class WatchProgress(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    def __init__(self, revision: _Optional[int] = ...) -> None: ...

class WatchSnapshotBegin(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    def __init__(self, revision: _Optional[int] = ...) -> None: ...

class WatchSnapshotChunk(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[BlackboardEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[BlackboardEntry, _Mapping]]] = ...) -> None: ...

class WatchSnapshotEnd(_message.Message):
    __slots__ = ("revision", "entry_count")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    ENTRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    revision: int
    entry_count: int
    def __init__(self, revision: _Optional[int] = ..., entry_count: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("header", "started", "events", "progress", "snapshot_begin", "snapshot_chunk", "snapshot_end", "resume_revision")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_BEGIN_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_CHUNK_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_END_FIELD_NUMBER: _ClassVar[int]
    RESUME_REVISION_FIELD_NUMBER: _ClassVar[int]
    header: BlackboardHeader
    started: WatchStarted
    events: WatchEvents
    progress: WatchProgress
    snapshot_begin: WatchSnapshotBegin
    snapshot_chunk: WatchSnapshotChunk
    snapshot_end: WatchSnapshotEnd
    resume_revision: int
    def __init__(self, header: _Optional[_Union[BlackboardHeader, _Mapping]] = ..., started: _Optional[_Union[WatchStarted, _Mapping]] = ..., events: _Optional[_Union[WatchEvents, _Mapping]] = ..., progress: _Optional[_Union[WatchProgress, _Mapping]] = ..., snapshot_begin: _Optional[_Union[WatchSnapshotBegin, _Mapping]] = ..., snapshot_chunk: _Optional[_Union[WatchSnapshotChunk, _Mapping]] = ..., snapshot_end: _Optional[_Union[WatchSnapshotEnd, _Mapping]] = ..., resume_revision: _Optional[int] = ...) -> None: ...

class CompactBlackboardRequest(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    def __init__(self, revision: _Optional[int] = ...) -> None: ...

class CompactBlackboardResponse(_message.Message):
    __slots__ = ("header",)
    HEADER_FIELD_NUMBER: _ClassVar[int]
    header: BlackboardHeader
    def __init__(self, header: _Optional[_Union[BlackboardHeader, _Mapping]] = ...) -> None: ...
