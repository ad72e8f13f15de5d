"""Synthetic embeddings and bulk loading for the scale tests."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from statekeeper.core.memory.models import Episode, ValueSource, content_hash

Matrix = npt.NDArray[np.float32]


def unit_rows(matrix: Matrix) -> Matrix:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def gaussian(count: int, dimension: int, seed: int) -> Matrix:
    """Isotropic random unit vectors: no structure, the hardest case for
    approximate search and the one with no accidental ties."""
    return unit_rows(
        np.random.default_rng(seed).standard_normal((count, dimension)).astype(np.float32)
    )


def embedding_like(count: int, dimension: int, seed: int, latent: int = 48) -> Matrix:
    """Unit vectors of low intrinsic dimension plus noise, the way sentence
    embeddings are: a random 48-d latent projected to `dimension`."""
    rng = np.random.default_rng(seed)
    projection = rng.standard_normal((latent, dimension)).astype(np.float32)
    points = rng.standard_normal((count, latent)).astype(np.float32) @ projection
    points += 0.3 * rng.standard_normal((count, dimension)).astype(np.float32)
    return unit_rows(points)


def episodes_for(user_id: str, vectors: Matrix, start_time: float, prefix: str) -> list[Episode]:
    """Stored-form episodes (unit vectors, distinct hashes), one per row."""
    return [
        Episode(
            episode_id=f"{prefix}-{user_id}-{row}",
            user_id=user_id,
            session_id="",
            user_message=f"{prefix} {user_id} message {row}",
            assistant_response="",
            summary=f"{prefix} {row}",
            summary_source=ValueSource.CLIENT,
            embedding_source=ValueSource.CLIENT,
            embedding_model="",
            importance=0.5,
            metadata={},
            occur_time=start_time + row,
            create_time=start_time + row,
            content_hash=content_hash(f"{prefix} {user_id} message {row}", ""),
            dimension=int(vectors.shape[1]),
            embedding=vectors[row],
        )
        for row in range(vectors.shape[0])
    ]
