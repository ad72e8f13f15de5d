import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from statekeeper_client.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReceiptStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECEIPT_STATUS_UNSPECIFIED: _ClassVar[ReceiptStatus]
    RECEIPT_STATUS_OK: _ClassVar[ReceiptStatus]
    RECEIPT_STATUS_ALREADY_ACKED: _ClassVar[ReceiptStatus]
    RECEIPT_STATUS_EXPIRED: _ClassVar[ReceiptStatus]
    RECEIPT_STATUS_NOT_FOUND: _ClassVar[ReceiptStatus]
    RECEIPT_STATUS_DEAD_LETTERED: _ClassVar[ReceiptStatus]

class DeadLetterReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEAD_LETTER_REASON_UNSPECIFIED: _ClassVar[DeadLetterReason]
    DEAD_LETTER_REASON_MAX_DELIVERIES: _ClassVar[DeadLetterReason]
    DEAD_LETTER_REASON_REJECTED: _ClassVar[DeadLetterReason]
RECEIPT_STATUS_UNSPECIFIED: ReceiptStatus
RECEIPT_STATUS_OK: ReceiptStatus
RECEIPT_STATUS_ALREADY_ACKED: ReceiptStatus
RECEIPT_STATUS_EXPIRED: ReceiptStatus
RECEIPT_STATUS_NOT_FOUND: ReceiptStatus
RECEIPT_STATUS_DEAD_LETTERED: ReceiptStatus
DEAD_LETTER_REASON_UNSPECIFIED: DeadLetterReason
DEAD_LETTER_REASON_MAX_DELIVERIES: DeadLetterReason
DEAD_LETTER_REASON_REJECTED: DeadLetterReason

class AgentMessage(_message.Message):
    __slots__ = ("message_id", "from_agent", "to_agent", "type", "payload", "reply_to", "correlation_id", "in_reply_to", "headers", "request_id", "send_time", "visible_time", "expire_time", "max_deliveries")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_AGENT_FIELD_NUMBER: _ClassVar[int]
    TO_AGENT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    REPLY_TO_FIELD_NUMBER: _ClassVar[int]
    CORRELATION_ID_FIELD_NUMBER: _ClassVar[int]
    IN_REPLY_TO_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SEND_TIME_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_TIME_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    MAX_DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    from_agent: str
    to_agent: str
    type: str
    payload: _common_pb2.Payload
    reply_to: str
    correlation_id: str
    in_reply_to: str
    headers: _containers.ScalarMap[str, str]
    request_id: str
    send_time: _timestamp_pb2.Timestamp
    visible_time: _timestamp_pb2.Timestamp
    expire_time: _timestamp_pb2.Timestamp
    max_deliveries: int
    def __init__(self, message_id: _Optional[str] = ..., from_agent: _Optional[str] = ..., to_agent: _Optional[str] = ..., type: _Optional[str] = ..., payload: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., reply_to: _Optional[str] = ..., correlation_id: _Optional[str] = ..., in_reply_to: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., request_id: _Optional[str] = ..., send_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., visible_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., max_deliveries: _Optional[int] = ...) -> None: ...

