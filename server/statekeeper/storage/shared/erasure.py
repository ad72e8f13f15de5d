"""EraseUser on the SQL backends, written once: each capability's erasure is
a list of bounded DELETE statements (`Step`), which storage/embedded and
storage/postgres run one transaction per batch, each step until a batch
deletes nothing, and the whole list again until a full pass deletes nothing
(bounded by MAX_PASSES). A dry run deletes nothing: it counts each step's
rows with a SELECT (`count_sql`) in one read-only snapshot, so it takes no
lock a writer could wait for, and its counts are the real ones.

Every statement deletes at most `limit` rows, children before their parents
(messages before their session, channels before their checkpoint), and a
parent only once it has no children left (`_childless`): a child written by
the user between the two steps keeps its parent for the next pass instead
of becoming an orphan that nothing selects any more. Everything is selected
by what is stored (blobs: those no channel refers to), never by what an
earlier run remembered, so an erasure interrupted anywhere is finished by
running it again.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from statekeeper.core.privacy.models import USER_METADATA_KEY, ErasureCounts, ErasureSubject

# Full passes over a capability's steps at most: a user still writing can
# keep adding rows. If the last pass still deleted some and a count finds
# rows left, the capability is marked unfinished (ErasureCounts.unfinished)
# and EraseUser answers ABORTED: never an OK that leaves the user's rows.
MAX_PASSES = 8


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
    # Appended to a batch's row selection to lock the rows as selected.
    row_lock: str = ""

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
    row_lock=" FOR UPDATE",
)


@dataclass(frozen=True)
class Step:
    """`DELETE FROM table WHERE <where>`, `limit` rows at a time. `returning`
    names a column whose deleted values the runner collects (vector keys,
    session ids, blob hashes); `after` runs in the same transaction with
    :deleted bound to the batch's row count (not in a dry run). `lock` runs
    first in the batch's transaction (PostgreSQL's row and advisory locks).
    A dry run counts the rows of `dry_where` (default: `where`): the rows
    the real run deletes, seen before any of them is."""

    capability: str
    kind: str
    table: str
    where: str
    params: Mapping[str, object] = field(default_factory=dict)
    returning: str = ""
    after: str = ""
    lock: str = ""
    dry_where: str = ""
    # Rows locked in this order (PostgreSQL), as the writers of the table
    # lock them: a batch taking them in another order could deadlock with
    # a writer holding several (the sessions' group commit).
    order: str = ""

    def count_sql(self, dialect: Dialect) -> tuple[str, list[object]]:
        where = self.dry_where or self.where
        return dialect.bind(f"SELECT count(*) FROM {self.table} WHERE {where}", dict(self.params))

    def lock_sql(self, dialect: Dialect) -> tuple[str, list[object]]:
        return dialect.bind(self.lock, dict(self.params))

    def sql(self, dialect: Dialect, limit: int) -> tuple[str, list[object]]:
        returning = f" RETURNING {self.returning}" if self.returning else ""
        ordered = f" ORDER BY {self.order}" if self.order else ""
        locked = dialect.row_lock if self.order else ""
        text = (
            f"DELETE FROM {self.table} WHERE {dialect.row_ref} IN"
            f" (SELECT {dialect.row_ref} FROM {self.table} WHERE {self.where}{ordered}"
            f" LIMIT :limit{locked}){returning}"
        )
        return dialect.bind(text, {**self.params, "limit": limit})

    def after_sql(self, dialect: Dialect, deleted: int) -> tuple[str, list[object]]:
        return dialect.bind(self.after, {**self.params, "deleted": deleted})


async def run_passes(
    erasure: Erasure,
    steps: Sequence[Step],
    to_the_end: Callable[[Step], Awaitable[None]],
    rows_left: Callable[[], Awaitable[int]],
) -> None:
    """Both backends' passes: each step `to_the_end` (until a batch deletes
    nothing), the whole list again until a pass deletes nothing, MAX_PASSES
    at most. If the last pass still deleted rows and `rows_left` finds some,
    the user is still writing: the capability is marked unfinished."""
    for _ in range(MAX_PASSES):
        before = erasure.counts.total
        for step in steps:
            await to_the_end(step)
        if erasure.counts.total == before:
            return
    if await rows_left():
        erasure.counts.unfinished.add(steps[0].capability)


class Erasure:
    """Counts and the values collected by `returning` steps."""

    def __init__(self, dry_run: bool = False) -> None:
        self.dry_run = dry_run
        self.counts = ErasureCounts()
        self.collected: dict[tuple[str, str], list[object]] = {}

    def values(self, capability: str, kind: str) -> list[object]:
        return self.collected.get((capability, kind), [])


def _prefixed(column: str) -> str:
    """`column` begins with :prefix (no LIKE: prefixes may hold % and _)."""
    return f"substr({column}, 1, length(:prefix)) = :prefix"


def _childless(parent: str, key: str, children: Sequence[str]) -> str:
    """No row of `children` (tables) belongs to the `parent` row by `key`."""
    return " AND ".join(
        f"NOT EXISTS (SELECT 1 FROM {child} c WHERE c.tenant = {parent}.tenant"
        f" AND c.{key} = {parent}.{key})"
        for child in children
    )


def session_steps(tenant: str, subject: ErasureSubject) -> list[Step]:
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    owned = (
        "tenant = :tenant AND session_id IN"
        " (SELECT session_id FROM sessions WHERE tenant = :tenant AND user_id = :user)"
    )
    mine = "tenant = :tenant AND user_id = :user"
    children = ("messages", "session_versions", "append_receipts")
    return [
        Step("sessions", "messages", "messages", owned, p),
        Step("sessions", "versions", "session_versions", owned, p),
        Step("sessions", "append_receipts", "append_receipts", owned, p),
        Step(
            "sessions",
            "sessions",
            "sessions",
            f"{mine} AND {_childless('sessions', 'session_id', children)}",
            p,
            returning="session_id",
            dry_where=mine,
            order="session_id",
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


# The tenant's checkpoint value lock (storage/postgres/checkpoints.py): only
# its exclusive holder may collect blobs; the class (VALUE_LOCK_CLASS) is
# passed in by the PostgreSQL store.
PG_VALUE_LOCK = "SELECT pg_advisory_xact_lock(:value_lock_class, hashtext(:tenant))"
VALUE_LOCK_CLASS_PARAM = "value_lock_class"


def checkpoint_steps(
    dialect: Dialect, tenant: str, subject: ErasureSubject, value_lock_class: int = 0
) -> list[Step]:
    """Every namespace of every execution with a checkpoint tagged with the
    user, then the tenant's blobs that no channel refers to any more (they
    are shared, by content, within a tenant). On PostgreSQL each batch
    locks the user's executions FOR UPDATE (as saves and claims do; writes
    take them FOR SHARE), so no save or write of theirs is in flight while
    their rows go, and the blob batches hold the tenant's value lock
    exclusive (`value_lock_class`), so no concurrent save of anyone
    references a blob being deleted."""
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    tagged = dialect.metadata_user.format(column="metadata")
    executions = f"SELECT execution_id FROM cp_checkpoints WHERE tenant = :tenant AND {tagged}"
    owned = f"tenant = :tenant AND execution_id IN ({executions})"
    lock = ""
    if dialect.name == "postgres":
        lock = (
            "SELECT 1 FROM cp_executions WHERE tenant = :tenant AND execution_id IN"
            f" ({executions}) ORDER BY execution_id FOR UPDATE"
        )
    children = ("cp_writes", "cp_channels", "cp_tombstones", "cp_executions")
    untagged = f"{owned} AND ({tagged}) IS NOT TRUE"
    # No untagged checkpoint of the same execution left either.
    no_untagged = (
        "NOT EXISTS (SELECT 1 FROM cp_checkpoints u WHERE u.tenant = cp_checkpoints.tenant"
        " AND u.execution_id = cp_checkpoints.execution_id AND ("
        + dialect.metadata_user.format(column="u.metadata")
        + ") IS NOT TRUE)"
    )
    tagged_where = f"tenant = :tenant AND {tagged}"
    steps = [
        Step("checkpoints", "writes", "cp_writes", owned, p, lock=lock),
        Step("checkpoints", "channels", "cp_channels", owned, p, lock=lock),
        Step("checkpoints", "tombstones", "cp_tombstones", owned, p, lock=lock),
        Step("checkpoints", "executions", "cp_executions", owned, p, lock=lock),
        # The untagged checkpoints of those executions first: the tagged
        # ones select the executions until they go, last, once nothing of
        # their execution is left.
        Step("checkpoints", "checkpoints", "cp_checkpoints", untagged, p, lock=lock),
        Step(
            "checkpoints",
            "checkpoints",
            "cp_checkpoints",
            f"{tagged_where} AND {_childless('cp_checkpoints', 'execution_id', children)}"
            f" AND {no_untagged}",
            p,
            lock=lock,
            dry_where=tagged_where,
        ),
    ]
    return [*steps, orphan_blob_step(dialect, tenant, subject, value_lock_class)]


def orphan_blob_step(
    dialect: Dialect, tenant: str, subject: ErasureSubject, value_lock_class: int = 0
) -> Step:
    """The tenant's blobs that no channel refers to (selected by state, so
    a retry after an interruption still finds them). A dry run counts those
    that only the user's channels refer to."""
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    tagged = dialect.metadata_user.format(column="metadata")
    lock = ""
    if dialect.name == "postgres":
        p[VALUE_LOCK_CLASS_PARAM] = value_lock_class
        lock = PG_VALUE_LOCK
    unreferenced = (
        "tenant = :tenant AND NOT EXISTS (SELECT 1 FROM cp_channels c"
        " WHERE c.tenant = cp_blobs.tenant AND c.content_hash = cp_blobs.content_hash{other})"
    )
    others = (
        " AND c.execution_id NOT IN (SELECT execution_id FROM cp_checkpoints"
        f" WHERE tenant = :tenant AND {tagged})"
    )
    return Step(
        "checkpoints",
        "blobs",
        "cp_blobs",
        unreferenced.format(other=""),
        p,
        lock=lock,
        dry_where=unreferenced.format(other=others),
    )


