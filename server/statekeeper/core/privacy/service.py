"""EraseUser: removes every trace of a user from every capability of a
tenant, then leaves one audit record with the counts and a salted hash of
the user id (never the id).

Each capability's store erases its own rows (`erase_user` in each store
contract) in bounded batches of their own transactions; this service calls
them in turn and sums the counts. The call returns only when everything is
gone: a capability the user kept writing to through every pass is erased as
far as it went, the others all the same, and then the call fails with
ErasureIncompleteError naming it. If it fails half-way (the store became
unavailable), what remains is found by the same selectors, so calling it
again finishes the job: it is idempotent, and a repeat on an erased user
deletes nothing.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from statekeeper.core.audit.service import Actor, record_for
from statekeeper.core.audit.store import AuditStore
from statekeeper.core.errors import ErasureIncompleteError, InvalidArgumentError
from statekeeper.core.items.models import namespace_path
from statekeeper.core.limits import Limits
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject, subject_digest
from statekeeper.core.validation import check_id

log = logging.getLogger(__name__)

ERASED_ENTITY = "user"
# The environment variable holding the deployment's erasure salt: the same
# salt on every replica makes the audit record's hash comparable (an auditor
# who knows the salt can check that a given user was erased). Without it,
# each process draws a random salt, and the record proves that an erasure
# happened, not of whom.
SALT_ENVIRONMENT = "STATEKEEPER_ERASURE_SALT"
MAX_SELECTORS = 16


class ErasableStore(Protocol):
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts: ...


@dataclass(frozen=True)
class Participant:
    """One store to erase from, and what to do in this process afterwards
    (e.g. drop the user's vector index and its snapshot)."""

    name: str
    store: ErasableStore
    after: Callable[[str, ErasureSubject], Awaitable[None]] | None = None


# Archived objects (issue: "erasing a user also removes their archived
# objects"): an archive capability adds its Participant here, like any store.
ArchiveHook = Participant


def erasure_salt() -> bytes:
    configured = os.environ.get(SALT_ENVIRONMENT, "")
    return configured.encode() if configured else os.urandom(32)


@dataclass(frozen=True)
class ErasureResult:
    counts: ErasureCounts
    user_hash: str
    dry_run: bool


def _still_written(capabilities: list[str]) -> ErasureIncompleteError:
    return ErasureIncompleteError(
        f"new records of the user kept arriving in {', '.join(capabilities)} through every"
        " pass; everything found is erased: stop the user's writers and call EraseUser again",
        capability=",".join(capabilities),
    )


class UserEraser:
    def __init__(
        self,
        participants: Sequence[Participant],
        audit: AuditStore,
        limits: Limits,
        salt: bytes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._participants = list(participants)
        self._audit = audit
        self._limits = limits
        self._salt = salt if salt is not None else erasure_salt()
        self._clock = clock

    def add(self, participant: Participant) -> None:
        self._participants.append(participant)

    async def erase(self, actor: Actor, subject: ErasureSubject, dry_run: bool) -> ErasureResult:
        self._check(subject)
        tenant = actor.tenant
        counts = ErasureCounts()
        for participant in self._participants:
            counts.merge(await participant.store.erase_user(tenant, subject, dry_run))
            if not dry_run and participant.after is not None:
                await participant.after(tenant, subject)
        digest = subject_digest(self._salt, tenant, subject.user_id)
        if not dry_run:
            await self._record(actor, digest, counts)
        if counts.unfinished:
            # Every capability was erased as far as it could be; the one(s)
            # the user kept writing to may hold new rows: not done, say so.
            raise _still_written(sorted(counts.unfinished))
        return ErasureResult(counts, digest, dry_run)

    async def _record(self, actor: Actor, digest: str, counts: ErasureCounts) -> None:
        """The audit record of an erasure (a partial one included: it deleted)."""
        found = counts.summary() or "nothing found"
        summary = f"erased user: {found}"
        if counts.unfinished:
            summary += f" (incomplete: still written: {', '.join(sorted(counts.unfinished))})"
        record = record_for(actor, ERASED_ENTITY, digest, 0, self._clock(), summary)
        await self._audit.record_audit(record)
        log.info(
            "erased a user",
            extra={"tenant": actor.tenant, "user_hash": digest, "rows": counts.total},
        )

    def _check(self, subject: ErasureSubject) -> None:
        check_id("user_id", subject.user_id, self._limits)
        for name, values in (
            ("blackboard_key_prefixes", subject.blackboard_key_prefixes),
            ("agent_ids", subject.agent_ids),
            ("item_namespaces", subject.item_namespaces),
        ):
            if len(values) > MAX_SELECTORS:
                raise InvalidArgumentError(name, f"has more than {MAX_SELECTORS} entries")
        for index, prefix in enumerate(subject.blackboard_key_prefixes):
            if not prefix:
                raise InvalidArgumentError(f"blackboard_key_prefixes[{index}]", "is empty")
        for index, agent in enumerate(subject.agent_ids):
            check_id(f"agent_ids[{index}]", agent, self._limits)
        for index, namespace in enumerate(subject.item_namespaces):
            if not namespace or not all(namespace):
                raise InvalidArgumentError(
                    f"item_namespaces[{index}]", "must have at least one label, none empty"
                )
            namespace_path(namespace)
