"""Issue 14 item 3: API keys configured by hash in a keys file, reloaded on
SIGHUP and on file change while streams stay open, and failed
authentications logged without the key, at a bounded rate.

Every test drives a real `statekeeper serve` process (the embedded store:
authentication does not depend on the backend)."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import blackboard_pb2, blackboard_pb2_grpc, common_pb2
from tests.harness.backends import production
from tests.harness.deadlines import scaled, wait_until
from tests.harness.deploy import statekeeper_replicas
from tests.harness.processes import REPO
from tests.harness.servers import ServerProcess

PLAIN_KEY = "plain-key-beta-" + uuid.uuid4().hex
STATEKEEPER = (sys.executable, "-m", "statekeeper")


def create_key(tenant: str) -> tuple[str, str]:
    """(key, keys file line) from `statekeeper keys create`."""
    done = subprocess.run(
        [*STATEKEEPER, "keys", "create", "--tenant", tenant],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        timeout=scaled(60),
    )
    key = re.search(r"shown once.*: (\S+)$", done.stdout, re.MULTILINE)
    line = re.search(r"^(sha256:[0-9a-f]{64} \S+)$", done.stdout, re.MULTILINE)
    assert key and line, done.stdout
    return key.group(1), line.group(1)


def write_atomically(path: Path, text: str) -> None:
    """As an operator should: write aside, then rename into place."""
    aside = path.with_suffix(f".tmp-{uuid.uuid4().hex[:6]}")
    aside.write_text(text)
    os.replace(aside, path)


@pytest.fixture(scope="module")
def keys() -> dict[str, tuple[str, str]]:
    return {name: create_key("alpha") for name in ("first", "second", "third")}


@pytest.fixture
def keys_file(tmp_path: Path, keys: dict[str, tuple[str, str]]) -> Path:
    path = tmp_path / "api-keys"
    write_atomically(path, f"# alpha's key\n{keys['first'][1]}  # first\n\n")
    return path


@pytest.fixture
def server(tmp_path: Path, keys_file: Path) -> Iterator[ServerProcess]:
    args = ["--api-keys-file", str(keys_file), "--log-format", "json"]
    with statekeeper_replicas(
        tmp_path / "server", None, extra_args=args, api_keys={PLAIN_KEY: "beta"}
    ) as servers:
        yield servers[0]


def blackboard(
    server: ServerProcess,
) -> tuple[grpc.Channel, blackboard_pb2_grpc.BlackboardServiceStub]:
    channel = grpc.insecure_channel(server.address)
    return channel, blackboard_pb2_grpc.BlackboardServiceStub(channel)


def put(stub: blackboard_pb2_grpc.BlackboardServiceStub, key: str, board: str, name: str) -> None:
    value = blackboard_pb2.BlackboardValue(payload=common_pb2.Payload(data=name.encode()))
    stub.PutEntry(
        blackboard_pb2.PutEntryRequest(board=board, key=name, value=value),
        metadata=(("x-api-key", key),),
        timeout=scaled(30),
    )


def code_of(stub: blackboard_pb2_grpc.BlackboardServiceStub, key: str, board: str) -> str:
    try:
        put(stub, key, board, "probe")
    except grpc.RpcError as error:
        return str(error.code().name)
    return "OK"


def test_keys_create_prints_the_key_once_and_its_hash(tmp_path: Path) -> None:
    key, line = create_key("acme")
    digest, tenant = line.split()
    assert tenant == "acme"
    assert digest == "sha256:" + hashlib.sha256(key.encode()).hexdigest()
    assert len(key) >= 43  # 32 random bytes in base64
    assert create_key("acme")[0] != key
    # --append-to writes the line (not the key) to a file only its owner reads.
    target = tmp_path / "keys"
    subprocess.run(
        [*STATEKEEPER, "keys", "create", "--tenant", "t1", "--append-to", str(target)],
        check=True,
        capture_output=True,
        cwd=REPO,
        timeout=scaled(60),
    )
    assert re.fullmatch(r"sha256:[0-9a-f]{64} t1\n", target.read_text())
    assert target.stat().st_mode & 0o077 == 0
    # A file whose last line lacks its newline (edited by hand) gets the new
    # line on a line of its own, never glued to the last one.
    target.write_text(target.read_text().rstrip("\n"))
    subprocess.run(
        [*STATEKEEPER, "keys", "create", "--tenant", "t2", "--append-to", str(target)],
        check=True,
        capture_output=True,
        cwd=REPO,
        timeout=scaled(60),
    )
    assert re.fullmatch(r"sha256:[0-9a-f]{64} t1\nsha256:[0-9a-f]{64} t2\n", target.read_text())
    assert [line.split()[1] for line in target.read_text().splitlines()] == ["t1", "t2"]


def test_a_plain_key_in_the_keys_file_stops_serve_without_echoing_it(tmp_path: Path) -> None:
    secret = "sk-" + uuid.uuid4().hex
    path = tmp_path / "keys"
    path.write_text(f"{secret} alpha\n")
    done = subprocess.run(
        [*STATEKEEPER, "serve", "--listen", "127.0.0.1:0", "--api-keys-file", str(path)],
        env={**os.environ, "STATEKEEPER_DATA_DIR": str(tmp_path / "d")},
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=scaled(60),
    )
    assert done.returncode == 2
    assert "line 1" in done.stderr and "sha256:" in done.stderr
    assert secret not in done.stderr + done.stdout


def test_hashed_and_plain_keys_authenticate(
    server: ServerProcess, keys: dict[str, tuple[str, str]]
) -> None:
    channel, stub = blackboard(server)
    board = f"b-{uuid.uuid4().hex[:8]}"
    with channel:
        put(stub, keys["first"][0], board, "from-hashed")
        put(stub, PLAIN_KEY, board, "from-plain")
        # Tenants apart: alpha's entry is not beta's.
        got = stub.ListEntries(
            blackboard_pb2.ListEntriesRequest(board=board),
            metadata=(("x-api-key", keys["first"][0]),),
            timeout=scaled(30),
        )
        assert [e.key for e in got.entries] == ["from-hashed"]
        assert code_of(stub, keys["second"][0], board) == "UNAUTHENTICATED"
        # The hash itself is not a key.
        assert code_of(stub, keys["first"][1].split()[0], board) == "UNAUTHENTICATED"
        assert code_of(stub, keys["first"][0][:-1], board) == "UNAUTHENTICATED"


def read_next(
    pool: concurrent.futures.Executor, stream: Iterator[blackboard_pb2.WatchResponse]
) -> blackboard_pb2.WatchResponse:
    return pool.submit(next, stream).result(timeout=scaled(30))


def read_until(
    pool: concurrent.futures.Executor, stream: Iterator[blackboard_pb2.WatchResponse], key: str
) -> None:
    """Reads the watch until an event for `key` arrives (bounded)."""
    deadline = time.monotonic() + scaled(60)
    while time.monotonic() < deadline:
        if any(e.entry.key == key for e in read_next(pool, stream).events.events):
            return
    raise AssertionError(f"no event for {key} on the watch")


def test_reload_on_change_and_on_sighup_keeps_open_watches(
    server: ServerProcess, keys_file: Path, keys: dict[str, tuple[str, str]]
) -> None:
    first, second, third = (keys[name][0] for name in ("first", "second", "third"))
    board = f"b-{uuid.uuid4().hex[:8]}"
    channel, stub = blackboard(server)
    with channel, concurrent.futures.ThreadPoolExecutor(1) as pool:
        watch = stub.Watch(
            blackboard_pb2.WatchRequest(board=board), metadata=(("x-api-key", first),)
        )
        assert read_next(pool, watch).HasField("started")

        # 1. The file changes on disk: `second` replaces `first`.
        write_atomically(keys_file, keys["second"][1] + "\n")
        wait_until(
            lambda: code_of(stub, second, board) == "OK", 60, "second key accepted", server.log_tail
        )
        assert code_of(stub, first, board) == "UNAUTHENTICATED"
        # The watch opened with the removed key is still delivering.
        put(stub, second, board, "after-file-change")
        read_until(pool, watch, "after-file-change")

        # 2. SIGHUP alone: the file is rewritten in place with the same size,
        # inode and mtime, so only the signal can make the server see it.
        before = os.stat(keys_file)
        with open(keys_file, "r+") as file:
            file.write(keys["third"][1] + "\n")
        os.utime(keys_file, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert os.stat(keys_file).st_size == before.st_size
        time.sleep(2.5)  # the poll (each second) had its chances and saw no change
        assert code_of(stub, third, board) == "UNAUTHENTICATED"
        assert server.process is not None
        os.kill(server.process.pid, signal.SIGHUP)
        wait_until(
            lambda: code_of(stub, third, board) == "OK",
            60,
            "third key after SIGHUP",
            server.log_tail,
        )
        assert code_of(stub, second, board) == "UNAUTHENTICATED"
        assert code_of(stub, PLAIN_KEY, board) == "OK"  # flags are not the file's

        # 3. A file that does not parse keeps the keys in use, one warning.
        broken = "sk-not-a-hash-" + uuid.uuid4().hex
        write_atomically(keys_file, f"{broken} alpha\n")
        wait_until(
            lambda: "API keys file not reloaded" in server.log(),
            60,
            "reload refused",
            server.log_tail,
        )
        time.sleep(2.5)  # more polls of the same broken file
        assert code_of(stub, third, board) == "OK"
        assert server.log().count("API keys file not reloaded") == 1
        assert broken not in server.log()

        # The watch survived all of it.
        put(stub, third, board, "at-the-end")
        read_until(pool, watch, "at-the-end")
        watch.cancel()
    for secret in (first, second, third, PLAIN_KEY):
        assert secret not in server.log()


def test_failed_authentications_are_logged_rate_limited_without_the_key(
    server: ServerProcess,
) -> None:
    guessed = "guess-" + uuid.uuid4().hex
    channel, stub = blackboard(server)
    started = time.monotonic()
    with channel:
        codes = [code_of(stub, guessed, "b") for _ in range(60)]
        missing = stub.ListEntries
        with pytest.raises(grpc.RpcError) as no_key:
            missing(blackboard_pb2.ListEntriesRequest(board="b"), timeout=scaled(30))
    elapsed = time.monotonic() - started
    assert set(codes) == {"UNAUTHENTICATED"}
    assert no_key.value.code() == grpc.StatusCode.UNAUTHENTICATED
    lines = wait_until(
        lambda: [
            json.loads(line)
            for line in server.log().splitlines()
            if "failed authentication" in line
        ],
        30,
        "failed authentication logged",
        server.log_tail,
    )
    log_text = server.log()
    assert guessed not in log_text
    assert hashlib.sha256(guessed.encode()).hexdigest()[:12] in log_text
    assert {line["level"] for line in lines} == {"WARNING"}
    # At most one line a second from this one host (plus the first).
    assert len(lines) <= elapsed + 2, lines
    # Each line counts the failures it stands for (the last second's wait
    # for a later line).
    counted = sum(int(line["failures"]) for line in lines)
    assert 1 <= counted <= 61


def test_sighup_reaches_every_worker(
    tmp_path: Path, keys_file: Path, keys: dict[str, tuple[str, str]]
) -> None:
    """`serve --workers 2` (production tier): SIGHUP to the parent reloads
    the file in both workers, and the parent keeps serving."""
    first, second = keys["first"][0], keys["second"][0]
    write_atomically(keys_file, keys["first"][1] + "\n")  # as long as the second's line
    with production("keys") as where:
        args = ["--workers", "2", "--api-keys-file", str(keys_file), "--log-format", "json"]
        with statekeeper_replicas(tmp_path / "w", where, extra_args=args) as servers:
            server = servers[0]
            wait_until(
                lambda: server.log().count("plaintext) with") == 2,
                60,
                "both workers",
                server.log_tail,
            )
            before = os.stat(keys_file)
            with open(keys_file, "r+") as file:
                file.write(keys["second"][1] + "\n")
            os.utime(keys_file, ns=(before.st_atime_ns, before.st_mtime_ns))
            assert server.process is not None
            os.kill(server.process.pid, signal.SIGHUP)
            wait_until(
                lambda: server.log().count("API keys file reloaded (SIGHUP)") == 2,
                60,
                "both workers reloaded",
                server.log_tail,
            )
            assert server.alive()
            # New connections, spread over the workers by the kernel: each
            # takes the new key and refuses the old one.
            for _ in range(8):
                options = [("grpc.use_local_subchannel_pool", 1)]
                with grpc.insecure_channel(server.address, options=options) as channel:
                    stub = blackboard_pb2_grpc.BlackboardServiceStub(channel)
                    assert code_of(stub, second, "b") == "OK"
                    assert code_of(stub, first, "b") == "UNAUTHENTICATED"
