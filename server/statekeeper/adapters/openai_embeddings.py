"""Embedder backed by an OpenAI-compatible `/embeddings` endpoint."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from statekeeper.core.memory.models import DependencyUnavailableError, Vector

log = logging.getLogger(__name__)


class OpenAIEmbedder:
    """POSTs `{"model", "input": [texts]}` to `{base_url}/embeddings`.

    Unlike the summarizer there is no offline fallback: vectors of another
    model would not be comparable with the stored ones. Any failure (network,
    status, a malformed or non-finite answer) raises
    `DependencyUnavailableError` with dependency "embedder" (UNAVAILABLE).
    One HTTP client is kept for the process: recall embeds every query.
    """

    def __init__(
        self, base_url: str, model: str, api_key: str, timeout_seconds: float = 20.0
    ) -> None:
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_seconds, headers=headers)

    @property
    def model(self) -> str:
        return self._model

    async def aclose(self) -> None:
        await self._client.aclose()

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        try:
            response = await self._client.post(
                self._url, json={"model": self._model, "input": list(texts)}
            )
            response.raise_for_status()
            return parse_embeddings(response.json(), len(texts))
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            log.warning("embedder endpoint failed: %s", exc)
            raise DependencyUnavailableError(
                "embedder", f"the embedder cannot be reached: {type(exc).__name__}"
            ) from exc


def parse_embeddings(body: Any, expected: int) -> list[Vector]:
    """The vectors of an OpenAI embeddings response, in input order.

    Raises ValueError unless there is one finite vector per input, all of
    the same non-zero dimension.
    """
    items = body["data"]
    if not isinstance(items, list) or len(items) != expected:
        raise ValueError(f"expected {expected} embeddings, got {len(items)}")
    ordered = sorted(items, key=lambda item: int(item.get("index", 0)))
    vectors: list[Vector] = []
    for item in ordered:
        values = item["embedding"]
        if not isinstance(values, list) or not values:
            raise ValueError("an embedding is not a non-empty list")
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            raise ValueError("an embedding holds a non-number or non-finite value")
        vectors.append(np.asarray(values, dtype=np.float32))
    if len({v.shape[0] for v in vectors}) > 1:
        raise ValueError("embeddings of different dimensions in one response")
    return vectors
