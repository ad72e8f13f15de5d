"""A server process with sessions and the MemoryService behind the real
interceptor, background jobs off, indexes built before it reports ready:
what the memory crash tests need (kill -9, restart, compare recall).

    python -m tests.harness.assemblies.memory --data-dir DIR --port PORT --ready-file FILE
    python -m tests.harness.assemblies.memory --postgres-dsn DSN --port PORT --ready-file FILE

With --postgres-dsn it is the production assembly (tests.harness.memory):
PostgreSQL for sessions and memory and the LISTEN/NOTIFY change feed, so
several such processes are replicas. Writes its address to FILE once it
serves (after the startup index rebuild). `statekeeper serve` builds its
indexes in the background, so recall right after a restart would race them.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import grpc

from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.tenancy import Authenticator
from statekeeper.memory_app import MemoryApp
from tests.harness.memory import API_KEYS, memory_app, postgres_memory_app


async def serve(data_dir: Path, port: int, ready_file: Path) -> None:
    async with memory_app(data_dir) as (app, _):
        await serve_app(app, port, ready_file)


async def serve_postgres(dsn: str, port: int, ready_file: Path) -> None:
    async with postgres_memory_app(dsn) as (app, _, _):
        await serve_app(app, port, ready_file)


async def serve_app(app: MemoryApp, port: int, ready_file: Path) -> None:
    server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator(API_KEYS))])
    app.register(server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    ready_file.write_text(f"127.0.0.1:{bound}\n")
    await server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--data-dir")
    where.add_argument("--postgres-dsn")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ready-file", type=Path, required=True)
    args = parser.parse_args()
    if args.postgres_dsn:
        asyncio.run(serve_postgres(args.postgres_dsn, args.port, args.ready_file))
    else:
        asyncio.run(serve(Path(args.data_dir), args.port, args.ready_file))


if __name__ == "__main__":
    main()
