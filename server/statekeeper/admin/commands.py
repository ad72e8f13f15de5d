"""The subcommands `export`, `import` and `inspect` (registered by cli.py).

They open the configured store like `statekeeper audit list` does (the
same --data-dir / --postgres-dsn / --config options); `export` and
`inspect` only read and never create a store, `import` creates and
migrates the target if it has to. Run export on a live deployment (one
consistent snapshot); run import while no server serves that tenant.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TextIO

from statekeeper import config, data_dir
from statekeeper.admin import inspect, transfer

COMMANDS = ("export", "import", "inspect")
STORE_OPTIONS = ("data_dir", "postgres_dsn", "log_level", "log_format")


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export_help = (
        "write one tenant (or one user of it) to FILE: every capability's rows as compressed,"
        " versioned NDJSON with a checksum, read from one snapshot of the store"
    )
    export = commands.add_parser("export", help=export_help, description=export_help)
    config.add_arguments(export, only=STORE_OPTIONS)
    export.add_argument("--tenant", required=True, help="the tenant to export")
    export.add_argument(
        "--user",
        help="only this user's sessions and memory (default: the whole tenant, every capability)",
    )
    export.add_argument("--gzip", action="store_true", help="gzip instead of zstd")
    export.add_argument("--no-progress", action="store_true", help="no progress bar")
    export.add_argument("file", type=Path, help="the file to write (replaced when done)")
    import_help = (
        "load an export FILE into this deployment's store (created and migrated if need be);"
        " refuses a tenant that has data; a re-run continues an interrupted import"
    )
    load = commands.add_parser("import", help=import_help, description=import_help)
    config.add_arguments(load, only=(*STORE_OPTIONS, "redis_url", "redis_key_prefix"))
    load.add_argument("--no-progress", action="store_true", help="no progress bar")
    load.add_argument("file", type=Path, help="a file written by `statekeeper export`")
    inspect_help = "show one session, user, board or execution (read-only)"
    view = commands.add_parser("inspect", help=inspect_help, description=inspect_help)
    config.add_arguments(view, only=STORE_OPTIONS)
    view.add_argument("kind", choices=sorted(inspect.VIEWS), help="what to show")
    view.add_argument("name", metavar="TENANT/ID", help="e.g. acme/s-42 or acme/alice")
    view.add_argument("--json", action="store_true", help="JSON instead of text")


def run(args: argparse.Namespace, settings: config.Settings) -> int:
    out = sys.stdout
    try:
        if not settings.production:
            if args.command == "import":
                data_dir.prepare(Path(settings.data_dir))
            else:
                data_dir.existing(Path(settings.data_dir))
        if args.command == "export":
            return asyncio.run(_export(settings, args, out))
        if args.command == "import":
            return asyncio.run(_import(settings, args, out))
        return asyncio.run(_inspect(settings, args, out))
    except (transfer.TransferError, data_dir.DataDirError) as exc:
        print(f"statekeeper {args.command}: {exc}", file=sys.stderr)
        return 1


def _bars(args: argparse.Namespace) -> transfer.ProgressFactory:
    return transfer.silent if args.no_progress else transfer.progress_bars


async def _export(settings: config.Settings, args: argparse.Namespace, out: TextIO) -> int:
    compression = "gzip" if args.gzip else "zstd"
    if settings.production:
        from statekeeper.admin import postgres

        async with postgres.source(settings.postgres_dsn) as pg_source:
            summary = await transfer.export(
                pg_source, args.file, args.tenant, args.user, compression, _bars(args)
            )
    else:
        from statekeeper.admin import embedded

        async with embedded.source(Path(settings.data_dir)) as sqlite_source:
            summary = await transfer.export(
                sqlite_source, args.file, args.tenant, args.user, compression, _bars(args)
            )
    rows = sum(summary.counts.values())
    out.write(f"exported {rows} rows of tenant {args.tenant} to {summary.path}\n")
    return 0


async def _import(settings: config.Settings, args: argparse.Namespace, out: TextIO) -> int:
    if settings.production:
        from statekeeper.admin import postgres

        async with postgres.target(
            settings.postgres_dsn, settings.redis_url, settings.redis_key_prefix
        ) as pg_target:
            summary = await transfer.import_(pg_target, args.file, _bars(args))
    else:
        from statekeeper.admin import embedded

        async with embedded.target(Path(settings.data_dir)) as sqlite_target:
            summary = await transfer.import_(sqlite_target, args.file, _bars(args))
    who = f"user {summary.user} of tenant" if summary.user else "tenant"
    again = " (continued an interrupted import)" if summary.resumed else ""
    out.write(f"imported {sum(summary.counts.values())} rows of {who} {summary.tenant}{again}\n")
    return 0


async def _inspect(settings: config.Settings, args: argparse.Namespace, out: TextIO) -> int:
    tenant, name = inspect.split_name(args.name)
    postgres_dsn = settings.postgres_dsn if settings.production else ""
    async with inspect.reader(Path(settings.data_dir), postgres_dsn) as db:
        view = await inspect.VIEWS[args.kind](db, tenant, name)
    out.write((inspect.as_json(view) if args.json else inspect.as_text(args.kind, view)) + "\n")
    return 0
