"""Registering a generated service with some responses passed through as bytes.

A servicer that answers the same bytes to many calls (a Watch event shared by
every watcher, an unchanged context window polled in a loop) serializes them
once and hands grpcio the bytes; the method's response serializer must then
pass bytes through instead of encoding a message again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import grpc


class _Handlers:
    """Takes the method handlers the generated code would add to a server."""

    def __init__(self) -> None:
        self.service = ""
        self.methods: dict[str, Any] = {}

    def add_generic_rpc_handlers(self, handlers: object) -> None:
        pass  # the registered handlers below name the same methods

    def add_registered_method_handlers(self, service: str, methods: dict[str, Any]) -> None:
        self.service = service
        self.methods = methods


def register_with_serializers(
    server: grpc.aio.Server,
    add_to_server: Callable[[Any, Any], None],
    servicer: object,
    serializers: Mapping[str, Callable[[Any], bytes]],
) -> None:
    """Adds `servicer` to `server` as the generated `add_to_server` would,
    with the response serializers of the methods named in `serializers`
    replaced by the given ones."""
    handlers = _Handlers()
    add_to_server(servicer, handlers)
    methods = dict(handlers.methods)
    for name, serializer in serializers.items():
        methods[name] = methods[name]._replace(response_serializer=serializer)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(handlers.service, methods),)
    )
    server.add_registered_method_handlers(handlers.service, methods)
