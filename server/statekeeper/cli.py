"""The `statekeeper` command.

statekeeper serve    run the gRPC server
statekeeper migrate  apply pending schema migrations (PostgreSQL or embedded)
statekeeper health   probe a running server's gRPC health (container health checks)
statekeeper doctor   check config, store, schema versions, a running server and its indexes
statekeeper audit    read the audit trail from the store (list), check its hash chains (verify)
statekeeper export   write a tenant (or a user) to a file; import loads it into another store
statekeeper inspect  show a session, user, board or execution from the store (read-only)
statekeeper keys     create an API key: print it once and its line for the keys file
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import gc
import json
import logging
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from statekeeper import __version__, config, data_dir, logs
from statekeeper.core.errors import InvalidArgumentError, StatekeeperError

if TYPE_CHECKING:
    from statekeeper.core.archive.audit import ArchivedAudit
    from statekeeper.storage.interfaces import Storage

log = logging.getLogger("statekeeper")


# The options each command other than `serve` reads (its --help lists only
# these; the others would change nothing it does).
STORE_OPTIONS = ("data_dir", "postgres_dsn", "log_level", "log_format")
# `audit list` and `audit verify` read archived audit records through too.
AUDIT_OPTIONS = (*STORE_OPTIONS, "archive_url")
ROTATE_OPTIONS = (
    *STORE_OPTIONS,
    "redis_url",
    "redis_key_prefix",
    "encryption_keys_file",
    "encryption_keys",
    "encryption_active_key",
    "archive_url",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="statekeeper", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"statekeeper {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="run the gRPC server", description="run the gRPC server"
    )
    config.add_arguments(serve)
    migrate_help = "apply every pending schema migration and exit (safe to run concurrently)"
    migrate = commands.add_parser("migrate", help=migrate_help, description=migrate_help)
    config.add_arguments(migrate, only=STORE_OPTIONS)
    health_help = "ask the server at --listen for its gRPC health; exit 0 when SERVING"
    health = commands.add_parser("health", help=health_help, description=health_help)
    config.add_arguments(health, only=("listen",))
    health.add_argument(
        "--timeout", type=float, default=3.0, help="seconds to wait for the answer (default: 3)"
    )
    doctor_help = (
        "check the configuration, the store (PostgreSQL, Redis or the embedded store), every"
        " schema version, and a running server's health and index state; changes nothing"
    )
    doctor = commands.add_parser("doctor", help=doctor_help, description=doctor_help)
    config.add_arguments(doctor, only=(*STORE_OPTIONS, "listen", "redis_url", "metrics_listen"))
    audit = commands.add_parser("audit", help="read the audit trail")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)
    list_help = "list audit records, newest first"
    _add_audit_list(audit_commands.add_parser("list", help=list_help, description=list_help))
    verify_help = "recompute every tenant's hash chain and report the first broken record"
    verify = audit_commands.add_parser("verify", help=verify_help, description=verify_help)
    config.add_arguments(verify, only=AUDIT_OPTIONS)
    verify.add_argument("--tenant", help="only this tenant (default: every tenant)")
    from statekeeper.admin import commands as admin_commands

    admin_commands.add_parsers(commands)
    keys_cmd = commands.add_parser("keys", help="manage API keys given by hash (api_keys_file)")
    keys_commands = keys_cmd.add_subparsers(dest="keys_command", required=True)
    create_help = (
        "print a new API key (32 random bytes) once, and the line that gives it to TENANT in"
        " the keys file (api_keys_file); the server keeps only its hash"
    )
    create = keys_commands.add_parser("create", help=create_help, description=create_help)
    create.add_argument("--tenant", required=True, help="the tenant the key authenticates as")
    create.add_argument(
        "--append-to",
        metavar="FILE",
        help="also append the line to FILE (created mode 0600 if missing); a running server"
        " picks it up",
    )
    rotate_help = (
        "re-wrap every value sealed at rest under a key other than the active encryption key"
        " (PostgreSQL + Redis, or the embedded store), in batches of one transaction each, with"
        " a progress bar; resumable, safe while servers run; then the old key can leave the ring"
    )
    rotate = keys_commands.add_parser("rotate", help=rotate_help, description=rotate_help)
    config.add_arguments(rotate, only=ROTATE_OPTIONS)
    rotate.add_argument(
        "--batch", type=int, default=500, help="values per transaction (default: 500)"
    )
    rotate.add_argument("--no-progress", action="store_true", help="no progress bar")
    rotate.add_argument("--stop-after-batches", type=int, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "keys" and args.keys_command == "create":
        return _keys_create(args.tenant, args.append_to, sys.stdout)
    if args.command == "serve":
        # SIGHUP reloads the API keys file once the server has its handler
        # (see _serve); until then it stays pending instead of killing a
        # server that is still starting. The mask is inherited by workers.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
    try:
        settings = config.load(args)
        if args.command == "serve":
            config.check_exposure(settings)
            _check_tls_files(settings)
            _check_keys_file(settings)
            _check_encryption(settings)
        _check_data_dir(args.command, settings)
    except (config.ConfigError, data_dir.DataDirError) as exc:
        # One line naming the value and what is wrong with it: no usage dump,
        # no traceback.
        print(f"statekeeper {args.command}: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level, settings.log_format)
    if args.command == "serve" and settings.worker_count > 1:
        from statekeeper.workers import serve_workers

        _forward_sighup_to_workers()
        return serve_workers(settings, serve_process)
    if args.command == "health":
        return _health(settings, args.timeout)
    if args.command == "keys":
        return _keys_rotate(settings, args)
    if args.command in ("export", "import", "inspect"):
        from statekeeper.admin import commands as admin_commands

        return admin_commands.run(args, settings)
    if args.command == "doctor":
        from statekeeper import doctor

        healthy, lines = doctor.run(settings)
        print("\n".join(lines))
        return 0 if healthy else 1
    runners: dict[str, Callable[[], Coroutine[Any, Any, int]]] = {
        "serve": lambda: _serve(settings),
        "migrate": lambda: _migrate(settings),
        "audit": lambda: (
            _audit_verify(settings, args.tenant, sys.stdout)
            if args.audit_command == "verify"
            else _audit_list(settings, args, sys.stdout)
        ),
    }
    try:
        return asyncio.run(runners[args.command]())
    except StatekeeperError as exc:
        print(f"statekeeper {args.command}: {exc.message}", file=sys.stderr)
        return 1


def _check_tls_files(settings: config.Settings) -> None:
    """Reads the TLS files once before anything starts, so a missing file or
    a key that does not match its certificate is one line naming the path
    (each server process reads them again when it binds)."""
    from statekeeper import tls

    if (files := tls.files(settings)) is not None:
        tls.load(files)


def _check_keys_file(settings: config.Settings) -> None:
    """Reads the API keys file once before anything starts: a missing file
    or a bad line is one line naming the file and line number."""
    from statekeeper import keys

    if settings.api_keys_file:
        try:
            keys.read(Path(settings.api_keys_file))
        except keys.KeysFileError as exc:
            raise config.ConfigError(str(exc)) from exc


def _check_encryption(settings: config.Settings) -> None:
    """The encryption key ring and the sensitive tenants and boards, read
    once before serving: a bad key file is one line, not a traceback."""
    from statekeeper.storage.sealing import KeyRingError, sealer_for

    try:
        sealer_for(settings)
    except KeyRingError as exc:
        raise config.ConfigError(str(exc)) from exc


def _forward_sighup_to_workers() -> None:
    """SIGHUP (reload the API keys file) goes to every worker; the parent
    has nothing to reload and must not die of it. The workers start with it
    blocked (inherited through fork and exec) and take it once they can.
    The parent's main thread keeps it blocked too, so a helper thread
    receives it; CPython then runs the handler in the main thread, which
    the supervisor's short waits let through within a fraction of a second."""
    import multiprocessing
    import os
    import threading

    def forward(signum: int, _frame: object) -> None:
        for worker in multiprocessing.active_children():
            if worker.pid is not None:
                os.kill(worker.pid, signum)

    def receive() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})
        threading.Event().wait()

    signal.signal(signal.SIGHUP, forward)
    threading.Thread(target=receive, name="sighup", daemon=True).start()


