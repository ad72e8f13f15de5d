"""The archive tier for checkpoint histories: how fast idle executions'
histories move to the archive, and what reading an archived checkpoint
(which restores the history) costs next to a hot read.

A real `statekeeper serve` on the embedded store with the archive in a
local directory (or S3 with --archive-url s3://... and the AWS_* variables):

1. N executions of M checkpoints (three channels, one write each) are saved;
2. the server is restarted with a policy that finds them all idle; the
   archiver's "archive pass done" log lines give rows and seconds (every
   table of a history counted: checkpoints, channel rows, writes, values);
3. the server is restarted without a policy, and GetCheckpoint of each
   execution's oldest checkpoint is timed twice: the first call restores the
   history (read-through), the second is a hot read; then ListCheckpoints of
   each (hot, with its one manifest lookup).

Printed: rows/s archived, p50/p95 of each read, and the load average
(comparable only on an idle machine). Run:
`.venv/bin/python -m bench.archive_checkpoints [--executions N] [--checkpoints M]`.
Not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import grpc

from bench.archive import KEY, p, pass_lines, serve
from statekeeper_client.v1 import checkpoint_pb2, checkpoint_pb2_grpc, common_pb2

Stub = checkpoint_pb2_grpc.CheckpointServiceStub


def _payload(text: str) -> common_pb2.Payload:
    return common_pb2.Payload(content_type="application/json", data=text.encode())


def write_histories(address: str, executions: int, checkpoints: int) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = Stub(channel)  # type: ignore[no-untyped-call]
        for number in range(executions):
            execution = f"bench-{number}"
            parent = ""
            for step in range(checkpoints):
                checkpoint_id = f"{execution}-{step:04d}"
                channels = {
                    "constant": ("1", '"unchanged"'),
                    "messages": (str(step + 1), f'["message {step} " {"x" * 400!r}]'),
                    "counter": (str(step + 1), str(step)),
                }
                stub.SaveCheckpoint(
                    checkpoint_pb2.SaveCheckpointRequest(
                        checkpoint=checkpoint_pb2.Checkpoint(
                            execution_id=execution,
                            checkpoint_id=checkpoint_id,
                            parent_checkpoint_id=parent,
                            step=step,
                            state=_payload(f'{{"step": {step}}}'),
                            channels={
                                name: checkpoint_pb2.ChannelValue(
                                    version=version, value=_payload(value)
                                )
                                for name, (version, value) in channels.items()
                            },
                        )
                    ),
                    metadata=KEY,
                    timeout=60,
                )
                stub.PutWrites(
                    checkpoint_pb2.PutWritesRequest(
                        execution_id=execution,
                        checkpoint_id=checkpoint_id,
                        task_id=f"task-{step}",
                        writes=[
                            checkpoint_pb2.WriteInput(
                                index=0, channel="messages", value=_payload("1")
                            )
                        ],
                    ),
                    metadata=KEY,
                    timeout=60,
                )
                parent = checkpoint_id


def timed_reads(address: str, executions: int) -> tuple[list[float], list[float], list[float]]:
    through: list[float] = []
    hot: list[float] = []
    listed: list[float] = []
    with grpc.insecure_channel(address) as channel:
        stub = Stub(channel)  # type: ignore[no-untyped-call]
        for number in range(executions):
            request = checkpoint_pb2.GetCheckpointRequest(
                execution_id=f"bench-{number}", checkpoint_id=f"bench-{number}-0000"
            )
            for samples in (through, hot):
                start = time.perf_counter()
                stub.GetCheckpoint(request, metadata=KEY, timeout=60)
                samples.append(time.perf_counter() - start)
        for number in range(executions):
            start = time.perf_counter()
            stub.ListCheckpoints(
                checkpoint_pb2.ListCheckpointsRequest(execution_id=f"bench-{number}", page_size=10),
                metadata=KEY,
                timeout=60,
            )
            listed.append(time.perf_counter() - start)
    return through, hot, listed


def archive(data_dir: Path, log: Path, url: list[str], executions: int) -> tuple[int, float]:
    """Runs the archiver until every history is out; rows and rows/s."""
    policy = ["--archive-checkpoints-after-days", "0.00001", "--archive-interval-seconds", "0.5"]
    with serve(data_dir, log, *url, *policy, "--archive-batch-size", "100"):
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:  # bounded
            done = [line for line in pass_lines(log) if line.get("units")]
            if sum(int(str(line["units"])) for line in done) >= executions:
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"the archiver did not finish; log in {log}")
    rows = sum(int(str(line["rows"])) for line in done)
    rate = sum(float(str(line["rows_per_second"])) * int(str(line["rows"])) for line in done)
    return rows, rate / max(rows, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--executions", type=int, default=100)
    parser.add_argument("--checkpoints", type=int, default=20)
    parser.add_argument("--archive-url", default="", help="default: DATA_DIR/archive")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-archive-checkpoints-") as scratch:
        data_dir, log = Path(scratch) / "data", Path(scratch) / "server.log"
        url = ["--archive-url", args.archive_url] if args.archive_url else []
        with serve(data_dir, log, *url) as address:
            write_histories(address, args.executions, args.checkpoints)
        time.sleep(1.0)  # every history idle for the policy
        rows, rate = archive(data_dir, log, url, args.executions)
        with serve(data_dir, log, *url) as address:
            through, hot, listed = timed_reads(address, args.executions)
    load = os.getloadavg()
    print(
        f"archive checkpoints: {args.executions} executions x {args.checkpoints} checkpoints,"
        f" {rows} rows archived"
    )
    print(
        f"  archived: {rate:,.0f} rows/s"
        f" ({args.executions / max(rows / rate, 1e-9):,.0f} histories/s)"
    )
    print(
        f"  GetCheckpoint archived id (restores): p50 {p(through, 0.5):.1f} ms,"
        f" p95 {p(through, 0.95):.1f} ms"
    )
    print(
        f"  GetCheckpoint hot:                    p50 {p(hot, 0.5):.1f} ms,"
        f" p95 {p(hot, 0.95):.1f} ms"
    )
    print(
        f"  ListCheckpoints hot (+1 manifest lookup): p50 {p(listed, 0.5):.1f} ms,"
        f" p95 {p(listed, 0.95):.1f} ms"
    )
    print(f"  read-through / hot (p50): {p(through, 0.5) / max(p(hot, 0.5), 1e-9):.1f}x")
    print(f"  load average: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
