"""Server reflection that also resolves method names.

grpcio's reflection servicer looks symbols up with
`DescriptorPool.FindFileContainingSymbol`, which does not know methods, so
`grpcurl describe statekeeper.v1.SessionService.GetContextWindow` fails. This
subclass falls back to the method's file.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer


class MethodAwareReflectionServicer(ReflectionServicer):  # type: ignore[misc]
    def _file_containing_symbol(self, request: Any, fully_qualified_name: str) -> Any:
        pool = self._pool or descriptor_pool.Default()
        try:
            pool.FindFileContainingSymbol(fully_qualified_name)
        except KeyError:
            try:
                method = pool.FindMethodByName(fully_qualified_name)
            except KeyError:
                pass
            else:
                fully_qualified_name = method.containing_service.full_name
        return super()._file_containing_symbol(request, fully_qualified_name)


def enable(service_names: list[str], server: grpc.aio.Server) -> None:
    """Registers reflection for `service_names` plus reflection itself."""
    names = [*service_names, reflection.SERVICE_NAME]
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
        MethodAwareReflectionServicer(names), server
    )
