"""The `statekeeper` command."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from statekeeper import __version__, config, logs

log = logging.getLogger("statekeeper")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="statekeeper", description=__doc__)
    parser.add_argument("--version", action="version", version=f"statekeeper {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the gRPC server")
    config.add_arguments(serve)
    args = parser.parse_args(argv)
    try:
        settings = config.load(args)
    except config.ConfigError as exc:
        parser.error(str(exc))
    logs.configure(settings.log_level, settings.log_format)
    if args.command == "serve":
        return asyncio.run(_serve(settings))
    return 2


async def _serve(settings: config.Settings) -> int:
    # Imported here so that `statekeeper --help` stays fast.
    from statekeeper.server import StatekeeperServer

    server = StatekeeperServer(settings)
    try:
        await server.start()
    except OSError as exc:
        log.error("cannot start: %s", exc)
        await server.storage.close()
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