def _keys_create(tenant: str, append_to: str | None, out: TextIO) -> int:
    import os

    from statekeeper import keys

    try:
        keys.check_tenant(tenant)
    except keys.KeysFileError as exc:
        print(f"statekeeper keys create: --tenant: {exc}", file=sys.stderr)
        return 2
    key = keys.new_key()
    line = keys.file_line(key, tenant)
    if append_to:
        try:
            fd = os.open(append_to, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a+b") as file:
                # A last line without its newline would merge with the new one,
                # and the whole file would then be refused.
                size = file.seek(0, os.SEEK_END)
                if size:
                    file.seek(size - 1)
                    separator = b"" if file.read(1) == b"\n" else b"\n"
                else:
                    separator = b""
                file.write(separator + line.encode() + b"\n")
        except OSError as exc:
            print(f"statekeeper keys create: cannot append to {append_to}: {exc}", file=sys.stderr)
            return 1
    out.write(f"key (shown once; give it to the client): {key}\n")
    where = f"appended to {append_to}" if append_to else "for the keys file (api_keys_file)"
    out.write(f"line {where}:\n{line}\n")
    return 0


def _keys_rotate(settings: config.Settings, args: argparse.Namespace) -> int:
    from statekeeper.storage.rotation import rotate
    from statekeeper.storage.sealing import KeyRingError, Sealer, load_key_ring

    try:
        ring = load_key_ring(
            settings.encryption_keys_file, settings.encryption_keys, settings.encryption_active_key
        )
    except KeyRingError as exc:
        print(f"statekeeper keys rotate: {exc}", file=sys.stderr)
        return 2
    if ring is None:
        print("statekeeper keys rotate: no encryption key configured", file=sys.stderr)
        return 2
    if args.batch < 1:
        print("statekeeper keys rotate: --batch must be positive", file=sys.stderr)
        return 2
    report = rotate(
        settings, Sealer(ring), args.batch, not args.no_progress, args.stop_after_batches
    )
    for place, count in sorted(report.by_place.items()):
        print(f"{place}: {count} re-wrapped")
    if report.archived_stale:
        # Archive objects are not rewritten: "0 values re-wrapped" alone
        # would read as "done, the old key can go".
        print(
            f"rotated to key {ring.active}: {report.rewrapped} values re-wrapped in the store,"
            f" {report.unreadable} left (key not in the ring or damaged); NOT DONE:"
            f" {report.archived_stale} archived units still hold values under another key"
            " (restore them with RestoreArchived and run keys rotate again before removing"
            " any key)"
        )
        return 1
    print(
        f"rotated to key {ring.active}: {report.rewrapped} values re-wrapped,"
        f" {report.unreadable} left (key not in the ring or damaged)"
    )
    return 1 if report.unreadable else 0


def _add_audit_list(parser: argparse.ArgumentParser) -> None:
    config.add_arguments(parser, only=AUDIT_OPTIONS)
    every = "(default: every one)"
    parser.add_argument("--tenant", help="only this tenant (default: every tenant)")
    parser.add_argument("--entity-type", default="", help=f"e.g. session {every}")
    parser.add_argument("--entity-id", default="", help=f"e.g. a session id {every}")
    parser.add_argument("--principal", default="", help=f"key id, 'anonymous' or 'system' {every}")
    parser.add_argument("--service", default="", help=f"e.g. statekeeper.v1.SessionService {every}")
    parser.add_argument("--method", default="", help=f"e.g. DeleteSession {every}")
    parser.add_argument(
        "--since", default="", help="ISO time, inclusive, e.g. 2026-01-31T12:00Z (default: none)"
    )
    parser.add_argument("--until", default="", help="ISO time, exclusive (default: none)")
    parser.add_argument(
        "--page-size", type=int, default=50, help="records per page, max 1000 (default: 50)"
    )
    parser.add_argument(
        "--page-token", default="", help="next_page_token of a previous call (default: none)"
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per line (default: a table)"
    )


def _check_data_dir(command: str, settings: config.Settings) -> None:
    """The local directories, before anything opens them. The embedded
    store's: `audit` only reads an existing store, `migrate` and `serve` may
    create it, and `serve` refuses an older one unless told to migrate it.
    `serve` on either tier also writes vector index snapshots (index_dir,
    by default inside the data dir)."""
    if command == "serve" and settings.index_dir:
        data_dir.prepare(Path(settings.index_dir), "index_dir")
    if command == "serve" and settings.production:
        data_dir.prepare(Path(settings.data_dir))
    if settings.production or command not in ("serve", "migrate", "audit"):
        return
    if command == "audit":
        data_dir.existing(Path(settings.data_dir))
        return
    data_dir.prepare(Path(settings.data_dir))
    if command == "serve" and not settings.migrate_on_start:
        data_dir.check_schemas(Path(settings.data_dir))


def serve_process(settings: config.Settings, reuse_port: bool) -> int:
    """One server process's main (a worker of `serve --workers N` sets
    `reuse_port`, see statekeeper/workers.py)."""
    try:
        return asyncio.run(_serve(settings, reuse_port))
    except StatekeeperError as exc:
        print(f"statekeeper serve: {exc.message}", file=sys.stderr)
        return 1


async def _serve(settings: config.Settings, reuse_port: bool = False) -> int:
    # Imported here so that `statekeeper --help` stays fast.
    from statekeeper.server import StatekeeperServer
    from statekeeper.workers import check_free

    if not reuse_port:
        try:
            check_free(settings.listen)
        except OSError as exc:
            log.error("cannot start: %s", exc.strerror or exc)
            return 1
    server = StatekeeperServer(settings, reuse_port=reuse_port)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGHUP, server.reload_keys)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})  # blocked by main
    try:
        await server.start()
    except (OSError, StatekeeperError) as exc:
        log.error("cannot start: %s", exc)
        await server.storage.close()
        return 1
    settle_garbage_collector()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    return 0


