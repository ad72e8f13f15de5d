from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_FIELD: _ClassVar[ErrorReason]
    ERROR_REASON_LIMIT_EXCEEDED: _ClassVar[ErrorReason]
    ERROR_REASON_ETAG_MISMATCH: _ClassVar[ErrorReason]
    ERROR_REASON_SESSION_EXPIRED: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_ALREADY_EXISTS: _ClassVar[ErrorReason]
    ERROR_REASON_REVISION_COMPACTED: _ClassVar[ErrorReason]
    ERROR_REASON_REVISION_MISMATCH: _ClassVar[ErrorReason]
    ERROR_REASON_FAILED_PRECONDITION: _ClassVar[ErrorReason]
    ERROR_REASON_UNAUTHENTICATED: _ClassVar[ErrorReason]
    ERROR_REASON_STORAGE_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_SLOW_CONSUMER: _ClassVar[ErrorReason]
    ERROR_REASON_REPLY_TIMEOUT: _ClassVar[ErrorReason]
    ERROR_REASON_DIMENSION_MISMATCH: _ClassVar[ErrorReason]
    ERROR_REASON_INTERNAL: _ClassVar[ErrorReason]
    ERROR_REASON_CONCURRENT_MODIFICATION: _ClassVar[ErrorReason]
    ERROR_REASON_INDEX_LOADING: _ClassVar[ErrorReason]
    ERROR_REASON_ERASURE_INCOMPLETE: _ClassVar[ErrorReason]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_INVALID_FIELD: ErrorReason
ERROR_REASON_LIMIT_EXCEEDED: ErrorReason
ERROR_REASON_ETAG_MISMATCH: ErrorReason
ERROR_REASON_SESSION_EXPIRED: ErrorReason
ERROR_REASON_NOT_FOUND: ErrorReason
ERROR_REASON_ALREADY_EXISTS: ErrorReason
ERROR_REASON_REVISION_COMPACTED: ErrorReason
ERROR_REASON_REVISION_MISMATCH: ErrorReason
ERROR_REASON_FAILED_PRECONDITION: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_STORAGE_UNAVAILABLE: ErrorReason
ERROR_REASON_SLOW_CONSUMER: ErrorReason
ERROR_REASON_REPLY_TIMEOUT: ErrorReason
ERROR_REASON_DIMENSION_MISMATCH: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
ERROR_REASON_CONCURRENT_MODIFICATION: ErrorReason
ERROR_REASON_INDEX_LOADING: ErrorReason
ERROR_REASON_ERASURE_INCOMPLETE: ErrorReason

class Payload(_message.Message):
    __slots__ = ("content_type", "schema_version", "data")
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    content_type: str
    schema_version: int
    data: bytes
    def __init__(self, content_type: _Optional[str] = ..., schema_version: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...
