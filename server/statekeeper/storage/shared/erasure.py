"""EraseUser on the SQL backends, written once: each capability's erasure is
a list of bounded DELETE statements (`Step`), which storage/embedded and
storage/postgres run in a loop, one transaction per batch, until each
matches nothing (a dry run runs them all in one transaction rolled back, so
its counts are exactly the real ones).

Every statement deletes at most `limit` rows, children before their parents
(messages before their session, channels before their checkpoint), so an
erasure interrupted between batches leaves what remains still selected by
the same statements: running it again finishes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from statekeeper.core.privacy.models import USER_METADATA_KEY, ErasureCounts, ErasureSubject


@dataclass(frozen=True)
class Dialect:
    """What differs between SQLite and PostgreSQL in these statements."""

    name: str
    row_ref: str  # a row's physical id: rowid / ctid
    # SQL of "the top-level metadata key equals :user" for a JSON text /
    # jsonb column, and of "the document's metadata has it" for a workflow
    # document stored as bytes (only JSON documents are looked into).
    metadata_user: str
    document_user: str

    def bind(self, sql: str, params: dict[str, object]) -> tuple[str, list[object]]:
        """Replaces :name placeholders by the dialect's marks."""
        order: list[str] = []

        def mark(match: re.Match[str]) -> str:
            name = match.group(1)
            if self.name == "sqlite":
                order.append(name)
                return "?"
            if name not in order:
                order.append(name)
            return f"${order.index(name) + 1}"

        text = re.sub(r"(?<!:):([a-z_]+)", mark, sql)
        return text, [params[name] for name in order]


SQLITE = Dialect(
    "sqlite",
    "rowid",
    f"json_extract({{column}}, '$.{USER_METADATA_KEY}') = :user",
    "(CASE WHEN document_type LIKE '%json' AND json_valid(CAST({column} AS TEXT))"
    f" THEN json_extract(CAST({{column}} AS TEXT), '$.metadata.{USER_METADATA_KEY}') END)"
    " = :user",
)
POSTGRES = Dialect(
    "postgres",
    "ctid",
    f"({{column}} ->> '{USER_METADATA_KEY}') = :user",
    "(CASE WHEN document_type LIKE '%json' THEN"
    f" convert_from({{column}}, 'UTF8')::jsonb #>> '{{{{metadata,{USER_METADATA_KEY}}}}}' END)"
    " = :user",
)


@dataclass(frozen=True)
class Step:
    """`DELETE FROM table WHERE <where>`, `limit` rows at a time. `returning`
    names a column whose deleted values the runner collects (vector keys,
    session ids, blob hashes); `after` runs in the same transaction with
    :deleted bound to the batch's row count."""

    capability: str
    kind: str
    table: str
    where: str
    params: Mapping[str, object] = field(default_factory=dict)
    returning: str = ""
    after: str = ""

    def sql(self, dialect: Dialect, limit: int) -> tuple[str, list[object]]:
        returning = f" RETURNING {self.returning}" if self.returning else ""
        text = (
            f"DELETE FROM {self.table} WHERE {dialect.row_ref} IN"
            f" (SELECT {dialect.row_ref} FROM {self.table} WHERE {self.where} LIMIT :limit)"
            f"{returning}"
        )
        return dialect.bind(text, {**self.params, "limit": limit})

    def after_sql(self, dialect: Dialect, deleted: int) -> tuple[str, list[object]]:
        return dialect.bind(self.after, {**self.params, "deleted": deleted})


class Erasure:
    """Counts and the values collected by `returning` steps."""

    def __init__(self) -> None:
        self.counts = ErasureCounts()
        self.collected: dict[tuple[str, str], list[object]] = {}

    def values(self, capability: str, kind: str) -> list[object]:
        return self.collected.get((capability, kind), [])


def _prefixed(column: str) -> str:
    """`column` begins with :prefix (no LIKE: prefixes may hold % and _)."""
    return f"substr({column}, 1, length(:prefix)) = :prefix"


def session_steps(tenant: str, subject: ErasureSubject) -> list[Step]:
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    owned = (
        "tenant = :tenant AND session_id IN"
        " (SELECT session_id FROM sessions WHERE tenant = :tenant AND user_id = :user)"
    )
    return [
        Step("sessions", "messages", "messages", owned, p),
        Step("sessions", "versions", "session_versions", owned, p),
        Step("sessions", "append_receipts", "append_receipts", owned, p),
        Step(
            "sessions",
            "sessions",
            "sessions",
            "tenant = :tenant AND user_id = :user",
            p,
            returning="session_id",
        ),
    ]


