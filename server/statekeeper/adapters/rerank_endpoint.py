"""Reranker backed by a cross-encoder served over HTTP with the Text
Embeddings Inference (Hugging Face TEI) rerank protocol.

    POST {url}/rerank  {"query": str, "texts": [str, ...], "truncate": true}
    200                [{"index": int, "score": float}, ...]

Only TEI's protocol is spoken (Jina- and Cohere-style endpoints name their
fields differently). No weights ship with the server: the operator runs the
cross-encoder (e.g. `text-embeddings-router --model-id BAAI/bge-reranker-base`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from statekeeper.logs import redact

log = logging.getLogger(__name__)

# A failing endpoint is logged at most this often: every recall asks it.
WARNING_INTERVAL_SECONDS = 60.0


class RerankEndpoint:
    """Scores texts against a query with a TEI `/rerank` endpoint.

    Unlike the embedder, a failure is no error: reranking only reorders
    what recall found, so any failure (network, status, time out, a
    malformed answer) makes `scores` answer None and the recall goes on
    without it. `failures` counts them; a warning is logged at most once a
    minute. One HTTP client is kept for the process."""

    def __init__(
        self,
        base_url: str,
        timeout_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = base_url.rstrip("/") + "/rerank"
        self._timeout = timeout_seconds
        self._client = httpx.AsyncClient(timeout=timeout_seconds)
        self._clock = clock
        self._last_warning = -math.inf
        self.failures = 0

    async def aclose(self) -> None:
        await self._client.aclose()

    async def scores(self, query: str, texts: Sequence[str]) -> list[float] | None:
        """One score per text, in the texts' order (higher: more relevant),
        or None when the endpoint did not answer well in time. The whole
        exchange is bounded, not each read: a slow trickle also times out."""
        if not texts:
            return []
        body = {"query": query, "texts": list(texts), "truncate": True}
        try:
            async with asyncio.timeout(self._timeout):
                response = await self._client.post(self._url, json=body)
                response.raise_for_status()
                return parse_rerank(response.json(), len(texts))
        except (httpx.HTTPError, ValueError, KeyError, TypeError, TimeoutError) as exc:
            self._failed(exc)
            return None

    def _failed(self, exc: Exception) -> None:
        self.failures += 1
        now = self._clock()
        if now - self._last_warning >= WARNING_INTERVAL_SECONDS:
            self._last_warning = now
            log.warning(
                "reranker endpoint %s failed (%s: %s); recall answers without reranking"
                " (%d failures so far; logged at most once a minute)",
                redact(self._url),
                type(exc).__name__,
                redact(str(exc)),  # an HTTP status error quotes the URL
                self.failures,
            )


def parse_rerank(body: Any, expected: int) -> list[float]:
    """The scores of a TEI rerank answer, by input index.

    Raises ValueError unless every index in [0, expected) appears exactly
    once with a finite number as its score."""
    if not isinstance(body, list) or len(body) != expected:
        raise ValueError(f"expected a list of {expected} results")
    scores: list[float | None] = [None] * expected
    for item in body:
        index, score = item["index"], item["score"]
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < expected:
            raise ValueError(f"result index {index!r} is not one of the texts")
        if scores[index] is not None:
            raise ValueError(f"result index {index} appears twice")
        if not isinstance(score, int | float) or isinstance(score, bool):
            raise ValueError(f"score {score!r} is not a number")
        if not math.isfinite(score):
            raise ValueError("a score is not finite")
        scores[index] = float(score)
    return [score for score in scores if score is not None]