# Young-generation collections every this many net allocations (Python's
# default is 700): a gRPC call allocates hundreds of short-lived objects, and
# at the default the collector ran several times per call.
YOUNG_COLLECTION_THRESHOLD = 20_000


def settle_garbage_collector() -> None:
    """Once the server is up: everything allocated so far (modules, protos,
    indexes, caches) lives as long as the process, so it moves to the
    collector's permanent generation and is no longer scanned on every full
    collection; young collections run less often. Measured under 32
    concurrent writers: about 10% less server CPU per call."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, old)


async def _migrate(settings: config.Settings) -> int:
    """Applies every capability's schema (storage/schemas.py)."""
    from statekeeper.storage import schemas

    if not settings.production:
        from statekeeper.storage.embedded.sessions import EmbeddedStorage

        storage = EmbeddedStorage(Path(settings.data_dir))
        try:
            names = await schemas.migrate_embedded(storage)
        finally:
            await storage.close()
        print(f"embedded store in {settings.data_dir} is up to date ({', '.join(names)})")
        return 0
    import asyncpg

    try:
        conn = await asyncpg.connect(settings.postgres_dsn, timeout=10)
    except (OSError, asyncpg.PostgresError) as exc:
        print(f"statekeeper migrate: cannot connect to PostgreSQL: {exc}", file=sys.stderr)
        return 1
    try:
        applied = await schemas.migrate_postgres(conn)
        states = await schemas.postgres_states(conn)
    finally:
        await conn.close()
    where = logs.redact(settings.postgres_dsn)
    versions = ", ".join(f"{state.name} {state.version}" for state in states)
    done = {name: versions for name, versions in applied.items() if versions}
    if done:
        print(f"applied migrations {done} to {where}; schema versions: {versions}")
    else:
        print(f"{where} is up to date; schema versions: {versions}")
    return 0


