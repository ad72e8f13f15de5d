"""Safe defaults (issue 14): `serve` on an address other hosts can reach,
with no API keys, refuses to start in one line unless allow_anonymous (flag,
environment or config file) says so; loopback and keyed servers start."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statekeeper import config
from tests.harness import processes
from tests.harness.deadlines import scaled
from tests.harness.processes import REPO
from tests.harness.servers import ServerProcess


def settings(argv: list[str], environ: dict[str, str] | None = None) -> config.Settings:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    return config.load(parser.parse_args(argv), environ or {})


def refused(chosen: config.Settings) -> bool:
    try:
        config.check_exposure(chosen)
    except config.ConfigError:
        return True
    return False


@pytest.mark.parametrize("listen", ["0.0.0.0:50051", "[::]:50051", "10.1.2.3:1", "box:50051"])
def test_an_exposed_address_without_keys_is_refused(listen: str) -> None:
    assert refused(settings(["--listen", listen]))


@pytest.mark.parametrize("listen", ["127.0.0.1:50051", "localhost:1", "[::1]:50051", "127.9.9.9:1"])
def test_loopback_needs_no_keys(listen: str) -> None:
    assert not refused(settings(["--listen", listen]))


def test_keys_or_allow_anonymous_from_any_source_permit_an_exposed_address(
    tmp_path: Path,
) -> None:
    exposed = ["--listen", "0.0.0.0:50051"]
    assert not refused(settings([*exposed, "--api-key", "k=acme"]))
    assert not refused(settings([*exposed, "--allow-anonymous"]))
    assert not refused(settings(exposed, {"STATEKEEPER_ALLOW_ANONYMOUS": "true"}))
    assert not refused(settings(exposed, {"STATEKEEPER_API_KEYS": "k=acme"}))
    file = tmp_path / "statekeeper.toml"
    file.write_text("allow_anonymous = true\n")
    assert not refused(settings([*exposed, "--config", str(file)]))
    # An explicit false wins over nothing and is still refused.
    assert refused(settings(exposed, {"STATEKEEPER_ALLOW_ANONYMOUS": "false"}))


def test_serve_refuses_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEKEEPER_")}
    result = subprocess.run(
        [sys.executable, "-m", "statekeeper", "serve", "--listen", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        cwd=REPO,
        env={**env, "STATEKEEPER_DATA_DIR": str(data)},
    )
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result
    assert len(lines) == 1, result.stderr
    assert "0.0.0.0:0" in lines[0] and "--allow-anonymous" in lines[0], lines[0]
    assert not data.exists()  # refused before anything was created


def test_serve_with_allow_anonymous_listens_on_every_address(tmp_path: Path) -> None:
    port = processes.free_port()
    exposed = ["--listen", f"0.0.0.0:{port}", "--allow-anonymous"]
    server = ServerProcess(tmp_path, extra_args=exposed, port=port)
    server.start()  # ready: its health answers SERVING on 127.0.0.1:port
    try:
        assert server.process is not None and server.process.poll() is None
    finally:
        server.kill()
