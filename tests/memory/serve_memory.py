"""A minimal server process for crash tests: the embedded store, sessions and
MemoryService behind the real interceptor, until killed.

    python -m tests.memory.serve_memory --data-dir DIR --port PORT
    python -m tests.memory.serve_memory --postgres-dsn DSN --port PORT

With --postgres-dsn it runs the production assembly instead
(tests/memory/production.py): PostgreSQL for sessions and memory, and the
LISTEN/NOTIFY change feed, so several such processes are replicas.

Prints "READY" on stdout once it serves (after the startup index rebuild).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import grpc

from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.tenancy import Authenticator
from statekeeper.memory_app import MemoryApp
from tests.memory.helpers import API_KEYS, memory_app
from tests.memory.production import postgres_memory_app


async def serve(data_dir: Path, port: int) -> None:
    async with memory_app(data_dir) as (app, _):
        await serve_app(app, port)


async def serve_postgres(dsn: str, port: int) -> None:
    async with postgres_memory_app(dsn) as (app, _, _):
        await serve_app(app, port)


async def serve_app(app: MemoryApp, port: int) -> None:
    server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator(API_KEYS))])
    app.register(server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("READY", flush=True)
    await server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--data-dir")
    where.add_argument("--postgres-dsn")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    if args.postgres_dsn:
        asyncio.run(serve_postgres(args.postgres_dsn, args.port))
    else:
        asyncio.run(serve(Path(args.data_dir), args.port))


if __name__ == "__main__":
    main()
