"""The production memory assembly; it lives in tests.harness.memory (kept importable here)."""

from tests.harness.memory import postgres_memory_app

__all__ = ["postgres_memory_app"]
