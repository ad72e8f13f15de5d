import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SessionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATUS_UNSPECIFIED: _ClassVar[SessionStatus]
    SESSION_STATUS_ACTIVE: _ClassVar[SessionStatus]
    SESSION_STATUS_PAUSED: _ClassVar[SessionStatus]
    SESSION_STATUS_COMPLETED: _ClassVar[SessionStatus]
    SESSION_STATUS_FAILED: _ClassVar[SessionStatus]
    SESSION_STATUS_EXPIRED: _ClassVar[SessionStatus]

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_SYSTEM: _ClassVar[Role]
    ROLE_USER: _ClassVar[Role]
    ROLE_ASSISTANT: _ClassVar[Role]
    ROLE_TOOL: _ClassVar[Role]

class ChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANGE_KIND_UNSPECIFIED: _ClassVar[ChangeKind]
    CHANGE_KIND_CREATE: _ClassVar[ChangeKind]
    CHANGE_KIND_UPDATE: _ClassVar[ChangeKind]
    CHANGE_KIND_APPEND: _ClassVar[ChangeKind]
    CHANGE_KIND_COMPACT: _ClassVar[ChangeKind]
    CHANGE_KIND_ROLLBACK: _ClassVar[ChangeKind]
SESSION_STATUS_UNSPECIFIED: SessionStatus
SESSION_STATUS_ACTIVE: SessionStatus
SESSION_STATUS_PAUSED: SessionStatus
SESSION_STATUS_COMPLETED: SessionStatus
SESSION_STATUS_FAILED: SessionStatus
SESSION_STATUS_EXPIRED: SessionStatus
ROLE_UNSPECIFIED: Role
ROLE_SYSTEM: Role
ROLE_USER: Role
ROLE_ASSISTANT: Role
ROLE_TOOL: Role
CHANGE_KIND_UNSPECIFIED: ChangeKind
CHANGE_KIND_CREATE: ChangeKind
CHANGE_KIND_UPDATE: ChangeKind
CHANGE_KIND_APPEND: ChangeKind
CHANGE_KIND_COMPACT: ChangeKind
CHANGE_KIND_ROLLBACK: ChangeKind

class Session(_message.Message):
    __slots__ = ("session_id", "user_id", "agent_id", "status", "context_variables", "active_tools", "pending_tool_calls", "metadata", "ttl", "expire_time", "create_time", "update_time", "version", "etag", "message_count", "window_message_count", "window_tokens", "compaction_summary", "compacted_through_sequence")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_VARIABLES_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    PENDING_TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    WINDOW_MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    WINDOW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    COMPACTED_THROUGH_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    user_id: str
    agent_id: str
    status: SessionStatus
    context_variables: _struct_pb2.Struct
    active_tools: _containers.RepeatedScalarFieldContainer[str]
    pending_tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    metadata: _containers.ScalarMap[str, str]
    ttl: _duration_pb2.Duration
    expire_time: _timestamp_pb2.Timestamp
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    version: int
    etag: str
    message_count: int
    window_message_count: int
    window_tokens: int
    compaction_summary: str
    compacted_through_sequence: int
    def __init__(self, session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., status: _Optional[_Union[SessionStatus, str]] = ..., context_variables: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., active_tools: _Optional[_Iterable[str]] = ..., pending_tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[int] = ..., etag: _Optional[str] = ..., message_count: _Optional[int] = ..., window_message_count: _Optional[int] = ..., window_tokens: _Optional[int] = ..., compaction_summary: _Optional[str] = ..., compacted_through_sequence: _Optional[int] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ...) -> None: ...

class SessionMessage(_message.Message):
    __slots__ = ("sequence", "message_id", "role", "content", "name", "tool_calls", "tool_call_id", "metadata", "token_count", "create_time", "rolled_back")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    ROLLED_BACK_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    message_id: str
    role: Role
    content: str
    name: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    tool_call_id: str
    metadata: _containers.ScalarMap[str, str]
    token_count: int
    create_time: _timestamp_pb2.Timestamp
    rolled_back: bool
    def __init__(self, sequence: _Optional[int] = ..., message_id: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., content: _Optional[str] = ..., name: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., tool_call_id: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., token_count: _Optional[int] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rolled_back: _Optional[bool] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("session_id", "session")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    session: Session
    def __init__(self, session_id: _Optional[str] = ..., session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "user_id", "agent_id", "status")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    user_id: str
    agent_id: str
    status: SessionStatus
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., user_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., status: _Optional[_Union[SessionStatus, str]] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    next_page_token: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateSessionRequest(_message.Message):
    __slots__ = ("session", "update_mask", "expected_etag")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_ETAG_FIELD_NUMBER: _ClassVar[int]
    session: Session
    update_mask: _field_mask_pb2.FieldMask
    expected_etag: str
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., expected_etag: _Optional[str] = ...) -> None: ...

class UpdateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("session_id", "expected_etag")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_ETAG_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    expected_etag: str
    def __init__(self, session_id: _Optional[str] = ..., expected_etag: _Optional[str] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AppendMessagesRequest(_message.Message):
    __slots__ = ("session_id", "messages", "expected_etag", "request_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_ETAG_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    messages: _containers.RepeatedCompositeFieldContainer[SessionMessage]
    expected_etag: str
    request_id: str
    def __init__(self, session_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[SessionMessage, _Mapping]]] = ..., expected_etag: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class AppendMessagesResponse(_message.Message):
    __slots__ = ("session", "messages", "replayed")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    session: Session
    messages: _containers.RepeatedCompositeFieldContainer[SessionMessage]
    replayed: bool
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., messages: _Optional[_Iterable[_Union[SessionMessage, _Mapping]]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class ListMessagesRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token", "include_rolled_back")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ROLLED_BACK_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    include_rolled_back: bool
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_rolled_back: _Optional[bool] = ...) -> None: ...

class ListMessagesResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[SessionMessage]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[SessionMessage, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetContextWindowRequest(_message.Message):
    __slots__ = ("session_id", "token_budget", "reserved_output_tokens", "system_prompt", "tools_json", "summary_max_tokens")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    RESERVED_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_JSON_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    token_budget: int
    reserved_output_tokens: int
    system_prompt: str
    tools_json: str
    summary_max_tokens: int
    def __init__(self, session_id: _Optional[str] = ..., token_budget: _Optional[int] = ..., reserved_output_tokens: _Optional[int] = ..., system_prompt: _Optional[str] = ..., tools_json: _Optional[str] = ..., summary_max_tokens: _Optional[int] = ...) -> None: ...

class TokenAccounting(_message.Message):
    __slots__ = ("token_budget", "reserved_output_tokens", "system_prompt_tokens", "tools_tokens", "summary_tokens", "messages_tokens", "framing_tokens", "total_tokens", "remaining_tokens")
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    RESERVED_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_TOKENS_FIELD_NUMBER: _ClassVar[int]
    FRAMING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REMAINING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    token_budget: int
    reserved_output_tokens: int
    system_prompt_tokens: int
    tools_tokens: int
    summary_tokens: int
    messages_tokens: int
    framing_tokens: int
    total_tokens: int
    remaining_tokens: int
    def __init__(self, token_budget: _Optional[int] = ..., reserved_output_tokens: _Optional[int] = ..., system_prompt_tokens: _Optional[int] = ..., tools_tokens: _Optional[int] = ..., summary_tokens: _Optional[int] = ..., messages_tokens: _Optional[int] = ..., framing_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., remaining_tokens: _Optional[int] = ...) -> None: ...

class GetContextWindowResponse(_message.Message):
    __slots__ = ("messages", "summary", "summarized_message_count", "accounting", "version", "summary_is_fallback")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    ACCOUNTING_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_IS_FALLBACK_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[SessionMessage]
    summary: str
    summarized_message_count: int
    accounting: TokenAccounting
    version: int
    summary_is_fallback: bool
    def __init__(self, messages: _Optional[_Iterable[_Union[SessionMessage, _Mapping]]] = ..., summary: _Optional[str] = ..., summarized_message_count: _Optional[int] = ..., accounting: _Optional[_Union[TokenAccounting, _Mapping]] = ..., version: _Optional[int] = ..., summary_is_fallback: _Optional[bool] = ...) -> None: ...

class CompactSessionRequest(_message.Message):
    __slots__ = ("session_id", "keep_recent_messages", "expected_etag")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KEEP_RECENT_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_ETAG_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    keep_recent_messages: int
    expected_etag: str
    def __init__(self, session_id: _Optional[str] = ..., keep_recent_messages: _Optional[int] = ..., expected_etag: _Optional[str] = ...) -> None: ...

class CompactSessionResponse(_message.Message):
    __slots__ = ("session", "compacted_message_count")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    COMPACTED_MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    session: Session
    compacted_message_count: int
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., compacted_message_count: _Optional[int] = ...) -> None: ...

class SessionVersion(_message.Message):
    __slots__ = ("version", "parent_version", "change_kind", "create_time", "session")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PARENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    CHANGE_KIND_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    parent_version: int
    change_kind: ChangeKind
    create_time: _timestamp_pb2.Timestamp
    session: Session
    def __init__(self, version: _Optional[int] = ..., parent_version: _Optional[int] = ..., change_kind: _Optional[_Union[ChangeKind, str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class ListSessionVersionsRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSessionVersionsResponse(_message.Message):
    __slots__ = ("versions", "next_page_token")
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[SessionVersion]
    next_page_token: str
    def __init__(self, versions: _Optional[_Iterable[_Union[SessionVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetSessionVersionRequest(_message.Message):
    __slots__ = ("session_id", "version")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    version: int
    def __init__(self, session_id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class GetSessionVersionResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: SessionVersion
    def __init__(self, version: _Optional[_Union[SessionVersion, _Mapping]] = ...) -> None: ...

class RollbackSessionRequest(_message.Message):
    __slots__ = ("session_id", "target_version", "expected_etag")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_ETAG_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    target_version: int
    expected_etag: str
    def __init__(self, session_id: _Optional[str] = ..., target_version: _Optional[int] = ..., expected_etag: _Optional[str] = ...) -> None: ...

class RollbackSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...