class Delivery(_message.Message):
    __slots__ = ("receipt_handle", "message", "delivery_count", "visibility_deadline")
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_COUNT_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    receipt_handle: str
    message: AgentMessage
    delivery_count: int
    visibility_deadline: _timestamp_pb2.Timestamp
    def __init__(self, receipt_handle: _Optional[str] = ..., message: _Optional[_Union[AgentMessage, _Mapping]] = ..., delivery_count: _Optional[int] = ..., visibility_deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReceiptResult(_message.Message):
    __slots__ = ("receipt_handle", "status", "next_visible_time")
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    NEXT_VISIBLE_TIME_FIELD_NUMBER: _ClassVar[int]
    receipt_handle: str
    status: ReceiptStatus
    next_visible_time: _timestamp_pb2.Timestamp
    def __init__(self, receipt_handle: _Optional[str] = ..., status: _Optional[_Union[ReceiptStatus, str]] = ..., next_visible_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SendMessageRequest(_message.Message):
    __slots__ = ("from_agent", "to_agent", "type", "payload", "reply_to", "correlation_id", "in_reply_to", "headers", "request_id", "ttl", "delay", "max_deliveries")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FROM_AGENT_FIELD_NUMBER: _ClassVar[int]
    TO_AGENT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    REPLY_TO_FIELD_NUMBER: _ClassVar[int]
    CORRELATION_ID_FIELD_NUMBER: _ClassVar[int]
    IN_REPLY_TO_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    MAX_DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    from_agent: str
    to_agent: str
    type: str
    payload: _common_pb2.Payload
    reply_to: str
    correlation_id: str
    in_reply_to: str
    headers: _containers.ScalarMap[str, str]
    request_id: str
    ttl: _duration_pb2.Duration
    delay: _duration_pb2.Duration
    max_deliveries: int
    def __init__(self, from_agent: _Optional[str] = ..., to_agent: _Optional[str] = ..., type: _Optional[str] = ..., payload: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., reply_to: _Optional[str] = ..., correlation_id: _Optional[str] = ..., in_reply_to: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., request_id: _Optional[str] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_deliveries: _Optional[int] = ...) -> None: ...

class SendMessageResponse(_message.Message):
    __slots__ = ("message_id", "duplicate", "visible_time")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_TIME_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    duplicate: bool
    visible_time: _timestamp_pb2.Timestamp
    def __init__(self, message_id: _Optional[str] = ..., duplicate: _Optional[bool] = ..., visible_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReceiveMessagesRequest(_message.Message):
    __slots__ = ("agent_id", "max_in_flight", "visibility_timeout", "types")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    max_in_flight: int
    visibility_timeout: _duration_pb2.Duration
    types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., max_in_flight: _Optional[int] = ..., visibility_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., types: _Optional[_Iterable[str]] = ...) -> None: ...

class ReceiveMessagesResponse(_message.Message):
    __slots__ = ("deliveries",)
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    deliveries: _containers.RepeatedCompositeFieldContainer[Delivery]
    def __init__(self, deliveries: _Optional[_Iterable[_Union[Delivery, _Mapping]]] = ...) -> None: ...

class PullMessagesRequest(_message.Message):
    __slots__ = ("agent_id", "max_messages", "visibility_timeout", "wait_timeout", "types")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    WAIT_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    max_messages: int
    visibility_timeout: _duration_pb2.Duration
    wait_timeout: _duration_pb2.Duration
    types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., max_messages: _Optional[int] = ..., visibility_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., types: _Optional[_Iterable[str]] = ...) -> None: ...

class PullMessagesResponse(_message.Message):
    __slots__ = ("deliveries",)
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    deliveries: _containers.RepeatedCompositeFieldContainer[Delivery]
    def __init__(self, deliveries: _Optional[_Iterable[_Union[Delivery, _Mapping]]] = ...) -> None: ...

class AckMessagesRequest(_message.Message):
    __slots__ = ("receipt_handles",)
    RECEIPT_HANDLES_FIELD_NUMBER: _ClassVar[int]
    receipt_handles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, receipt_handles: _Optional[_Iterable[str]] = ...) -> None: ...

class AckMessagesResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ReceiptResult]
    def __init__(self, results: _Optional[_Iterable[_Union[ReceiptResult, _Mapping]]] = ...) -> None: ...

class NackMessagesRequest(_message.Message):
    __slots__ = ("receipt_handles", "delay", "dead_letter", "reason")
    RECEIPT_HANDLES_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    receipt_handles: _containers.RepeatedScalarFieldContainer[str]
    delay: _duration_pb2.Duration
    dead_letter: bool
    reason: str
    def __init__(self, receipt_handles: _Optional[_Iterable[str]] = ..., delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., dead_letter: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class NackMessagesResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ReceiptResult]
    def __init__(self, results: _Optional[_Iterable[_Union[ReceiptResult, _Mapping]]] = ...) -> None: ...

