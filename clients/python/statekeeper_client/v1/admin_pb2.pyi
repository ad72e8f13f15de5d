import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AuditRecord(_message.Message):
    __slots__ = ("audit_id", "principal", "service", "method", "entity_type", "entity_id", "revision", "create_time", "summary")
    AUDIT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    audit_id: int
    principal: str
    service: str
    method: str
    entity_type: str
    entity_id: str
    revision: int
    create_time: _timestamp_pb2.Timestamp
    summary: str
    def __init__(self, audit_id: _Optional[int] = ..., principal: _Optional[str] = ..., service: _Optional[str] = ..., method: _Optional[str] = ..., entity_type: _Optional[str] = ..., entity_id: _Optional[str] = ..., revision: _Optional[int] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., summary: _Optional[str] = ...) -> None: ...

class ListAuditRecordsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "entity_type", "entity_id", "principal", "service", "method", "start_time", "end_time")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    entity_type: str
    entity_id: str
    principal: str
    service: str
    method: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., entity_type: _Optional[str] = ..., entity_id: _Optional[str] = ..., principal: _Optional[str] = ..., service: _Optional[str] = ..., method: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListAuditRecordsResponse(_message.Message):
    __slots__ = ("audit_records", "next_page_token")
    AUDIT_RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    audit_records: _containers.RepeatedCompositeFieldContainer[AuditRecord]
    next_page_token: str
    def __init__(self, audit_records: _Optional[_Iterable[_Union[AuditRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class EraseUserRequest(_message.Message):
    __slots__ = ("user_id", "dry_run", "blackboard_key_prefixes", "agent_ids", "item_namespaces")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    BLACKBOARD_KEY_PREFIXES_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    ITEM_NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    dry_run: bool
    blackboard_key_prefixes: _containers.RepeatedScalarFieldContainer[str]
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    item_namespaces: _containers.RepeatedCompositeFieldContainer[ErasedItemNamespace]
    def __init__(self, user_id: _Optional[str] = ..., dry_run: _Optional[bool] = ..., blackboard_key_prefixes: _Optional[_Iterable[str]] = ..., agent_ids: _Optional[_Iterable[str]] = ..., item_namespaces: _Optional[_Iterable[_Union[ErasedItemNamespace, _Mapping]]] = ...) -> None: ...

class ErasedItemNamespace(_message.Message):
    __slots__ = ("labels",)
    LABELS_FIELD_NUMBER: _ClassVar[int]
    labels: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, labels: _Optional[_Iterable[str]] = ...) -> None: ...

class ErasedCount(_message.Message):
    __slots__ = ("capability", "kind", "count")
    CAPABILITY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    capability: str
    kind: str
    count: int
    def __init__(self, capability: _Optional[str] = ..., kind: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class EraseUserResponse(_message.Message):
    __slots__ = ("counts", "dry_run", "user_hash")
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    USER_HASH_FIELD_NUMBER: _ClassVar[int]
    counts: _containers.RepeatedCompositeFieldContainer[ErasedCount]
    dry_run: bool
    user_hash: str
    def __init__(self, counts: _Optional[_Iterable[_Union[ErasedCount, _Mapping]]] = ..., dry_run: _Optional[bool] = ..., user_hash: _Optional[str] = ...) -> None: ...

class RestoreArchivedRequest(_message.Message):
    __slots__ = ("user_id",)
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    def __init__(self, user_id: _Optional[str] = ...) -> None: ...

class RestoreArchivedResponse(_message.Message):
    __slots__ = ("restored_sessions", "restored")
    RESTORED_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    RESTORED_FIELD_NUMBER: _ClassVar[int]
    restored_sessions: int
    restored: _containers.RepeatedCompositeFieldContainer[RestoredCount]
    def __init__(self, restored_sessions: _Optional[int] = ..., restored: _Optional[_Iterable[_Union[RestoredCount, _Mapping]]] = ...) -> None: ...

class RestoredCount(_message.Message):
    __slots__ = ("capability", "count")
    CAPABILITY_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    capability: str
    count: int
    def __init__(self, capability: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...
