"""A minimal server process for crash tests: the embedded store, sessions and
MemoryService behind the real interceptor, until killed.

    python -m tests.memory.serve_memory --data-dir DIR --port PORT

Prints "READY" on stdout once it serves (after the startup index rebuild).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import grpc

from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.tenancy import Authenticator
from tests.memory.helpers import API_KEYS, memory_app


async def serve(data_dir: Path, port: int) -> None:
    async with memory_app(data_dir) as (app, _):
        server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator(API_KEYS))])
        app.register(server)
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        print("READY", flush=True)
        await server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    asyncio.run(serve(Path(args.data_dir), args.port))


if __name__ == "__main__":
    sys.exit(main())
