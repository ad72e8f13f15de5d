"""Configurable limits, checked before a request touches storage."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Every limit the server enforces. Defaults are documented in README."""

    max_id_length: int = 128
    max_message_bytes: int = 256 * 1024
    max_messages_per_append: int = 100
    max_episodes_per_request: int = 1000  # RecordEpisodes
    max_metadata_entries: int = 64
    max_metadata_key_bytes: int = 256
    max_metadata_value_bytes: int = 4096
    max_context_variables_bytes: int = 256 * 1024
    max_active_tools: int = 256
    max_pending_tool_calls: int = 256
    max_tool_calls_per_message: int = 128
    max_token_budget: int = 2_000_000
    max_ttl_seconds: float = 365 * 24 * 3600.0
    default_page_size: int = 50
    max_page_size: int = 1000
    max_request_bytes: int = 8 * 1024 * 1024
    # Streaming calls (Watch, ReceiveMessages) open at once on one connection
    # and on the whole server; past either, a new one gets RESOURCE_EXHAUSTED.
    max_streams_per_connection: int = 4000
    max_open_streams: int = 20_000
