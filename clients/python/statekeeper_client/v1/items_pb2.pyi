import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Item(_message.Message):
    __slots__ = ("namespace", "key", "value_json", "create_time", "update_time", "expire_time")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_JSON_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    namespace: _containers.RepeatedScalarFieldContainer[str]
    key: str
    value_json: str
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    expire_time: _timestamp_pb2.Timestamp
    def __init__(self, namespace: _Optional[_Iterable[str]] = ..., key: _Optional[str] = ..., value_json: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ItemVector(_message.Message):
    __slots__ = ("field", "values")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    field: str
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, field: _Optional[str] = ..., values: _Optional[_Iterable[float]] = ...) -> None: ...

class PutItemRequest(_message.Message):
    __slots__ = ("namespace", "key", "value_json", "ttl", "vectors")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_JSON_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    VECTORS_FIELD_NUMBER: _ClassVar[int]
    namespace: _containers.RepeatedScalarFieldContainer[str]
    key: str
    value_json: str
    ttl: _duration_pb2.Duration
    vectors: _containers.RepeatedCompositeFieldContainer[ItemVector]
    def __init__(self, namespace: _Optional[_Iterable[str]] = ..., key: _Optional[str] = ..., value_json: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., vectors: _Optional[_Iterable[_Union[ItemVector, _Mapping]]] = ...) -> None: ...

class PutItemResponse(_message.Message):
    __slots__ = ("item",)
    ITEM_FIELD_NUMBER: _ClassVar[int]
    item: Item
    def __init__(self, item: _Optional[_Union[Item, _Mapping]] = ...) -> None: ...

class GetItemRequest(_message.Message):
    __slots__ = ("namespace", "key", "refresh_ttl")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    REFRESH_TTL_FIELD_NUMBER: _ClassVar[int]
    namespace: _containers.RepeatedScalarFieldContainer[str]
    key: str
    refresh_ttl: bool
    def __init__(self, namespace: _Optional[_Iterable[str]] = ..., key: _Optional[str] = ..., refresh_ttl: _Optional[bool] = ...) -> None: ...

class GetItemResponse(_message.Message):
    __slots__ = ("item",)
    ITEM_FIELD_NUMBER: _ClassVar[int]
    item: Item
    def __init__(self, item: _Optional[_Union[Item, _Mapping]] = ...) -> None: ...

class DeleteItemRequest(_message.Message):
    __slots__ = ("namespace", "key")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    namespace: _containers.RepeatedScalarFieldContainer[str]
    key: str
    def __init__(self, namespace: _Optional[_Iterable[str]] = ..., key: _Optional[str] = ...) -> None: ...

class DeleteItemResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class SearchItemsRequest(_message.Message):
    __slots__ = ("namespace_prefix", "filter_json", "query_vector", "limit", "offset", "refresh_ttl")
    NAMESPACE_PREFIX_FIELD_NUMBER: _ClassVar[int]
    FILTER_JSON_FIELD_NUMBER: _ClassVar[int]
    QUERY_VECTOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    REFRESH_TTL_FIELD_NUMBER: _ClassVar[int]
    namespace_prefix: _containers.RepeatedScalarFieldContainer[str]
    filter_json: str
    query_vector: _containers.RepeatedScalarFieldContainer[float]
    limit: int
    offset: int
    refresh_ttl: bool
    def __init__(self, namespace_prefix: _Optional[_Iterable[str]] = ..., filter_json: _Optional[str] = ..., query_vector: _Optional[_Iterable[float]] = ..., limit: _Optional[int] = ..., offset: _Optional[int] = ..., refresh_ttl: _Optional[bool] = ...) -> None: ...

class ScoredItem(_message.Message):
    __slots__ = ("item", "score")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    item: Item
    score: float
    def __init__(self, item: _Optional[_Union[Item, _Mapping]] = ..., score: _Optional[float] = ...) -> None: ...

class SearchItemsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ScoredItem]
    def __init__(self, items: _Optional[_Iterable[_Union[ScoredItem, _Mapping]]] = ...) -> None: ...

class ItemNamespace(_message.Message):
    __slots__ = ("labels",)
    LABELS_FIELD_NUMBER: _ClassVar[int]
    labels: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, labels: _Optional[_Iterable[str]] = ...) -> None: ...

class ListItemNamespacesRequest(_message.Message):
    __slots__ = ("prefix", "suffix", "max_depth", "limit", "offset")
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    SUFFIX_FIELD_NUMBER: _ClassVar[int]
    MAX_DEPTH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    prefix: _containers.RepeatedScalarFieldContainer[str]
    suffix: _containers.RepeatedScalarFieldContainer[str]
    max_depth: int
    limit: int
    offset: int
    def __init__(self, prefix: _Optional[_Iterable[str]] = ..., suffix: _Optional[_Iterable[str]] = ..., max_depth: _Optional[int] = ..., limit: _Optional[int] = ..., offset: _Optional[int] = ...) -> None: ...

class ListItemNamespacesResponse(_message.Message):
    __slots__ = ("namespaces",)
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedCompositeFieldContainer[ItemNamespace]
    def __init__(self, namespaces: _Optional[_Iterable[_Union[ItemNamespace, _Mapping]]] = ...) -> None: ...
