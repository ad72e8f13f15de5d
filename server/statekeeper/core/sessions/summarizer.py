"""Summaries of conversation prefixes.

A `Summarizer` turns messages into a short text within a token cap. The
offline `ExtractiveSummarizer` is deterministic (same input, same output) and
needs nothing installed; a model-backed summarizer may be configured instead
and falls back to it when the model cannot be reached.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from statekeeper.core.sessions.models import Message, Role
from statekeeper.core.tokens import TokenCounter

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_SNIPPET_CHARS = 160
# No line ("\n- user: x") costs less than this; below it, stop looking.
_MIN_LINE_TOKENS = 5


@dataclass(frozen=True)
class Summary:
    """A summary and where it came from."""

    text: str
    is_fallback: bool


class Summarizer(Protocol):
    """Summarizes messages (oldest first) in at most `max_tokens` tokens."""

    async def summarize(self, messages: Sequence[Message], max_tokens: int) -> Summary: ...


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(sentence) > _SNIPPET_CHARS:
        sentence = sentence[: _SNIPPET_CHARS - 3].rstrip() + "..."
    return sentence


def _describe(message: Message) -> str:
    if message.tool_calls:
        calls = ", ".join(call.name for call in message.tool_calls)
        body = f"called {calls}"
        if message.content:
            body = f"{_first_sentence(message.content)} (called {calls})"
    else:
        body = _first_sentence(message.content)
    return f"- {message.role.wire_name}: {body}"


class ExtractiveSummarizer:
    """Deterministic offline summarizer: a header with counts, then the first
    sentence of each message, newest kept first when the cap is tight."""

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter

    async def summarize(self, messages: Sequence[Message], max_tokens: int) -> Summary:
        return Summary(self.summarize_now(messages, max_tokens), is_fallback=True)

    def summarize_now(self, messages: Sequence[Message], max_tokens: int) -> str:
        if max_tokens <= 0 or not messages:
            return ""
        counts = {role: 0 for role in Role}
        for message in messages:
            counts[message.role] += 1
        parts = ", ".join(f"{n} {role.wire_name}" for role, n in counts.items() if n)
        header = f"Summary of {len(messages)} earlier messages ({parts}):"
        budget = max_tokens - self._counter.count(header)
        lines: list[str] = []
        # Walk newest first so the most recent context survives a tight cap
        # (a line too long for what is left is skipped, a shorter older one
        # may still fit), then restore chronological order.
        for message in reversed(messages):
            line = _describe(message)
            cost = self._counter.count("\n" + line)
            if cost <= budget:
                lines.append(line)
                budget -= cost
            if budget < _MIN_LINE_TOKENS:
                break
        text = "\n".join([header, *reversed(lines)])
        return self._counter.truncate(text, max_tokens)
