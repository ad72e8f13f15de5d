"""Offline episode summaries (used when no model endpoint is configured): the first sentence
of the exchange, cut to a token and character budget."""

from __future__ import annotations

import re

SUMMARY_MAX_TOKENS = 60


SUMMARY_MAX_CHARS = 240


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def offline_summary(user_message: str, assistant_response: str) -> str:
    """Deterministic one-line summary: the first sentence of each side."""
    parts = []
    if user_message:
        parts.append("User: " + _first_sentence(user_message))
    if assistant_response:
        parts.append("Assistant: " + _first_sentence(assistant_response))
    return one_line(" | ".join(parts))


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0]


def one_line(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > SUMMARY_MAX_CHARS:
        flat = flat[: SUMMARY_MAX_CHARS - 3].rstrip() + "..."
    return flat
