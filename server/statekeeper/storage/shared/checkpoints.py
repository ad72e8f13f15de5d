"""Checkpoints: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

from statekeeper.core.checkpoints.models import (
    RemovalCounts,
)


def add(left: RemovalCounts, right: RemovalCounts) -> RemovalCounts:
    return RemovalCounts(
        left.checkpoints + right.checkpoints,
        left.writes + right.writes,
        left.channel_values + right.channel_values,
    )
