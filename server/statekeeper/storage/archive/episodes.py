"""What both backends share for archiving a user's episodes: the table, the
queries that read a unit's guard and the idle users, and the rows of a
chunk (an export file of that user holding only `memory_episodes`)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statekeeper.admin import transfer
from statekeeper.admin.tables import Table
from statekeeper.storage.archive.chunks import chunk_rows

EPISODES = "memory_episodes"

# What the compare-and-delete guard covers (core/archive/episodes.py:
# guard_of), the episode id, and whether the episode has a vector; {1} is
# the tenant, {2} the user.
GUARD_QUERY = (
    "SELECT vector_key, importance, consolidate_time, derived_fact_ids, episode_id, dimension"
    " FROM memory_episodes WHERE tenant = {1} AND user_id = {2} ORDER BY vector_key"
)

# Users with episodes, after a (tenant, user_id) position, with the time
# their newest episode was recorded ({1}, {2}: the position; {3}: limit).
USERS_QUERY = (
    "SELECT tenant, user_id, max(create_time) FROM memory_episodes"
    " WHERE (tenant, user_id) > ({1}, {2})"
    " GROUP BY tenant, user_id ORDER BY tenant, user_id LIMIT {3}"
)


# The content hashes of the user's hot episodes ({1}: tenant, {2}: user).
HASHES_QUERY = "SELECT content_hash FROM memory_episodes WHERE tenant = {1} AND user_id = {2}"


def dialect(query: str, style: Callable[[int], str]) -> str:
    """A query above with {n} in a dialect's parameter style."""
    return re.sub(r"\{(\d)\}", lambda match: style(int(match.group(1))), query)


def is_unit_table(table: Table) -> bool:
    return table.name == EPISODES


def chunk_episodes(path: Path, tenant: str, user_id: str) -> tuple[list[str], list[list[Any]]]:
    """The chunk's episode rows with their columns, after its checksum and
    its tenant and user were verified against the header (any other table's
    row fails it)."""
    header, rows = chunk_rows(path, tables=(EPISODES,))
    if header.tenant != tenant or header.user != user_id:
        raise transfer.TransferError(f"{path} belongs to another tenant or user")
    columns = next((cols for name, cols, _ in header.tables if name == EPISODES), [])
    return rows.get(EPISODES, (columns, []))


@dataclass(frozen=True)
class ChunkEpisodes:
    """The episode rows of a chunk being restored, with their columns."""

    columns: list[str]
    rows: list[list[Any]]

    def absent(self, hot_hashes: Iterable[Any]) -> list[list[Any]]:
        """The rows to insert. An identical episode recorded while the
        user's were archiving (a write racing the archiver) is the same
        content: it stays, its archived twin is not inserted again."""
        at_hash = self.columns.index("content_hash")
        hot = set(hot_hashes)
        return [row for row in self.rows if row[at_hash] not in hot]

    def vector_keys(self, rows: Iterable[list[Any]]) -> list[int]:
        """The vector keys of those of `rows` that have a vector."""
        at_key, at_dimension = self.columns.index("vector_key"), self.columns.index("dimension")
        return [int(row[at_key]) for row in rows if row[at_dimension] > 0]


async def read_chunk_episodes(path: Path, tenant: str, user_id: str) -> ChunkEpisodes:
    """`chunk_episodes`, parsed in a thread: a large unit must not stall the
    event loop."""
    columns, rows = await asyncio.to_thread(chunk_episodes, path, tenant, user_id)
    return ChunkEpisodes(columns, rows)