def workflow_steps(dialect: Dialect, tenant: str, subject: ErasureSubject) -> list[Step]:
    p: dict[str, object] = {"tenant": tenant, "user": subject.user_id}
    tagged = dialect.document_user.format(column="document")
    owned = (
        "tenant = :tenant AND workflow_id IN (SELECT workflow_id FROM wf_workflows"
        f" WHERE tenant = :tenant AND {tagged})"
    )
    mine = f"tenant = :tenant AND {tagged}"
    children = ("wf_claimable", "wf_transitions")
    return [
        Step("workflows", "claimable_steps", "wf_claimable", owned, p),
        Step("workflows", "transitions", "wf_transitions", owned, p),
        Step(
            "workflows",
            "workflows",
            "wf_workflows",
            f"{mine} AND {_childless('wf_workflows', 'workflow_id', children)}",
            p,
            dry_where=mine,
        ),
    ]


def blackboard_steps(tenant: str, subject: ErasureSubject, bump_epoch: bool = False) -> list[Step]:
    """Entries and their whole history under each key prefix, on every
    board; the tenant's key count follows the entries deleted (relative to
    the stored count). With `bump_epoch` (PostgreSQL), each batch also
    advances bb_tenants.erase_epoch, which bb_commit compares: a replica's
    decisions read (or remembered) before the batch commit nothing and are
    re-read, so no erased entry comes back as a previous value."""
    epoch = ", erase_epoch = erase_epoch + 1" if bump_epoch else ""
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
                after=f"UPDATE bb_tenants SET key_count = key_count - :deleted{epoch}"
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
