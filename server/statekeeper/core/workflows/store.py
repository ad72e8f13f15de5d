"""The workflow store contract.

Every backend (embedded SQLite now, PostgreSQL next) implements this, and
tests/contract/test_workflow_store.py checks each. The general
rules of storage/interfaces.py hold (tenant isolation, durability on return,
`StorageUnavailableError`, no partial change). The MUST rules below are what
core/workflows/service.py relies on, and nothing else:

* A workflow is `(tenant, workflow_id)`. Its state is an opaque document
  (a Payload the domain encodes and upgrades) plus a `revision`. The store
  never interprets the document.
* Compare-and-swap: `replace_workflow` stores the new record only if the
  stored revision is still `expected_revision`; otherwise it MUST raise
  `ConcurrentModificationError` and change nothing. This is what makes two
  concurrent claims unable to take the same step, and a completion
  impossible to record twice.
* The claim index (`record.claimable`) and the transition log
  (`record.transitions`) are written in the same transaction as the
  document: the index replaces the previous one, the log is appended to.
* Audit: `create_workflow` and `replace_workflow` store the `AuditRecord`
  they are given in the same transaction as the change, and only if the
  change is stored (not on a failed compare-and-swap).
* PostgreSQL can satisfy all of this with one row per workflow updated
  `WHERE revision = $expected`, a `workflow_claimable` table rewritten per
  save, and `FOR UPDATE SKIP LOCKED` left as an optimisation.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import ConcurrentModificationError, NotFoundError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.workflows.models import Transition, WorkflowRecord, WorkflowStatus


class WorkflowStore(abc.ABC):
    """Durable store of workflow documents, their claim index and log."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Creates or migrates the schema. Idempotent; MUST be called after
        the backend is started and before any other method."""

    @abc.abstractmethod
    async def create_workflow(
        self, tenant: str, record: WorkflowRecord, audit: AuditRecord | None = None
    ) -> None:
        """Stores a new workflow with its index and log. MUST raise
        `AlreadyExistsError` if the tenant has a workflow with that id."""

    @abc.abstractmethod
    async def get_workflow(self, tenant: str, workflow_id: str) -> WorkflowRecord | None:
        """The stored record (document, revision, status, create time), or
        None. `claimable` and `transitions` are left empty."""

    @abc.abstractmethod
    async def list_workflows(
        self,
        tenant: str,
        status: WorkflowStatus | None,
        after: tuple[float, str] | None,
        limit: int,
    ) -> list[WorkflowRecord]:
        """Up to `limit` workflows (of `status` if set), newest first:
        `create_time` descending, then `workflow_id` descending. With `after`
        = (create_time, workflow_id), only those strictly after it."""

    async def replace_workflow(
        self,
        tenant: str,
        record: WorkflowRecord,
        expected_revision: int,
        audit: AuditRecord | None = None,
    ) -> None:
        """Compare-and-swap as stated above. MUST raise `NotFoundError` if
        the workflow does not exist."""
        if await self.swap(tenant, record, expected_revision, audit):
            return
        current = await self.revision_of(tenant, record.workflow_id)
        if current is None:
            raise NotFoundError(f"workflow {record.workflow_id!r} not found")
        raise ConcurrentModificationError(
            f"workflow {record.workflow_id!r} is at revision {current}, not {expected_revision}"
        )

    @abc.abstractmethod
    async def swap(
        self, tenant: str, record: WorkflowRecord, expected: int, audit: AuditRecord | None
    ) -> bool:
        """`replace_workflow`'s change, in one transaction: stores `record`
        with its index, log and audit record if the stored revision is
        `expected`; whether it did."""

    @abc.abstractmethod
    async def revision_of(self, tenant: str, workflow_id: str) -> int | None:
        """The stored revision of the workflow, None if it does not exist."""

    @abc.abstractmethod
    async def find_claimable(
        self,
        tenant: str,
        workflow_id: str | None,
        step_names: Sequence[str],
        now: float,
        limit: int,
    ) -> list[tuple[str, str]]:
        """Up to `limit` (workflow_id, step_id) index entries with
        `claimable_at <= now` (and, if given, of that workflow and of one of
        `step_names`), earliest `claimable_at` first. The domain re-checks
        each against the document: the index only narrows the search."""

    @abc.abstractmethod
    async def find_expired_leases(self, now: float, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` distinct (tenant, workflow_id), of any tenant, with
        an index entry of cause "lease" whose `claimable_at <= now`."""

    @abc.abstractmethod
    async def list_transitions(self, tenant: str, workflow_id: str) -> list[Transition]:
        """The workflow's transition log, oldest first."""

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """Deletes every workflow whose metadata has `user_id` equal to
        `subject.user_id`, with its claim index and transition log, in
        bounded batches. Returns the rows deleted per kind; `dry_run`
        deletes nothing. Idempotent."""
