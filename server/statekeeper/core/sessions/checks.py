"""The checks of session requests against the limits: field by field, each
failure naming its field (INVALID_ARGUMENT, or RESOURCE_EXHAUSTED over a
limit)."""

from __future__ import annotations

from statekeeper.core.errors import (
    InvalidArgumentError,
    LimitExceededError,
)
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.models import (
    MessageDraft,
    Role,
    SessionDraft,
    ToolCall,
    WindowRequest,
)
from statekeeper.core.validation import (
    check_count,
    check_json_size,
    check_metadata,
    check_non_negative,
    check_text,
)


def check_draft(limits: Limits, draft: SessionDraft) -> None:
    """The fields of a new or updated session."""
    check_json_size(
        "session.context_variables", draft.context_variables, limits.max_context_variables_bytes
    )
    check_count("session.active_tools", draft.active_tools, limits.max_active_tools)
    for index, tool in enumerate(draft.active_tools):
        if not tool:
            raise InvalidArgumentError(f"session.active_tools[{index}]", "must not be empty")
        check_text(f"session.active_tools[{index}]", tool, limits.max_metadata_key_bytes)
    check_count(
        "session.pending_tool_calls", draft.pending_tool_calls, limits.max_pending_tool_calls
    )
    for index, call in enumerate(draft.pending_tool_calls):
        check_tool_call(limits, f"session.pending_tool_calls[{index}]", call)
    check_metadata("session.metadata", draft.metadata, limits)
    check_non_negative("session.ttl", draft.ttl_seconds)
    if draft.ttl_seconds > limits.max_ttl_seconds:
        raise LimitExceededError(
            "session.ttl", int(limits.max_ttl_seconds), f"is {draft.ttl_seconds:.0f} seconds"
        )


def check_tool_call(limits: Limits, field: str, call: ToolCall) -> None:
    if not call.id:
        raise InvalidArgumentError(f"{field}.id", "is required")
    if not call.name:
        raise InvalidArgumentError(f"{field}.name", "is required")
    check_text(f"{field}.id", call.id, limits.max_metadata_key_bytes)
    check_text(f"{field}.name", call.name, limits.max_metadata_key_bytes)
    check_text(f"{field}.arguments", call.arguments, limits.max_message_bytes)


def check_message(limits: Limits, field: str, draft: MessageDraft) -> None:
    """One message of an append."""
    check_text(f"{field}.content", draft.content, limits.max_message_bytes)
    check_text(f"{field}.name", draft.name, limits.max_metadata_key_bytes)
    check_metadata(f"{field}.metadata", draft.metadata, limits)
    check_count(f"{field}.tool_calls", draft.tool_calls, limits.max_tool_calls_per_message)
    if draft.tool_calls and draft.role != Role.ASSISTANT:
        raise InvalidArgumentError(f"{field}.tool_calls", "only ASSISTANT messages call tools")
    for index, call in enumerate(draft.tool_calls):
        check_tool_call(limits, f"{field}.tool_calls[{index}]", call)
    if draft.role == Role.TOOL:
        if not draft.tool_call_id:
            raise InvalidArgumentError(f"{field}.tool_call_id", "is required for TOOL messages")
        check_text(f"{field}.tool_call_id", draft.tool_call_id, limits.max_metadata_key_bytes)
    elif draft.tool_call_id:
        raise InvalidArgumentError(f"{field}.tool_call_id", "is only allowed on TOOL messages")
    if not draft.content and not draft.tool_calls:
        raise InvalidArgumentError(f"{field}.content", "is required")


def check_window_request(limits: Limits, request: WindowRequest) -> None:
    """A GetContextWindow request."""
    if request.token_budget <= 0:
        raise InvalidArgumentError("token_budget", "must be positive")
    if request.token_budget > limits.max_token_budget:
        raise LimitExceededError(
            "token_budget", limits.max_token_budget, f"is {request.token_budget}"
        )
    check_non_negative("reserved_output_tokens", request.reserved_output_tokens)
    check_text("system_prompt", request.system_prompt, limits.max_message_bytes)
    check_text("tools_json", request.tools_json, limits.max_message_bytes)
