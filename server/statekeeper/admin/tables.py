"""The tables an export carries, per capability, declared once for both
backends (the table and column names are the same on SQLite and
PostgreSQL).

Each table is filtered by its `tenant` column; a table that belongs to a
user is filtered by `user_id` too, directly or through its session. Tables
that belong to the whole tenant (the blackboard, checkpoints, workflows,
the bus, items, predicates, the audit trail) are left out of a per-user
export.

Not exported, because the target rebuilds them: the audit chain (the
audit trigger recomputes chain_seq, prev_hash and hash of each inserted
row, the same values since the rows are replayed in chain order from an
empty head; on PostgreSQL chain_seq follows the order of the commits, not
of audit_id, so the export sorts by chain_seq),
the lexical index of episodes (SQLite FTS5 rows, written by the import;
PostgreSQL's `lexical` column is generated), the vector-change feed of
PostgreSQL (memory_change_heads, memory_vector_changes), vector index
snapshots and Redis caches, and the schema version tables.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    name: str
    capability: str
    # Columns giving the insertion order to replay (ids that are sequences
    # first, so that they are allocated in the same order).
    order: tuple[str, ...]
    # How rows belong to a user: "" (the whole tenant), "column" (user_id),
    # "session" (through sessions.user_id).
    user: str = ""
    # Columns numbered by a database sequence (PostgreSQL identity, SQLite
    # AUTOINCREMENT): kept as exported, the sequence moved past them.
    identity: str = ""
    # Columns the database computes (never exported nor inserted; an import
    # drops them from files that carry them).
    generated: tuple[str, ...] = ()
    # The export order when it is not the store's allocation order (an SQL
    # ORDER BY list the same on both dialects).
    sort: str = ""

    def where(self, user_filter: bool) -> str:
        """The filter, with {1} for the tenant and {2} for the user."""
        if not user_filter:
            return "tenant = {1}"
        if self.user == "column":
            return "tenant = {1} AND user_id = {2}"
        return (
            "tenant = {1} AND session_id IN"
            " (SELECT session_id FROM sessions WHERE tenant = {1} AND user_id = {2})"
        )


TABLES: tuple[Table, ...] = (
    Table("sessions", "sessions", ("session_id",), user="column"),
    Table("messages", "sessions", ("session_id", "sequence"), user="session"),
    Table("session_versions", "sessions", ("session_id", "version"), user="session"),
    Table("append_receipts", "sessions", ("request_id",), user="session"),
    Table("memory_predicates", "memory", ("name",)),
    Table(
        "memory_episodes",
        "memory",
        ("vector_key",),
        user="column",
        identity="vector_key",
        generated=("lexical",),
    ),
    Table("memory_facts", "memory", ("create_time", "fact_id"), user="column"),
    # The promotion watermarks of sessions feeding memory (a session's row
    # travels with the session, in a per-user export too).
    Table("memory_promotions", "memory", ("session_id",), user="session"),
    Table("cp_executions", "checkpoints", ("execution_id",)),
    Table(
        "cp_checkpoints", "checkpoints", ("execution_id", "namespace", "sequence", "checkpoint_id")
    ),
    Table("cp_blobs", "checkpoints", ("content_hash",)),
    Table(
        "cp_channels",
        "checkpoints",
        ("execution_id", "namespace", "checkpoint_id", "channel"),
        identity="saved",
    ),
    Table(
        "cp_writes",
        "checkpoints",
        ("execution_id", "namespace", "checkpoint_id", "task_id", "write_index"),
    ),
    Table("cp_tombstones", "checkpoints", ("execution_id", "namespace", "checkpoint_id")),
    Table("wf_workflows", "workflows", ("workflow_id",)),
    Table("wf_claimable", "workflows", ("workflow_id", "step_id")),
    Table("wf_transitions", "workflows", ("workflow_id", "revision"), identity="entry"),
    Table("bb_tenants", "blackboard", ("tenant",)),
    Table("bb_log", "blackboard", ("revision",)),
    Table("bb_entries", "blackboard", ("board", "key")),
    Table("bb_versions", "blackboard", ("revision", "board", "key")),
    Table("mb_messages", "bus", ("send_time", "message_id"), identity="seq"),
    Table("mb_dedup", "bus", ("to_agent", "idempotency_key")),
    Table("items", "items", ("path", "key")),
    Table(
        "audit_log",
        "audit",
        ("audit_id",),
        identity="audit_id",
        generated=("chain_seq", "prev_hash", "hash"),
        sort="chain_seq NULLS FIRST, audit_id",
    ),
)


def selected(user: str | None) -> tuple[Table, ...]:
    """The tables of a tenant export, or of one user's."""
    if user is None:
        return TABLES
    return tuple(table for table in TABLES if table.user)
