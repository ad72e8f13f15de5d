"""The WorkflowStore contract (core/workflows/store.py), on every backend:
the embedded store, and the PostgreSQL one on a fresh database per test
(skipped with the reason printed when the test services are not configured)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper.core.errors import AlreadyExistsError, ConcurrentModificationError, NotFoundError
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.core.schema_upgrades import Payload
from statekeeper.core.workflows.models import (
    ClaimableStep,
    Transition,
    WorkflowRecord,
    WorkflowStatus,
)
from statekeeper.core.workflows.store import WorkflowStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.workflows import EmbeddedWorkflowStore
from statekeeper.storage.postgres.workflows import PostgresWorkflowStore
from tests.contract.fresh_postgres import fresh_postgres


@dataclass
class Backend:
    """A started store, the same store as another server replica sees it
    (its own connections; the same object where the backend has no
    replicas), how to read the audit trail, and how to close it all."""

    store: WorkflowStore
    replica: WorkflowStore
    audit_trail: Callable[[str], Awaitable[list[AuditRecord]]]
    close: Callable[[], Awaitable[None]]


async def _embedded(tmp_path: Path) -> Backend:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedWorkflowStore(storage)
    await store.start()

    async def trail(tenant: str) -> list[AuditRecord]:
        return list(reversed(await storage.audit.list_audit(tenant, AuditFilter(), 0, 1000)))

    return Backend(store, store, trail, storage.close)


async def _postgres(tmp_path: Path) -> Backend:
    database = await fresh_postgres()
    try:
        store = PostgresWorkflowStore(database.storage)
        replica = PostgresWorkflowStore(await database.replica())
        # Both start at once, as replicas booting together: one migrates.
        await asyncio.gather(store.start(), replica.start())
    except BaseException:
        await database.close()
        raise
    return Backend(store, replica, database.audit_trail, database.close)


StoreFactory = Callable[[Path], Awaitable[Backend]]


WORKFLOW_BACKENDS: dict[str, StoreFactory] = {"embedded": _embedded, "postgres": _postgres}


@pytest.fixture(params=sorted(WORKFLOW_BACKENDS))
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    created = await WORKFLOW_BACKENDS[request.param](tmp_path)
    yield created
    await created.close()


@pytest.fixture
def store(backend: Backend) -> WorkflowStore:
    return backend.store


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def record(
    workflow_id: str,
    revision: int = 1,
    *,
    create_time: float = 100.0,
    status: WorkflowStatus = WorkflowStatus.RUNNING,
    claimable: tuple[ClaimableStep, ...] = (),
    transitions: tuple[Transition, ...] = (),
) -> WorkflowRecord:
    return WorkflowRecord(
        workflow_id=workflow_id,
        status=status,
        create_time=create_time,
        revision=revision,
        document=Payload("application/json", 3, f'{{"r":{revision}}}'.encode()),
        claimable=claimable,
        transitions=transitions,
    )


async def test_create_get_and_duplicate(store: WorkflowStore, tenant: str) -> None:
    await store.create_workflow(tenant, record("w1"))
    got = await store.get_workflow(tenant, "w1")
    assert got is not None and got.document.data == b'{"r":1}' and got.revision == 1
    with pytest.raises(AlreadyExistsError):
        await store.create_workflow(tenant, record("w1"))
    assert await store.get_workflow(tenant + "x", "w1") is None


async def test_replace_is_compare_and_swap(store: WorkflowStore, tenant: str) -> None:
    await store.create_workflow(tenant, record("w1"))
    await store.replace_workflow(tenant, record("w1", 2), expected_revision=1)
    with pytest.raises(ConcurrentModificationError):
        await store.replace_workflow(tenant, record("w1", 3), expected_revision=1)
    with pytest.raises(NotFoundError):
        await store.replace_workflow(tenant, record("nope", 2), expected_revision=1)
    got = await store.get_workflow(tenant, "w1")
    assert got is not None and got.revision == 2


async def test_concurrent_replacements_only_one_wins(store: WorkflowStore, tenant: str) -> None:
    await store.create_workflow(tenant, record("w1"))
    outcomes = await asyncio.gather(
        *(store.replace_workflow(tenant, record("w1", 2), 1) for _ in range(8)),
        return_exceptions=True,
    )
    assert sum(outcome is None for outcome in outcomes) == 1
    assert all(isinstance(outcome, ConcurrentModificationError) for outcome in outcomes if outcome)


async def test_claim_index_is_replaced_and_filtered(store: WorkflowStore, tenant: str) -> None:
    first = (ClaimableStep("a", "fetch", 10.0, "ready"), ClaimableStep("b", "parse", 50.0, "retry"))
    await store.create_workflow(tenant, record("w1", claimable=first))
    assert await store.find_claimable(tenant, None, [], 20.0, 10) == [("w1", "a")]
    assert await store.find_claimable(tenant, "w1", ["parse"], 60.0, 10) == [("w1", "b")]
    assert await store.find_claimable(tenant, "other", [], 60.0, 10) == []
    await store.replace_workflow(tenant, record("w1", 2), 1)
    assert await store.find_claimable(tenant, None, [], 60.0, 10) == []


async def test_expired_leases_are_found_across_tenants(store: WorkflowStore, tenant: str) -> None:
    lease = (ClaimableStep("a", "a", 10.0, "lease"),)
    await store.create_workflow(tenant, record("w1", claimable=lease))
    await store.create_workflow(tenant + "b", record("w2", claimable=lease))
    found = await store.find_expired_leases(11.0, 100)
    assert {(tenant, "w1"), (tenant + "b", "w2")} <= set(found)
    assert (tenant, "w1") not in await store.find_expired_leases(9.0, 100)


async def test_transition_log_appends_in_order(store: WorkflowStore, tenant: str) -> None:
    await store.create_workflow(tenant, record("w1", transitions=(Transition("", "START", 0),)))
    claim = Transition("a", "CLAIM", 1, "lease-1", "worker", 5.0)
    await store.replace_workflow(tenant, record("w1", 2, transitions=(claim,)), 1)
    assert await store.list_transitions(tenant, "w1") == [Transition("", "START", 0), claim]


async def test_list_newest_first_with_status_and_cursor(store: WorkflowStore, tenant: str) -> None:
    for index in range(4):
        status = WorkflowStatus.SUCCESS if index % 2 else WorkflowStatus.RUNNING
        await store.create_workflow(
            tenant, record(f"w{index}", create_time=100.0 + index, status=status)
        )
    listed = await store.list_workflows(tenant, None, None, 10)
    assert [r.workflow_id for r in listed] == ["w3", "w2", "w1", "w0"]
    running = await store.list_workflows(tenant, WorkflowStatus.RUNNING, None, 10)
    assert [r.workflow_id for r in running] == ["w2", "w0"]
    after = await store.list_workflows(tenant, None, (102.0, "w2"), 10)
    assert [r.workflow_id for r in after] == ["w1", "w0"]


async def test_audit_is_stored_with_each_change_and_only_then(
    backend: Backend, tenant: str
) -> None:
    def audit(summary: str) -> AuditRecord:
        return AuditRecord("", "key", "svc", "M", "workflow", "w1", 0, 1.0, summary)

    await backend.store.create_workflow(tenant, record("w1"), audit("start"))
    with pytest.raises(AlreadyExistsError):
        await backend.store.create_workflow(tenant, record("w1"), audit("refused"))
    await backend.store.replace_workflow(tenant, record("w1", 2), 1, audit("claim"))
    with pytest.raises(ConcurrentModificationError):
        await backend.store.replace_workflow(tenant, record("w1", 3), 1, audit("refused"))
    trail = [(r.summary, r.revision) for r in await backend.audit_trail(tenant)]
    assert trail == [("start", 1), ("claim", 2)]


async def test_replicas_replacing_one_revision_only_one_wins(backend: Backend, tenant: str) -> None:
    stores = [backend.store, backend.replica]
    await backend.store.create_workflow(tenant, record("w1", transitions=(Transition("", "S", 0),)))
    for revision in range(2, 7):
        step = Transition(f"s{revision}", "COMPLETE", 1)
        outcomes = await asyncio.gather(
            *(
                stores[i % 2].replace_workflow(
                    tenant, record("w1", revision, transitions=(step,)), revision - 1
                )
                for i in range(6)
            ),
            return_exceptions=True,
        )
        assert sum(outcome is None for outcome in outcomes) == 1, revision
        assert all(isinstance(o, ConcurrentModificationError) for o in outcomes if o), revision
    log = await backend.replica.list_transitions(tenant, "w1")
    assert [entry.step_id for entry in log] == ["", "s2", "s3", "s4", "s5", "s6"]


def tagged(workflow_id: str, user: str, **fields: Any) -> WorkflowRecord:
    document = json.dumps({"workflow_id": workflow_id, "metadata": {"user_id": user}})
    return dataclasses.replace(
        record(workflow_id, **fields),
        document=Payload("application/vnd.statekeeper.workflow-state+json", 1, document.encode()),
    )


async def test_erase_user_deletes_tagged_workflows(store: WorkflowStore, tenant: str) -> None:
    other = tenant + "b"
    subject = ErasureSubject("u1")
    lease = (ClaimableStep("a", "a", 10.0, "lease"),)
    start = (Transition("", "START", 0),)
    await store.create_workflow(tenant, tagged("w1", "u1", claimable=lease, transitions=start))
    await store.create_workflow(tenant, tagged("w2", "u1"))
    await store.create_workflow(tenant, tagged("w3", "u2", claimable=lease))
    await store.create_workflow(tenant, record("w4"))  # untagged
    opaque = dataclasses.replace(
        record("w5"), document=Payload("application/octet-stream", 1, b"\xff")
    )
    await store.create_workflow(tenant, opaque)  # not JSON: never looked into
    await store.create_workflow(other, tagged("w1", "u1"))
    dry = await store.erase_user(tenant, subject, dry_run=True)
    assert dry.counts == {
        ("workflows", "workflows"): 2,
        ("workflows", "claimable_steps"): 1,
        ("workflows", "transitions"): 1,
    }
    assert await store.get_workflow(tenant, "w1") is not None
    real = await store.erase_user(tenant, subject, dry_run=False)
    assert real.counts == dry.counts
    assert await store.get_workflow(tenant, "w1") is None
    assert await store.get_workflow(tenant, "w2") is None
    assert await store.list_transitions(tenant, "w1") == []
    assert await store.find_claimable(tenant, None, [], 20.0, 10) == [("w3", "a")]
    for workflow_id in ("w3", "w4", "w5"):
        assert await store.get_workflow(tenant, workflow_id) is not None
    assert await store.get_workflow(other, "w1") is not None
    assert (await store.erase_user(tenant, subject, dry_run=False)).total == 0
