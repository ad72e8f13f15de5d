"""The in-process CheckpointService; it lives in tests.harness.checkpoints
(kept importable here)."""

from tests.harness.checkpoints import BACKENDS, MAX_MESSAGE_BYTES, CheckpointServer, serving

__all__ = ["BACKENDS", "MAX_MESSAGE_BYTES", "CheckpointServer", "serving"]
