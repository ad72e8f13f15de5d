"""Archiving audit records: how fast whole days move to the archive, and
what a ListAuditRecords page over an archived day (read through, never
restored) costs next to a page of hot records.

A real `statekeeper serve` on the embedded store, archive in a local
directory (or S3 with --archive-url s3://... and the AWS_* variables):

1. D past days of R records each are written into the store (the server
   stamps records with its own clock, so past days are seeded), and R
   records of today;
2. the server runs with `--archive-audit-after-days 1`; the archiver's
   "archive pass done" log lines give rows and seconds (rows/s);
3. ListAuditRecords (page size 50) is timed: a page of today's (hot)
   records; the first page of each archived day the first time (the chunk
   is fetched, checked and parsed) and a second time (cached in memory).

Printed with the load average (comparable only on an idle machine).
Run: `.venv/bin/python -m bench.archive_audit [--days D] [--records R]`.
Not part of `make test`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sqlite3
import tempfile
import time
from pathlib import Path

import grpc
from google.protobuf import timestamp_pb2

from bench.archive import KEY, p, pass_lines, serve
from statekeeper.storage.embedded.sessions_schema import AUDIT_DIGEST, DATABASE_FILE, audit_digest
from statekeeper.storage.sql import AUDIT_COLUMNS
from statekeeper_client.v1 import admin_pb2, admin_pb2_grpc

DAY = 86_400.0


def seed(data_dir: Path, days: int, records: int) -> float:
    """Writes the records; returns the start of today (UTC)."""
    today = time.time() // DAY * DAY
    rows = []
    for days_ago in [*range(days + 1, 1, -1), 0]:
        start = today - days_ago * DAY
        for n in range(records):
            when = start + n * (DAY / 2 / records)
            content = ("blackboard", f"board-{n % 97}", n, when, f"put key-{n} of a board")
            rows.append(
                ("bench", "bench-key", "statekeeper.v1.BlackboardService", "PutEntry", *content)
            )
    with contextlib.closing(sqlite3.connect(data_dir / DATABASE_FILE)) as db, db:
        db.create_function(AUDIT_DIGEST, 10, audit_digest)
        marks = ", ".join("?" for _ in range(9))
        db.executemany(f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({marks})", rows)
    return today


def stamp(seconds: float) -> timestamp_pb2.Timestamp:
    moment = timestamp_pb2.Timestamp()
    moment.FromNanoseconds(int(seconds * 1e9))
    return moment


def timed_pages(address: str, today: float, days: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"hot": [], "first": [], "cached": []}
    with grpc.insecure_channel(address) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]

        def page(start: float, end: float) -> float:
            request = admin_pb2.ListAuditRecordsRequest(
                page_size=50, start_time=stamp(start), end_time=stamp(end)
            )
            began = time.perf_counter()
            answer = stub.ListAuditRecords(request, metadata=KEY, timeout=60)
            assert len(answer.audit_records) == 50
            return time.perf_counter() - began

        for _ in range(days):
            samples["hot"].append(page(today, today + DAY))
        for days_ago in range(days + 1, 1, -1):
            start = today - days_ago * DAY
            samples["first"].append(page(start, start + DAY))
            samples["cached"].append(page(start, start + DAY))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--records", type=int, default=2000, help="records per day")
    parser.add_argument("--archive-url", default="", help="default: DATA_DIR/archive")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-archive-audit-") as scratch:
        data_dir, log = Path(scratch) / "data", Path(scratch) / "server.log"
        url = ["--archive-url", args.archive_url] if args.archive_url else []
        with serve(data_dir, log, *url):
            pass  # creates the store
        today = seed(data_dir, args.days, args.records)
        policy = ["--archive-audit-after-days", "1", "--archive-interval-seconds", "0.5"]
        with serve(data_dir, log, *url, *policy) as address:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:  # bounded
                done = [line for line in pass_lines(log) if line.get("units")]
                if sum(int(str(line["units"])) for line in done) >= args.days:
                    break
                time.sleep(0.2)
            else:
                raise SystemExit(f"the archiver did not finish; log in {log}")
            samples = timed_pages(address, today, args.days)
    rows = sum(int(str(line["rows"])) for line in done)
    seconds = sum(int(str(line["rows"])) / float(str(line["rows_per_second"])) for line in done)
    load = os.getloadavg()
    when = datetime.datetime.fromtimestamp(today, datetime.UTC).date()
    print(f"archive audit: {args.days} days x {args.records} records before {when}, {rows} rows")
    print(f"  archived: {rows / seconds:,.0f} rows/s ({args.days / seconds:,.1f} days/s)")
    for name, label in (
        ("hot", "page of hot records:          "),
        ("first", "archived day, first read:    "),
        ("cached", "archived day, read again:     "),
    ):
        values = samples[name]
        print(f"  {label} p50 {p(values, 0.5):.1f} ms, p95 {p(values, 0.95):.1f} ms")
    ratio = p(samples["first"], 0.5) / max(p(samples["hot"], 0.5), 1e-9)
    print(f"  first read-through / hot (p50): {ratio:.1f}x")
    print(f"  load average: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
