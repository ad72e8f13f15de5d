"""kill -9, restart: recall returns the same results, because the indexes are
rebuilt from the durable store (nothing about them is saved on the side)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import numpy as np

from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc
from tests.e2e.conftest import free_port
from tests.memory.data import gaussian
from tests.memory.helpers import auth

ROOT = Path(__file__).resolve().parents[2]
ONLY_SIMILARITY = pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0)


def start(data_dir: Path, port: int) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.memory.serve_memory",
            "--data-dir",
            str(data_dir),
            "--port",
            str(port),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # bounded: the server prints READY or exits
        line = process.stdout.readline()
        if line.strip() == "READY":
            return process
        if not line and process.poll() is not None:
            break
    process.kill()
    raise RuntimeError("memory server did not start")


def recall_all(
    stub: memory_pb2_grpc.MemoryServiceStub, queries: np.ndarray
) -> list[list[tuple[str, float]]]:
    answers = []
    for query in queries:
        reply = stub.Recall(
            pb.RecallRequest(
                user_id="u1",
                query_vector=pb.QueryVector(values=query.tolist()),
                top_k=10,
                weights=ONLY_SIMILARITY,
            ),
            metadata=auth(),
        )
        answers.append([(r.episode.id, r.score.similarity) for r in reply.results])
    return answers


def test_recall_is_the_same_after_kill_9(tmp_path: Path) -> None:
    data_dir = tmp_path
    port = free_port()
    vectors = gaussian(300, 64, seed=21)
    queries = gaussian(10, 64, seed=22)
    process = start(data_dir, port)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
            for row, vector in enumerate(vectors):
                stub.RecordEpisode(
                    pb.RecordEpisodeRequest(
                        user_id="u1", user_message=f"m{row}", embedding=vector.tolist()
                    ),
                    metadata=auth(),
                )
            doomed = recall_all(stub, queries[:1])[0][0][0]
            stub.DeleteEpisode(pb.DeleteEpisodeRequest(episode_id=doomed), metadata=auth())
            before = recall_all(stub, queries)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        process = start(data_dir, port)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
            after = recall_all(stub, queries)
            stats = stub.GetIndexStats(pb.GetIndexStatsRequest(user_id="u1"), metadata=auth())
    finally:
        process.kill()
        process.wait(timeout=10)
    assert [[i for i, _ in answer] for answer in after] == [[i for i, _ in a] for a in before]
    assert all(len(answer) == 10 for answer in after)
    assert doomed not in {i for answer in after for i, _ in answer}
    assert stats.stats.vector_count == 299 and stats.stats.state == pb.INDEX_STATE_READY
