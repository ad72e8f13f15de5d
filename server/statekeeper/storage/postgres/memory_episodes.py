"""PostgreSQL statements of episodic memory the store composes: duplicate and dimension
checks, the column arrays of a batch insert, listing clauses and vector batches for the index."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.memory import lexical
from statekeeper.core.memory.models import (
    DimensionMismatchError,
    Episode,
    EpisodeFilter,
)
from statekeeper.storage.postgres.memory_facts import (
    Params,
    lock_all,
)
from statekeeper.storage.shared.memory import (
    EPISODE_COLUMNS,
    episode_from_row,
    episode_values,
)

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection


# Class ids of the two-int advisory locks (a key space apart from one-bigint
# keys such as the migration locks): per user's vector dimension, per
# (user, subject, predicate) of facts.
_DIMENSION_LOCK = 0x736B6D64  # "skmd"


async def episode_by_hash(
    conn: Connection, tenant: str, user_id: str, digest: str
) -> Episode | None:
    row = await conn.fetchrow(
        f"SELECT {EPISODE_COLUMNS} FROM memory_episodes WHERE tenant=$1 AND user_id=$2"
        " AND content_hash=$3",
        tenant,
        user_id,
        digest,
    )
    return None if row is None else episode_from_row(row)


async def established_dimensions(
    conn: Connection, tenant: str, user_ids: Sequence[str]
) -> dict[str, int]:
    """The dimension of each user's stored vectors (users without any are
    absent). The users' locks, held to commit, make check-then-insert
    atomic; the read is its own statement so that its snapshot is taken
    after the locks are granted and sees what their last holder committed."""
    if not user_ids:
        return {}
    await lock_all(conn, _DIMENSION_LOCK, [f"{tenant}\x1f{u}" for u in user_ids])
    rows = await conn.fetch(
        "SELECT u.user_id, (SELECT dimension FROM memory_episodes WHERE tenant=$1"
        " AND user_id=u.user_id AND dimension > 0 LIMIT 1) AS dimension"
        " FROM unnest($2::text[]) AS u(user_id)",
        tenant,
        list(user_ids),
    )
    return {row["user_id"]: int(row["dimension"]) for row in rows if row["dimension"]}


def check_dimensions(stored: Sequence[Episode], established: dict[str, int]) -> None:
    """Raises DimensionMismatchError unless every stored vector has its
    user's dimension: the one stored before, else the first in the batch."""
    expected = dict(established)
    for episode in stored:
        if not episode.has_embedding:
            continue
        want = expected.setdefault(episode.user_id, episode.dimension)
        if want != episode.dimension:
            raise DimensionMismatchError("embedding", want, episode.dimension)


def episode_columns_of(episodes: Sequence[Episode]) -> list[list[object]]:
    """The episodes as column arrays, in the order of _INSERT_EPISODES."""
    columns: list[list[object]] = [[] for _ in range(19)]
    for episode in episodes:
        terms = lexical.document_terms(
            episode.user_message, episode.assistant_response, episode.summary
        )
        values = episode_values(episode, terms)
        for column, value in zip(columns, values, strict=True):
            column.append(value)
    return columns


# write_audit's records of a batch of episodes in one statement, in batch
# order, inserted already linked into the tenant's chain (session schema
# migration 10): the commit rewrites none of them. This locks the tenant's
# chain head until commit, so it is meant to be the transaction's last
# statement.
_INSERT_EPISODE_AUDITS = """
SELECT audit_append_linked(array_fill($1::text, ARRAY[n]), array_fill($2::text, ARRAY[n]),
    array_fill($3::text, ARRAY[n]), array_fill($4::text, ARRAY[n]),
    array_fill('episode'::text, ARRAY[n]), $7::text[], array_fill(0::bigint, ARRAY[n]),
    array_fill($5::float8, ARRAY[n]), array_fill($6::text, ARRAY[n]))
FROM cardinality($7::text[]) AS n
"""


async def write_episode_audits(
    conn: Connection,
    tenant: str,
    audit: AuditRecord | None,
    episode_ids: Sequence[str],
    summary: str,
) -> None:
    """`write_audit(conn, tenant, audit, "episode", episode_ids, summary)`
    as one statement instead of one per episode."""
    if audit is None or not episode_ids:
        return
    await conn.execute(
        _INSERT_EPISODE_AUDITS,
        tenant,
        audit.principal,
        audit.service,
        audit.method,
        audit.time,
        summary,
        list(episode_ids),
    )


def embedded_keys_by_user(episodes: Iterable[Episode]) -> dict[str, list[int]]:
    by_user: dict[str, list[int]] = {}
    for episode in episodes:
        if episode.has_embedding:
            by_user.setdefault(episode.user_id, []).append(episode.vector_key)
    return by_user


def episode_clauses(
    tenant: str, user_id: str, episode_filter: EpisodeFilter
) -> tuple[list[str], Params]:
    params = Params(tenant)
    clauses = ["tenant = $1"]
    if user_id:
        clauses.append(f"user_id = {params.add(user_id)}")
    if episode_filter.session_id:
        clauses.append(f"session_id = {params.add(episode_filter.session_id)}")
    if episode_filter.start_time is not None:
        clauses.append(f"occur_time >= {params.add(episode_filter.start_time)}")
    if episode_filter.end_time is not None:
        clauses.append(f"occur_time < {params.add(episode_filter.end_time)}")
    if episode_filter.metadata:
        # jsonb containment of string values is exact equality of each pair;
        # the document is a parameter, so any key or value is safe.
        clauses.append(f"metadata @> {params.add(json.dumps(episode_filter.metadata))}::jsonb")
    return clauses, params
