"""Typed payloads and the registry that upgrades old schema versions on read.

Every stored payload carries `(content_type, schema_version)`. Writers always
write the newest version their code knows, but rows are never rewritten in
bulk, so a reader may meet any older version. The registry holds one upgrader
per step `(content_type, n) -> n + 1`; reading applies the chain up to the
newest registered version. Unversioned payloads (0), content types without
upgraders and versions newer than the registry knows pass through unchanged,
as the contract promises.

The server's own documents register their chains here. The workflow state
document is at version 3; its history:

* v1: a step had `retries` (retry count) and `retry_delay_seconds` (a fixed
  wait), and kept only the text of its last failure in `last_error`.
* v2: `retries` became `max_retries`; the fixed wait became a backoff policy
  `{initial_interval, multiplier, max_interval}` (seconds).
* v3: `last_error` became `errors`, one structured entry per failed attempt
  (message, type, retryable, attempt, time, lease id).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statekeeper.core.errors import FailedPreconditionError

Upgrader = Callable[[bytes], bytes]

WORKFLOW_STATE_CONTENT_TYPE = "application/vnd.statekeeper.workflow-state+json"
WORKFLOW_STATE_VERSION = 3


@dataclass(frozen=True)
class Payload:
    """Opaque bytes plus what is needed to decode them (proto Payload)."""

    content_type: str = ""
    schema_version: int = 0
    data: bytes = b""

    def content_hash(self) -> str:
        """SHA-256 over content type, schema version and data, lower-case hex.

        The parts are length-prefixed so that no two different payloads can
        hash the same input bytes.
        """
        digest = hashlib.sha256()
        content_type = self.content_type.encode("utf-8")
        digest.update(len(content_type).to_bytes(4, "big"))
        digest.update(content_type)
        digest.update(self.schema_version.to_bytes(8, "big", signed=True))
        digest.update(self.data)
        return digest.hexdigest()

    @property
    def size(self) -> int:
        return len(self.data) + len(self.content_type)


class PayloadUpgradeError(FailedPreconditionError):
    """A stored payload cannot be brought to the current schema version.

    The stored record is unreadable by this server version until an operator
    repairs it; retrying does not help, hence FAILED_PRECONDITION.
    """

    def __init__(self, content_type: str, schema_version: int, why: str) -> None:
        super().__init__(
            f"stored payload {content_type!r} version {schema_version} cannot be upgraded: {why}",
            condition="SCHEMA_UPGRADE_FAILED",
            content_type=content_type,
            schema_version=str(schema_version),
        )


class UpgradeRegistry:
    """Upgrade chains per content type, applied to payloads on read."""

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upgrader] = {}
        self._latest: dict[str, int] = {}

    def register(self, content_type: str, from_version: int, upgrader: Upgrader) -> None:
        """Adds the step `from_version -> from_version + 1`."""
        if from_version < 1:
            raise ValueError("unversioned payloads (0) are never upgraded")
        key = (content_type, from_version)
        if key in self._steps:
            raise ValueError(f"{content_type} already has an upgrader from v{from_version}")
        self._steps[key] = upgrader
        self._latest[content_type] = max(self._latest.get(content_type, 0), from_version + 1)

    def latest(self, content_type: str) -> int:
        """The newest version of `content_type`, 0 if nothing is registered."""
        return self._latest.get(content_type, 0)

    def upgrade(self, payload: Payload) -> Payload:
        """`payload` at the newest registered version of its content type."""
        latest = self._latest.get(payload.content_type, 0)
        version = payload.schema_version
        if version == 0 or version >= latest:
            return payload
        data = payload.data
        # Bounded: one step per version between `version` and `latest`.
        while version < latest:
            step = self._steps.get((payload.content_type, version))
            if step is None:
                raise PayloadUpgradeError(payload.content_type, version, "no upgrader registered")
            try:
                data = step(data)
            except (ValueError, KeyError, TypeError) as exc:
                raise PayloadUpgradeError(payload.content_type, version, str(exc)) from exc
            version += 1
        return Payload(payload.content_type, latest, data)


def builtin_registry() -> UpgradeRegistry:
    """The registry with every chain the server itself needs."""
    registry = UpgradeRegistry()
    registry.register(WORKFLOW_STATE_CONTENT_TYPE, 1, _json_step(_workflow_v1_to_v2))
    registry.register(WORKFLOW_STATE_CONTENT_TYPE, 2, _json_step(_workflow_v2_to_v3))
    return registry


def _json_step(transform: Callable[[dict[str, Any]], dict[str, Any]]) -> Upgrader:
    def step(data: bytes) -> bytes:
        document = json.loads(data)
        if not isinstance(document, dict):
            raise ValueError("the document is not a JSON object")
        return json.dumps(transform(document), separators=(",", ":"), sort_keys=True).encode()

    return step


def _workflow_v1_to_v2(document: dict[str, Any]) -> dict[str, Any]:
    steps = []
    for step in document["steps"]:
        upgraded = dict(step)
        upgraded["max_retries"] = int(upgraded.pop("retries", 0))
        # A fixed delay is a backoff that never grows.
        delay = float(upgraded.pop("retry_delay_seconds", 1.0))
        upgraded["backoff"] = {
            "initial_interval": delay,
            "multiplier": 1.0,
            "max_interval": delay,
        }
        steps.append(upgraded)
    return {**document, "steps": steps}


def _workflow_v2_to_v3(document: dict[str, Any]) -> dict[str, Any]:
    steps = []
    for step in document["steps"]:
        upgraded = dict(step)
        last_error = upgraded.pop("last_error", "") or ""
        # v2 kept only the last failure; it becomes the one known entry. Its
        # lease is unknown, so a repeated FailStep of that attempt cannot be
        # recognised, which v2 could not do either.
        upgraded["errors"] = (
            [
                {
                    "message": last_error,
                    "type": "",
                    "details": None,
                    "retryable": upgraded.get("status") != "FAILED",
                    "attempt": int(upgraded.get("attempt", 0)),
                    "time": float(document.get("update_time", 0.0)),
                    "lease_id": "",
                }
            ]
            if last_error
            else []
        )
        steps.append(upgraded)
    return {**document, "steps": steps}
