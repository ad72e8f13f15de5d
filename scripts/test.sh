#!/usr/bin/env bash
# Every check and test, stage by stage, with the time each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
declare -a TIMINGS=()

stage() {
  local name=$1; shift
  echo "==> $name"
  local start=$SECONDS
  "$@"
  TIMINGS+=("$(printf '%-22s %4ss' "$name" $((SECONDS - start)))")
}

report() {
  echo "==> stage timings"
  printf '  %s\n' "${TIMINGS[@]}"
}
trap report EXIT

stage "generated code fresh" scripts/check-generated.sh
stage "buf lint" "$BIN/buf" lint
stage "buf breaking" scripts/buf-breaking.sh
stage "ruff" "$BIN/ruff" check server tests bench scripts
stage "ruff format" "$BIN/ruff" format --check server tests bench scripts
stage "mypy" "$BIN/mypy"
stage "pytest" "$BIN/pytest" -q -ra
if [ -x scripts/conformance.sh ]; then
  stage "client conformance" scripts/conformance.sh
fi
