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
# Every process this run starts inherits this mark, so the end of the run finds
# any that outlived it (a server a test forgot, or one whose pytest was killed
# before its own cleanup ran), kills it and fails the run.
export STATEKEEPER_TEST_RUN="$$-$(date +%s%N)"
run_leftovers() {
  local file pid
  for file in /proc/[0-9]*/environ; do
    pid=${file#/proc/}
    pid=${pid%/environ}
    # grep runs without the mark, so it never finds itself.
    if env -u STATEKEEPER_TEST_RUN grep -qsxz "STATEKEEPER_TEST_RUN=$STATEKEEPER_TEST_RUN" "$file"; then
      echo "$pid"
    fi
  done
}
stop_leftovers() {
  local pids
  pids=$(run_leftovers)
  [ -n "$pids" ] || return 0
  echo "==> processes this run left running (killed now):"
  # shellcheck disable=SC2086 # one pid per word
  ps -o pid=,args= -p "$(echo $pids | tr ' ' ',')" || true
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null || true
  return 1
}
finish() {
  local status=$?
  if [ -n "$SERVICES_DIR" ]; then
    scripts/services.sh stop "$SERVICES_DIR" || true
    rm -rf "$SERVICES_DIR"
  fi
  if ! stop_leftovers && [ "$status" -eq 0 ]; then
    status=1
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
# The Python client's adapter tests (ADK, the saver's conformance suite, the
# examples) also run against a production-tier server on these services.
export STATEKEEPER_CLIENT_TEST_PRODUCTION=1
stage "pytest" "$BIN/pytest" -q -ra
if [ -x scripts/conformance.sh ]; then
  stage "client conformance" scripts/conformance.sh
fi