def _health(settings: config.Settings, timeout: float) -> int:
    from statekeeper import probe

    serving, text = probe.check(settings.listen, timeout=timeout)
    print(text, file=sys.stdout if serving else sys.stderr)
    return 0 if serving else 1


async def _audit_list(settings: config.Settings, args: argparse.Namespace, out: TextIO) -> int:
    from statekeeper.core.audit.models import AuditFilter
    from statekeeper.core.audit.service import AuditLog
    from statekeeper.storage.factory import build_storage

    audit_filter = AuditFilter(
        entity_type=args.entity_type,
        entity_id=args.entity_id,
        principal=args.principal,
        service=args.service,
        method=args.method,
        start_time=_parse_time("--since", args.since),
        end_time=_parse_time("--until", args.until),
    )
    storage = build_storage(settings)
    await storage.start()
    try:
        archived = _archived_audit(settings, storage)
        records, next_token = await AuditLog(storage.audit, settings.limits, archived).list_records(
            args.tenant, audit_filter, args.page_size, args.page_token
        )
    finally:
        await storage.close()
    for record in records:
        when = datetime.datetime.fromtimestamp(record.time, datetime.UTC).isoformat()
        if args.json:
            out.write(json.dumps({**dataclasses.asdict(record), "time": when}) + "\n")
        else:
            out.write(
                f"{record.audit_id:>8}  {when}  {record.tenant}  {record.principal}"
                f"  {record.method}  {record.entity_type}/{record.entity_id}"
                f"@{record.revision}  {record.summary}\n"
            )
    if next_token:
        print(f"more: --page-token {next_token}", file=sys.stderr)
    return 0


