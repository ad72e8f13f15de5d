"""What every PostgreSQL schema of the server is made of: versioned migrations, and the
error a server raises when the database is older than it (schemas.py applies them)."""

from __future__ import annotations
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
import asyncpg
import asyncpg.pool
from statekeeper import logs
from statekeeper.core.audit.models import AuditFilter, AuditRecord, ChainLink
from statekeeper.core.audit.store import AuditStore
from statekeeper.core.errors import (
    AlreadyExistsError,
    ConcurrentModificationError,
    NotFoundError,
    StatekeeperError,
    StorageUnavailableError,
)
from statekeeper.core.sessions.context_window import WindowTail
from statekeeper.core.sessions.models import (
    AppendReceipt,
    Message,
    MessageMeta,
    SessionChange,
    SessionCursor,
    SessionFilter,
    SessionRecord,
    SessionVersion,
)
from statekeeper.core.sessions.store import SessionStore
from statekeeper.storage.codec import record_from_json, record_to_json
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.sql import (
    AUDIT_COLUMNS,
    MESSAGE_COLUMNS,
    MESSAGE_INSERT_COLUMNS,
    WINDOW_META_COLUMNS,
    audit_from_row,
    audit_query,
    audit_values,
    message_from_row,
    message_values,
    meta_from_row,
    postgres_mark,
    session_list_query,
    version_from_row,
)
if TYPE_CHECKING:
    Connection = (
        asyncpg.Connection[asyncpg.Record] | asyncpg.pool.PoolConnectionProxy[asyncpg.Record]
    )


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


class SchemaOutOfDateError(StatekeeperError):
    """The database schema is older than this server needs."""

    code = "FAILED_PRECONDITION"
    reason = "FAILED_PRECONDITION"