def memory_steps(tenant: str, subject: ErasureSubject) -> list[Step]:
    """Episodes (their lexical terms go with them: an FTS5 trigger on SQLite,
    a generated column on PostgreSQL) and facts, current and invalidated.
    Predicates are the tenant's vocabulary, not the user's: kept."""
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    mine = "tenant = :tenant AND user_id = :user"
    return [
        Step("memory", "episodes", "memory_episodes", mine, p, returning="vector_key"),
        Step("memory", "facts", "memory_facts", mine, p),
    ]


def checkpoint_steps(dialect: Dialect, tenant: str, subject: ErasureSubject) -> list[Step]:
    """Every namespace of every execution with a checkpoint tagged with the
    user; blobs are deleted afterwards by `orphan_blob_step` (they are
    shared, by content, within a tenant)."""
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    tagged = dialect.metadata_user.format(column="metadata")
    owned = (
        "tenant = :tenant AND execution_id IN (SELECT execution_id FROM cp_checkpoints"
        f" WHERE tenant = :tenant AND {tagged})"
    )
    return [
        Step("checkpoints", "writes", "cp_writes", owned, p),
        Step("checkpoints", "channels", "cp_channels", owned, p, returning="content_hash"),
        Step("checkpoints", "tombstones", "cp_tombstones", owned, p),
        Step("checkpoints", "executions", "cp_executions", owned, p),
        # The untagged checkpoints of those executions first: the tagged
        # ones select the executions until they go, last.
        Step(
            "checkpoints", "checkpoints", "cp_checkpoints", f"{owned} AND ({tagged}) IS NOT TRUE", p
        ),
        Step("checkpoints", "checkpoints", "cp_checkpoints", f"tenant = :tenant AND {tagged}", p),
    ]


def orphan_blob_step(tenant: str, hashes: Sequence[str], dialect: Dialect) -> Step:
    """The blobs among `hashes` that no channel refers to any more."""
    listed = (
        "content_hash IN (SELECT value FROM json_each(:hashes))"
        if dialect.name == "sqlite"
        else "content_hash = ANY(:hashes::text[])"
    )
    unique = sorted(set(hashes))
    hashes_param: object = json.dumps(unique) if dialect.name == "sqlite" else unique
    return Step(
        "checkpoints",
        "blobs",
        "cp_blobs",
        f"tenant = :tenant AND {listed} AND NOT EXISTS (SELECT 1 FROM cp_channels c"
        " WHERE c.tenant = cp_blobs.tenant AND c.content_hash = cp_blobs.content_hash)",
        {"tenant": tenant, "hashes": hashes_param},
    )


def workflow_steps(dialect: Dialect, tenant: str, subject: ErasureSubject) -> list[Step]:
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    tagged = dialect.document_user.format(column="document")
    owned = (
        "tenant = :tenant AND workflow_id IN (SELECT workflow_id FROM wf_workflows"
        f" WHERE tenant = :tenant AND {tagged})"
    )
    return [
        Step("workflows", "claimable_steps", "wf_claimable", owned, p),
        Step("workflows", "transitions", "wf_transitions", owned, p),
        Step("workflows", "workflows", "wf_workflows", f"tenant = :tenant AND {tagged}", p),
    ]


def blackboard_steps(tenant: str, subject: ErasureSubject) -> list[Step]:
    """Entries and their whole history under each key prefix, on every
    board; the tenant's key count follows the entries deleted."""
    steps: list[Step] = []
    for prefix in subject.all_blackboard_prefixes:
        p: dict[str, object] = {"tenant": tenant, "prefix": prefix}
        where = f"tenant = :tenant AND {_prefixed('key')}"
        steps.append(
            Step(
                "blackboard",
                "entries",
                "bb_entries",
                where,
                p,
                after="UPDATE bb_tenants SET key_count = key_count - :deleted"
                " WHERE tenant = :tenant",
            )
        )
        steps.append(Step("blackboard", "versions", "bb_versions", where, p))
    return steps


def messagebus_steps(tenant: str, subject: ErasureSubject) -> list[Step]:
    steps: list[Step] = []
    for agent in subject.all_agent_ids:
        p: dict[str, object] = {"tenant": tenant, "agent": agent}
        where = "tenant = :tenant AND to_agent = :agent"
        steps.append(Step("messagebus", "messages", "mb_messages", where, p))
        steps.append(Step("messagebus", "dedup_keys", "mb_dedup", where, p))
    return steps


def item_steps(tenant: str, subject: ErasureSubject) -> list[Step]:
    return [
        Step(
            "items",
            "items",
            "items",
            f"tenant = :tenant AND {_prefixed('path')}",
            {"tenant": tenant, "prefix": prefix},
        )
        for prefix in subject.item_path_prefixes
    ]
