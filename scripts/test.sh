#!/usr/bin/env bash
# Every check and test, stage by stage, with the time each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
declare -a TIMINGS=()

# Runs one stage and records its time, failed or not: the timing is appended
# before a failure ends the script (set -e), so `report` shows it too.
stage() {
  local name=$1; shift
  echo "==> $name"
  local start=$SECONDS status=0
  "$@" || status=$?
  local outcome=ok
  [ "$status" -eq 0 ] || outcome="FAILED ($status)"
  TIMINGS+=("$(printf '%-22s %4ss  %s' "$name" $((SECONDS - start)) "$outcome")")
  return "$status"
}

report() {
  echo "==> stage timings"
  printf '  %s\n' "${TIMINGS[@]}"
}

# Real Redis and PostgreSQL for the contract and integration suites, installed
# from Debian packages when missing, on loopback in a temp dir of their own;
# stopped (and the dir removed) however this script ends.
SERVICES_DIR=""
start_services() {
  SERVICES_DIR=$(mktemp -d "${TMPDIR:-/tmp}/statekeeper-services.XXXXXX")
  scripts/services.sh start "$SERVICES_DIR"
}
finish() {
  local status=$?
  if [ -n "$SERVICES_DIR" ]; then
    scripts/services.sh stop "$SERVICES_DIR" || true
    rm -rf "$SERVICES_DIR"
  fi
  report
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM

stage "generated code fresh" scripts/check-generated.sh
stage "buf lint" "$BIN/buf" lint
stage "buf breaking" scripts/buf-breaking.sh
stage "ruff" "$BIN/ruff" check server tests bench scripts
stage "ruff format" "$BIN/ruff" format --check server tests bench scripts
stage "mypy" "$BIN/mypy"
stage "services up" start_services
# shellcheck source=/dev/null
. "$SERVICES_DIR/env"
# The tests that need Redis and PostgreSQL fail instead of skipping.
export STATEKEEPER_REQUIRE_SERVICES=1
stage "pytest" "$BIN/pytest" -q -ra
if [ -x scripts/conformance.sh ]; then
  stage "client conformance" scripts/conformance.sh
fi
