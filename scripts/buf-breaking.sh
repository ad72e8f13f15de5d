#!/usr/bin/env bash
# buf breaking against the contract on main (the last released contract).
# On main itself this compares main with its own history's tip, which catches
# uncommitted breaking edits; on a branch it compares with main.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --verify --quiet main >/dev/null || ! git cat-file -e main:buf.yaml 2>/dev/null; then
  echo "no contract on main yet; nothing to compare"
  exit 0
fi
.venv/bin/buf breaking --against '.git#branch=main'
echo "no breaking change against main"