class ExtendVisibilityRequest(_message.Message):
    __slots__ = ("receipt_handles", "visibility_timeout")
    RECEIPT_HANDLES_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    receipt_handles: _containers.RepeatedScalarFieldContainer[str]
    visibility_timeout: _duration_pb2.Duration
    def __init__(self, receipt_handles: _Optional[_Iterable[str]] = ..., visibility_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ExtendVisibilityResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ReceiptResult]
    def __init__(self, results: _Optional[_Iterable[_Union[ReceiptResult, _Mapping]]] = ...) -> None: ...

class RequestReplyRequest(_message.Message):
    __slots__ = ("from_agent", "to_agent", "type", "payload", "correlation_id", "headers", "timeout", "ttl", "request_id")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FROM_AGENT_FIELD_NUMBER: _ClassVar[int]
    TO_AGENT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CORRELATION_ID_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    from_agent: str
    to_agent: str
    type: str
    payload: _common_pb2.Payload
    correlation_id: str
    headers: _containers.ScalarMap[str, str]
    timeout: _duration_pb2.Duration
    ttl: _duration_pb2.Duration
    request_id: str
    def __init__(self, from_agent: _Optional[str] = ..., to_agent: _Optional[str] = ..., type: _Optional[str] = ..., payload: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., correlation_id: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class RequestReplyResponse(_message.Message):
    __slots__ = ("request_message_id", "reply")
    REQUEST_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    request_message_id: str
    reply: AgentMessage
    def __init__(self, request_message_id: _Optional[str] = ..., reply: _Optional[_Union[AgentMessage, _Mapping]] = ...) -> None: ...

class SendReplyRequest(_message.Message):
    __slots__ = ("request_message_id", "from_agent", "type", "payload", "headers", "request_id")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REQUEST_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_AGENT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_message_id: str
    from_agent: str
    type: str
    payload: _common_pb2.Payload
    headers: _containers.ScalarMap[str, str]
    request_id: str
    def __init__(self, request_message_id: _Optional[str] = ..., from_agent: _Optional[str] = ..., type: _Optional[str] = ..., payload: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., headers: _Optional[_Mapping[str, str]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SendReplyResponse(_message.Message):
    __slots__ = ("message_id", "duplicate", "delivered_to_waiter")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_TO_WAITER_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    duplicate: bool
    delivered_to_waiter: bool
    def __init__(self, message_id: _Optional[str] = ..., duplicate: _Optional[bool] = ..., delivered_to_waiter: _Optional[bool] = ...) -> None: ...

class DeadLetter(_message.Message):
    __slots__ = ("message", "delivery_count", "reason", "detail", "dead_letter_time")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_COUNT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_TIME_FIELD_NUMBER: _ClassVar[int]
    message: AgentMessage
    delivery_count: int
    reason: DeadLetterReason
    detail: str
    dead_letter_time: _timestamp_pb2.Timestamp
    def __init__(self, message: _Optional[_Union[AgentMessage, _Mapping]] = ..., delivery_count: _Optional[int] = ..., reason: _Optional[_Union[DeadLetterReason, str]] = ..., detail: _Optional[str] = ..., dead_letter_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListDeadLettersRequest(_message.Message):
    __slots__ = ("agent_id", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListDeadLettersResponse(_message.Message):
    __slots__ = ("dead_letters", "next_page_token")
    DEAD_LETTERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    dead_letters: _containers.RepeatedCompositeFieldContainer[DeadLetter]
    next_page_token: str
    def __init__(self, dead_letters: _Optional[_Iterable[_Union[DeadLetter, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RedriveDeadLettersRequest(_message.Message):
    __slots__ = ("agent_id", "message_ids")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    message_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., message_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RedriveDeadLettersResponse(_message.Message):
    __slots__ = ("redriven_count", "not_found_message_ids")
    REDRIVEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    NOT_FOUND_MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    redriven_count: int
    not_found_message_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, redriven_count: _Optional[int] = ..., not_found_message_ids: _Optional[_Iterable[str]] = ...) -> None: ...
