"""Fact extraction through an OpenAI-compatible chat completions endpoint.

The model is asked for JSON: {"facts": [{"subject", "predicate", "object",
"confidence"}]}. The answer is validated before anything is stored: a
response that is not that shape (not JSON, no "facts" list) is rejected as a
whole and the offline extractor answers instead (source FALLBACK); inside a
valid response, an item with a missing or empty field, a non-string value,
an over-long value or a confidence outside [0, 1] is dropped and logged.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

import httpx

from statekeeper.core.memory.models import FactDraft, ValueSource
from statekeeper.core.memory.semantic import Extraction, PatternFactExtractor

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Extract durable facts from the text as knowledge triples. Answer with JSON"
    ' only: {"facts": [{"subject": str, "predicate": str, "object": str,'
    ' "confidence": number between 0 and 1}]}. Use short snake_case predicates'
    ' (lives_in, works_at, likes). Use "user" for the person speaking in first'
    ' person. Answer {"facts": []} if there is nothing durable.'
)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


class InvalidExtractionError(ValueError):
    """The model's answer is not the JSON shape asked for."""


class OpenAIFactExtractor:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str,
        max_facts: int = 50,
        max_field_chars: int = 2048,
        timeout_seconds: float = 30.0,
    ) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout_seconds
        self._max_facts = max_facts
        self._max_field_chars = max_field_chars
        self._fallback = PatternFactExtractor(max_facts)

    async def extract(self, text: str) -> Extraction:
        body = {
            "model": self._model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": text},
            ],
        }
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as client:
                response = await client.post(self._url, json=body, headers=self._headers)
                response.raise_for_status()
                content = response.json()["choices"][0]["message"]["content"]
            facts = self.validate(content)
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            log.warning("fact extraction endpoint failed, using offline extractor: %s", exc)
            return await self._fallback.extract(text)
        return Extraction(facts, ValueSource.MODEL)

    def validate(self, content: Any) -> list[FactDraft]:
        """The facts of a model answer; raises InvalidExtractionError if its shape
        is wrong, drops (and logs) individual invalid items."""
        if not isinstance(content, str):
            raise InvalidExtractionError("the answer is not text")
        try:
            parsed = json.loads(_FENCE.sub("", content.strip()))
        except json.JSONDecodeError as exc:
            raise InvalidExtractionError(f"the answer is not JSON: {exc}") from exc
        items = parsed.get("facts") if isinstance(parsed, dict) else None
        if not isinstance(items, list):
            raise InvalidExtractionError('the answer has no "facts" list')
        facts: list[FactDraft] = []
        for position, item in enumerate(items[: self._max_facts]):
            draft = self._draft(item)
            if draft is None:
                log.warning("dropping invalid extracted fact #%d: %.200r", position, item)
                continue
            facts.append(draft)
        return facts

    def _draft(self, item: Any) -> FactDraft | None:
        if not isinstance(item, dict):
            return None
        fields = [item.get(name) for name in ("subject", "predicate", "object")]
        texts = [v.strip() for v in fields if isinstance(v, str) and v.strip()]
        if len(texts) != len(fields) or any(len(v) > self._max_field_chars for v in texts):
            return None
        confidence = item.get("confidence", 1.0)
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            return None
        if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
            return None
        subject, predicate, obj = texts
        return FactDraft(subject, predicate, obj, confidence=float(confidence))
