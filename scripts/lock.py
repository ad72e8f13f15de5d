"""Writes requirements.lock: the runtime dependencies of the server and its
client package (resolved by pip in a scratch virtualenv, without
installing), each pinned to the version installed in .venv, where the tests
run. Run it after changing dependencies in pyproject.toml or
clients/python/pyproject.toml (and `make setup` first): `python3 scripts/lock.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEADER = """\
# The server's runtime dependencies, pinned to the versions its tests run with
# (the Dockerfile installs exactly these before the source, so a change of
# code reuses that layer). Regenerate with `python3 scripts/lock.py` after a
# dependency change in pyproject.toml or clients/python/pyproject.toml.
"""


def resolved_names() -> list[str]:
    with tempfile.TemporaryDirectory() as scratch:
        venv, report = Path(scratch) / "venv", Path(scratch) / "report.json"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin/python"), "-m", "pip", "--quiet"]
        subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
        resolve = ["install", "--dry-run", "--ignore-installed", "--report", str(report)]
        subprocess.run([*pip, *resolve, str(REPO / "clients/python"), str(REPO)], check=True)
        installs = json.loads(report.read_text())["install"]
    return [item["metadata"]["name"] for item in installs if not item.get("is_direct")]


def tested_versions() -> dict[str, str]:
    listed = subprocess.run(
        [str(REPO / ".venv/bin/python"), "-m", "pip", "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {_normal(p["name"]): p["version"] for p in json.loads(listed)}


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def main() -> None:
    versions = tested_versions()
    lines = []
    for name in sorted({_normal(n) for n in resolved_names()}):
        if name not in versions:
            sys.exit(f"{name} is a dependency but not installed in .venv: run `make setup`")
        lines.append(f"{name}=={versions[name]}")
    (REPO / "requirements.lock").write_text(HEADER + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