async def _audit_verify(settings: config.Settings, tenant: str | None, out: TextIO) -> int:
    """Exit 0 when every chain is intact, 1 naming the first broken record."""
    from statekeeper.core.archive.audit import merge_links
    from statekeeper.core.audit.service import verify_chain
    from statekeeper.storage.factory import build_storage

    storage = build_storage(settings)
    await storage.start()
    try:
        # Hot first: a day archived meanwhile is then read from the archive.
        links, heads = await storage.audit.audit_chain(tenant)
        archived = _archived_audit(settings, storage)
        if archived is not None:
            links = merge_links(links, await archived.chain_links(tenant))
    finally:
        await storage.close()
    report = verify_chain(links, heads)
    if report.broken is not None:
        broken = report.broken
        hint = (
            " (archived records are read with --archive-url)"
            if archived is None and "missing" in broken.reason
            else ""
        )
        out.write(
            f"audit chain broken at record {broken.audit_id} (tenant {broken.tenant}):"
            f" {broken.reason}{hint}\n"
        )
        return 1
    older = f", {report.unchained} older than the chain" if report.unchained else ""
    out.write(f"audit chain intact: {report.records} records of {report.tenants} tenants{older}\n")
    return 0


def _archived_audit(settings: config.Settings, storage: Storage) -> ArchivedAudit | None:
    """The reader of archived audit records (None: no archive configured
    on the production tier; the embedded store's is DATA_DIR/archive)."""
    from statekeeper.storage.archive.audit import attach_audit
    from statekeeper.storage.archive.factory import build_archive

    archive = build_archive(settings, storage)
    return None if archive is None else attach_audit(archive, settings, storage)


def _parse_time(flag: str, text: str) -> float:
    if not text:
        return 0.0
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidArgumentError(flag, f"not an ISO time: {text!r}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


if __name__ == "__main__":
    sys.exit(main())
