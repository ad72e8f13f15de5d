"""What belongs to a user, per capability, and what an erasure removed.

One convention per capability (README "Erasing a user"), plus the extra
selectors a caller may add:

* sessions whose `user_id` is the user;
* memory: episodes and facts whose `user_id` is the user;
* checkpoints: every execution with a checkpoint whose metadata has
  `user_id` equal to the user (LangGraph copies configurable keys there);
  workflows whose metadata has `user_id` equal to the user;
* blackboard: keys beginning `users/<user>/` on any board, plus
  `blackboard_key_prefixes`;
* message bus: the inbox of agent `user:<user>` (dead letters included), plus
  `agent_ids`;
* items: namespaces under ("users", <user>), plus `item_namespaces`.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field

from statekeeper.core.items.models import namespace_path

# The metadata key that tags checkpoints and workflows with a user.
USER_METADATA_KEY = "user_id"
# Rows deleted per statement (each its own transaction): bounds how long an
# erasure holds locks and the SQLite writer.
ERASE_BATCH = 500


@dataclass(frozen=True)
class ErasureSubject:
    """The user to erase and every selector of what belongs to them."""

    user_id: str
    blackboard_key_prefixes: tuple[str, ...] = ()
    agent_ids: tuple[str, ...] = ()
    item_namespaces: tuple[tuple[str, ...], ...] = ()

    @property
    def all_blackboard_prefixes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((f"users/{self.user_id}/", *self.blackboard_key_prefixes)))

    @property
    def all_agent_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((f"user:{self.user_id}", *self.agent_ids)))

    @property
    def item_path_prefixes(self) -> tuple[str, ...]:
        """Stored item paths under each namespace (see core/items/models.py)."""
        namespaces = (("users", self.user_id), *self.item_namespaces)
        return tuple(dict.fromkeys(namespace_path(ns) for ns in namespaces))


@dataclass
class ErasureCounts:
    """Rows (or objects) removed per (capability, kind), e.g.
    ("sessions", "messages") -> 12."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    # Capabilities where the user's records kept arriving: every pass of the
    # erasure found new ones, and some may be left (see UserEraser).
    unfinished: set[str] = field(default_factory=set)

    def add(self, capability: str, kind: str, count: int) -> None:
        key = (capability, kind)
        self.counts[key] = self.counts.get(key, 0) + count

    def merge(self, other: ErasureCounts | Mapping[tuple[str, str], int]) -> None:
        items = other.counts if isinstance(other, ErasureCounts) else other
        for (capability, kind), count in items.items():
            self.add(capability, kind, count)
        if isinstance(other, ErasureCounts):
            self.unfinished |= other.unfinished

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        return ", ".join(
            f"{capability}.{kind}={count}"
            for (capability, kind), count in sorted(self.counts.items())
            if count
        )


def subject_digest(salt: bytes, tenant: str, user_id: str) -> str:
    """The salted hash that names an erased user in the audit trail (never
    the id itself): HMAC-SHA256 keyed by the deployment's erasure salt."""
    message = f"{tenant}\x1f{user_id}".encode()
    return hmac.new(salt, message, hashlib.sha256).hexdigest()
