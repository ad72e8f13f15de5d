"""Schema versions: the upgrade registry, and stored fixtures of older versions
(tests/fixtures/checkpoints/) read through the real stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statekeeper.core.audit.service import Actor
from statekeeper.core.checkpoints.models import (
    ChannelEntry,
    CheckpointDraft,
    CheckpointLimits,
    ReadOptions,
)
from statekeeper.core.checkpoints.service import CheckpointManager
from statekeeper.core.schema_upgrades import (
    WORKFLOW_STATE_CONTENT_TYPE,
    WORKFLOW_STATE_VERSION,
    Payload,
    PayloadUpgradeError,
    UpgradeRegistry,
    builtin_registry,
)
from statekeeper.core.tenancy import Principal
from statekeeper.core.workflows.codec import workflow_from_document
from statekeeper.core.workflows.models import (
    ClaimRequest,
    StepStatus,
    WorkflowLimits,
    WorkflowStatus,
)
from statekeeper.core.workflows.service import WorkflowManager
from statekeeper.storage.embedded.checkpoints import EmbeddedCheckpointStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.embedded.workflows import EmbeddedWorkflowStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoints"
T = "tenant-a"
A = Actor(Principal(T, "key-test"), "statekeeper.v1.CheckpointService", "Test")


def fixture(version: int) -> Payload:
    data = (FIXTURES / f"workflow_state_v{version}.json").read_bytes()
    return Payload(WORKFLOW_STATE_CONTENT_TYPE, version, data)


def counter_registry() -> UpgradeRegistry:
    """A chain 1 -> 2 -> 3 over JSON objects, each step leaving a trace."""
    registry = UpgradeRegistry()

    def step(name: str) -> object:
        def upgrade(data: bytes) -> bytes:
            document = json.loads(data)
            document["trail"] = [*document.get("trail", []), name]
            return json.dumps(document).encode()

        return upgrade

    registry.register("test/state", 1, step("1->2"))  # type: ignore[arg-type]
    registry.register("test/state", 2, step("2->3"))  # type: ignore[arg-type]
    return registry


# ----- the registry -------------------------------------------------------------------------


def test_chain_runs_every_step_in_order() -> None:
    registry = counter_registry()
    upgraded = registry.upgrade(Payload("test/state", 1, b"{}"))
    assert upgraded.schema_version == 3
    assert json.loads(upgraded.data) == {"trail": ["1->2", "2->3"]}
    from_two = registry.upgrade(Payload("test/state", 2, b"{}"))
    assert json.loads(from_two.data) == {"trail": ["2->3"]}


@pytest.mark.parametrize(
    "payload",
    [
        Payload("test/state", 0, b"raw"),  # unversioned: never migrated
        Payload("test/state", 3, b"raw"),  # current
        Payload("test/state", 9, b"raw"),  # newer than this server knows
        Payload("other/type", 1, b"raw"),  # no chain registered
    ],
)
def test_payloads_outside_a_chain_pass_unchanged(payload: Payload) -> None:
    assert counter_registry().upgrade(payload) is payload


def test_broken_upgrades_are_reported_not_crashed() -> None:
    registry = counter_registry()
    with pytest.raises(PayloadUpgradeError) as bad:
        registry.upgrade(Payload("test/state", 1, b"not json"))
    assert bad.value.metadata["condition"] == "SCHEMA_UPGRADE_FAILED"
    gap = UpgradeRegistry()
    gap.register("gap", 2, lambda data: data)
    with pytest.raises(PayloadUpgradeError):
        gap.upgrade(Payload("gap", 1, b""))


def test_registration_is_checked() -> None:
    registry = counter_registry()
    with pytest.raises(ValueError):
        registry.register("test/state", 1, lambda data: data)
    with pytest.raises(ValueError):
        registry.register("test/state", 0, lambda data: data)


def test_content_hash_covers_type_version_and_data() -> None:
    base = Payload("a", 1, b"x")
    assert base.content_hash() == Payload("a", 1, b"x").content_hash()
    assert (
        len(
            {
                base.content_hash(),
                Payload("a", 2, b"x").content_hash(),
                Payload("b", 1, b"x").content_hash(),
                Payload("a", 1, b"y").content_hash(),
                Payload("a1", 0, b"x").content_hash(),
            }
        )
        == 5
    )


# ----- stored workflow fixtures ---------------------------------------------------------------


def test_workflow_v1_fixture_upgrades_to_the_current_version() -> None:
    upgraded = builtin_registry().upgrade(fixture(1))
    assert upgraded.schema_version == WORKFLOW_STATE_VERSION == 3
    workflow = workflow_from_document(json.loads(upgraded.data))
    fetch, parse, load = workflow.steps
    assert fetch.max_retries == 2 and fetch.backoff.initial_seconds == 5.0
    assert fetch.backoff.multiplier == 1.0 and fetch.backoff.max_seconds == 5.0
    assert fetch.outputs == Payload("application/json", 0, b'{"rows": 3}')
    assert parse.status == StepStatus.RETRYING and parse.max_retries == 3
    assert [e.message for e in parse.errors] == ["parser crashed on row 2"]
    assert parse.errors[0].retryable and parse.errors[0].attempt == 1
    assert load.errors == () and load.depends_on == ("parse",)


def test_workflow_v2_fixture_upgrades_to_the_current_version() -> None:
    upgraded = builtin_registry().upgrade(fixture(2))
    workflow = workflow_from_document(json.loads(upgraded.data))
    render, mail = workflow.steps
    assert workflow.status == WorkflowStatus.FAILED
    assert render.backoff.multiplier == 4.0
    assert [(e.message, e.retryable) for e in render.errors] == [("template missing", False)]
    assert mail.status == StepStatus.CANCELLED


async def test_a_stored_v1_workflow_is_read_and_resumed(tmp_path: Path) -> None:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedWorkflowStore(storage)
    await store.start()
    old = fixture(1)
    await storage.run(
        lambda db: db.execute(
            "INSERT INTO wf_workflows (tenant, workflow_id, status, create_time, revision,"
            " document_type, document_version, document) VALUES (?,?,?,?,?,?,?,?)",
            (T, "ingest-2023-11-14", 1, 1699999990.0, 7, old.content_type, 1, old.data),
        )
    )
    manager = WorkflowManager(store, WorkflowLimits(), builtin_registry(), clock=lambda: 1.8e9)
    workflow = await manager.get(T, "ingest-2023-11-14")
    assert workflow.revision == 7 and workflow.step("parse").status == StepStatus.RETRYING

    (parse,) = await manager.claim(A, ClaimRequest("w", workflow_id=workflow.workflow_id), None)
    assert parse.step.step_id == "parse" and parse.step.attempt == 2
    assert parse.dependency_outputs == {"fetch": Payload("application/json", 0, b'{"rows": 3}')}
    await manager.complete(A, workflow.workflow_id, "parse", parse.step.lease_id, None)
    (load,) = await manager.claim(A, ClaimRequest("w", workflow_id=workflow.workflow_id), None)
    result = await manager.complete(A, workflow.workflow_id, "load", load.step.lease_id, None)
    assert result.workflow_status == WorkflowStatus.SUCCESS

    version = await storage.run(
        lambda db: db.execute("SELECT document_version FROM wf_workflows").fetchone()[0]
    )
    assert version == 3, "the next save writes the current version"
    await storage.close()


# ----- checkpoint payloads ----------------------------------------------------------------------


async def test_checkpoint_payloads_are_upgraded_on_read(tmp_path: Path) -> None:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedCheckpointStore(storage)
    await store.start()
    manager = CheckpointManager(store, CheckpointLimits(), counter_registry())
    old = Payload("test/state", 1, b"{}")
    await manager.save(
        A,
        CheckpointDraft(
            "run", checkpoint_id="c1", state=old, channels={"x": ChannelEntry("1", old)}
        ),
        0,
    )
    got = await manager.get(T, "run", "", "c1", ReadOptions())
    assert got.state.schema_version == 3
    assert json.loads(got.state.data) == {"trail": ["1->2", "2->3"]}
    assert got.channels["x"].value is not None and got.channels["x"].value.schema_version == 3
    assert got.channels["x"].content_hash == old.content_hash(), "hash names the stored bytes"
    await storage.close()
