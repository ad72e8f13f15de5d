"""Summarizer backed by an OpenAI-compatible chat completions endpoint."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import httpx

from statekeeper.core.sessions.models import Message
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer, Summary
from statekeeper.core.tokens import TokenCounter

log = logging.getLogger(__name__)

_INSTRUCTIONS = (
    "Summarize the conversation below for an AI agent that will continue it. "
    "Keep facts, decisions, open tasks and tool results. Be brief."
)


class OpenAIChatSummarizer:
    """POSTs the transcript to `{base_url}/chat/completions`.

    Any failure (network, status, malformed JSON) is logged and answered by
    the offline extractive summarizer, flagged as a fallback, so a model
    outage never fails a context window request.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str,
        counter: TokenCounter,
        timeout_seconds: float = 20.0,
    ) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._counter = counter
        self._fallback = ExtractiveSummarizer(counter)
        self._timeout = timeout_seconds

    async def summarize(self, messages: Sequence[Message], max_tokens: int) -> Summary:
        if max_tokens <= 0 or not messages:
            return Summary("", is_fallback=False)
        transcript = "\n".join(f"{m.role.wire_name}: {m.content}" for m in messages)
        body = {
            "model": self._model,
            "max_tokens": max_tokens,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": _INSTRUCTIONS},
                {"role": "user", "content": transcript},
            ],
        }
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as client:
                response = await client.post(self._url, json=body, headers=self._headers)
                response.raise_for_status()
                text = str(response.json()["choices"][0]["message"]["content"]).strip()
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            log.warning("summarizer endpoint failed, using offline fallback: %s", exc)
            return await self._fallback.summarize(messages, max_tokens)
        # The model may overrun max_tokens in our count; the cap is a promise.
        return Summary(self._counter.truncate(text, max_tokens), is_fallback=False)
