"""Memory test builders; they live in tests.harness.memory (kept importable here)."""

from tests.harness.memory import (
    API_KEYS,
    NO_JOBS,
    Served,
    auth,
    memory_app,
    postgres_memory_app,
    quiet_config,
    served_memory,
)

__all__ = [
    "API_KEYS",
    "NO_JOBS",
    "Served",
    "auth",
    "memory_app",
    "postgres_memory_app",
    "quiet_config",
    "served_memory",
]
