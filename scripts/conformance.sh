#!/usr/bin/env bash
# Builds every client (Python, Go, TypeScript, Java, Rust), starts ONE real
# statekeeper server on a free loopback port with an API key and a temporary
# data dir, over mTLS with a CA generated for the run (server and client
# certificates from tests/harness/certs.py), checks it with grpcurl and
# grpc_health_probe, runs the conformance scenario of each language against
# it over TLS (each client given the CA, the client certificate and its key
# through STATEKEEPER_TLS_*), prints how long every stage and every scenario
# took, stops the server, and exits non-zero if anything failed.
#
# Works on a fresh machine with only the base toolchains: it installs grpcurl
# and grpc_health_probe (go install, into .tools/), the npm, Maven, cargo and
# Go dependencies of the clients, and the Python client into its own venv.
# The Java, TypeScript and Rust builds generate their stubs from proto/ (their
# generated code is not committed), so these builds are what proves them.
#
# Environment:
#   CONFORMANCE_REQUIRE  services whose UNIMPLEMENTED answer fails a step
#                        instead of skipping it (comma separated, or "all";
#                        default "all": every service is built on the
#                        embedded store the scenario runs against)
#   CONFORMANCE_ONLY     run only these languages (e.g. "go,rust")
#   CONFORMANCE_TLS      1 (default): mTLS as above; 0: plaintext
#   CONFORMANCE_CLIENT_TESTS 1 (default): also run each client's own test suite
#                        (go test, npm test, mvn test, cargo test), which
#                        kills and restarts real servers under the Watch
#                        helper and the inbox consumer; 0: scenarios only
#   CONFORMANCE_BACKENDS the server tiers the scenarios run against, in turn
#                        (default "embedded,production": the embedded store,
#                        then PostgreSQL + Redis started by scripts/services.sh
#                        with two server processes (--workers 2) on the port)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/.tools
PY=${PYTHON:-$ROOT/.venv/bin/python}
REQUIRE=${CONFORMANCE_REQUIRE:-all}
ONLY=${CONFORMANCE_ONLY:-python,go,typescript,java,rust}
TLS=${CONFORMANCE_TLS:-1}
BACKENDS=${CONFORMANCE_BACKENDS:-embedded,production}
CLIENT_TESTS=${CONFORMANCE_CLIENT_TESTS:-1}
BACKEND=embedded
SERVICES_DIR=""

WORK=$(mktemp -d "${TMPDIR:-/tmp}/statekeeper-conformance.XXXXXX")
SERVER_PID=""
declare -a TIMINGS=()
declare -a RESULTS=()
failures=0
run_start=$(date +%s%N)

cleanup() {
  local rc=$? entry
  for entry in "${BG[@]}"; do
    kill -TERM "${entry##*|}" 2>/dev/null || true
    wait "${entry##*|}" 2>/dev/null || true
  done
  stop_server
  if [ -n "$SERVICES_DIR" ]; then
    scripts/services.sh stop "$SERVICES_DIR" >/dev/null 2>&1 || true
    rm -rf "$SERVICES_DIR"
  fi
  if [ $rc -ne 0 ] && [ -f "$WORK/server.log" ]; then
    echo "==> server log (last 30 lines)"
    tail -n 30 "$WORK/server.log" || true
  fi
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
fmt_ms() { printf '%d.%03ds' $(( $1 / 1000 )) $(( $1 % 1000 )); }
wanted() { [[ ",$ONLY," == *",$1,"* ]]; }

# stage NAME CMD...: runs CMD, records its duration, stops everything on failure.
stage() {
  local name=$1; shift
  echo "==> $name"
  local start; start=$(date +%s%N)
  if ! "$@"; then
    echo "FAILED: $name" >&2
    TIMINGS+=("$(printf '%-34s %10s  FAILED' "$name" "$(fmt_ms "$(ms_since "$start")")")")
    report
    exit 1
  fi
  TIMINGS+=("$(printf '%-34s %10s' "$name" "$(fmt_ms "$(ms_since "$start")")")")
}

# bg_stage NAME FUNC: runs FUNC in the background, its output kept in a log;
# wait_stages prints each log and records its duration (or stops on failure).
# The slow, network- and CPU-bound stages (tools, Java, Rust) overlap the rest.
declare -a BG=()
bg_stage() {
  local name=$1 fn=$2 id=${#BG[@]}
  echo "==> $name (in the background)"
  (
    start=$(date +%s%N)
    rc=0
    "$fn" >"$WORK/bg.$id.log" 2>&1 || rc=$?
    echo "$rc $(ms_since "$start")" >"$WORK/bg.$id.done"
  ) &
  BG+=("$id|$name|$!")
}

wait_stages() {
  local entry id name pid rc ms failed=0
  for entry in "${BG[@]}"; do
    IFS='|' read -r id name pid <<<"$entry"
    wait "$pid" || true
    read -r rc ms <"$WORK/bg.$id.done" || { rc=1; ms=0; }
    echo "==> $name (background, took $(fmt_ms "$ms"))"
    cat "$WORK/bg.$id.log"
    if [ "$rc" -ne 0 ]; then
      echo "FAILED: $name" >&2
      TIMINGS+=("$(printf '%-34s %10s  FAILED' "$name" "$(fmt_ms "$ms")")")
      failed=1
    else
      TIMINGS+=("$(printf '%-34s %10s' "$name" "$(fmt_ms "$ms")")")
    fi
  done
  BG=()
  if [ "$failed" -ne 0 ]; then
    report
    exit 1
  fi
}

report() {
  echo "==> stage timings"
  printf '  %s\n' "${TIMINGS[@]}"
  if [ ${#RESULTS[@]} -gt 0 ]; then
    echo "==> conformance scenarios"
    printf '  %s\n' "${RESULTS[@]}"
  fi
  echo "==> total $(fmt_ms "$(ms_since "$run_start")")"
}

# ---------------------------------------------------------------- tools
install_tools() {
  scripts/install-codegen-tools.sh ops &&
    "$TOOLS/bin/grpcurl" -version 2>&1 | head -1 &&
    "$TOOLS/bin/grpc_health_probe" -version 2>&1 | head -1
}

server_env() {
  if [ ! -x "$PY" ]; then
    make setup
  fi
  "$PY" -c 'import statekeeper' >/dev/null
}

# ---------------------------------------------------------------- builds
build_python() {
  local venv=$TOOLS/venv-pyclient
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
  fi
  # A real install of the package (not the source tree on PYTHONPATH).
  "$venv/bin/pip" install --quiet --no-warn-script-location "$ROOT/clients/python"
  (cd "$WORK" && "$venv/bin/python" -c 'import statekeeper_client, statekeeper_client.v1.session_pb2_grpc; print("statekeeper_client", statekeeper_client.__version__)')
}

# The client layer's own tests (retries, auth, the resuming Watch and the
# inbox consumer across kills and restarts of a real server, the adapters);
# the project venv has pytest. With PostgreSQL and Redis in the environment
# (make test), the live kill/restart tests run again on the production tier.
test_python_layer() {
  local bin; bin=$(dirname "$PY")
  (cd clients/python && "$bin/ruff" check --quiet . && "$bin/ruff" format --check --quiet statekeeper_client examples tests \
    && "$bin/mypy" && PYTHONPATH=. "$PY" -m pytest -q -p no:cacheprovider tests) || return 1
  if [ -n "${STATEKEEPER_TEST_POSTGRES_DSN:-}" ]; then
    (cd clients/python && STATEKEEPER_CLIENT_TESTS_TIER=production PYTHONPATH=. "$PY" -m pytest -q \
      -p no:cacheprovider tests/test_live_resume.py tests/test_live_errors_retries.py)
  fi
}

build_go() {
  (cd clients/go && go vet ./... && go build -o "$WORK/bin/go-conformance" ./cmd/conformance \
    && go build -o "$WORK/bin/go-agent" ./examples/agent)
}

build_typescript() {
  (cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build)
}

build_java() {
  (cd clients/java && mvn -q -B -Dstyle.color=never package -DskipTests)
}

build_rust() {
  (cd clients/rust && cargo build --quiet --locked --examples)
}

# ---------------------------------------------------------------- client test suites
# Each starts its own `statekeeper serve` processes (STATEKEEPER_BIN) and kills
# and restarts them under the Watch helper and the inbox consumer; with
# STATEKEEPER_TEST_POSTGRES_DSN / _REDIS_URL in the environment (make test)
# their replica tests run on the production tier too.
client_env() {
  env STATEKEEPER_BIN="$(dirname "$PY")/statekeeper" STATEKEEPER_PYTHON="$PY" "$@"
}

test_go_client() {
  (cd clients/go && client_env go test -count=1 ./...)
}

test_typescript_client() {
  (cd clients/typescript && client_env npm test --silent)
}

test_java_client() {
  (cd clients/java && client_env mvn -q -B -Dstyle.color=never test)
}

test_rust_client() {
  (cd clients/rust && client_env cargo test --quiet --locked)
}

# ---------------------------------------------------------------- server
free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# The transport flags of the server and of each tool: plaintext, or mTLS with
# a CA issued for this run (ca.pem, server.pem/key, client.pem/key; client CN
# "conformance", which maps to no tenant, so the API key still authenticates).
SERVER_TLS=()
GRPCURL_TLS=(-plaintext)
PROBE_TLS=()
CLIENT_TLS=()
setup_tls() {
  local dir=$WORK/tls
  "$PY" -m tests.harness.certs "$dir"
  SERVER_TLS=(--tls-cert "$dir/server.pem" --tls-key "$dir/server.key" --tls-client-ca "$dir/ca.pem")
  GRPCURL_TLS=(-cacert "$dir/ca.pem" -cert "$dir/client.pem" -key "$dir/client.key")
  PROBE_TLS=(-tls -tls-ca-cert "$dir/ca.pem" -tls-client-cert "$dir/client.pem" -tls-client-key "$dir/client.key")
  CLIENT_TLS=(STATEKEEPER_TLS_ROOT_CA="$dir/ca.pem" STATEKEEPER_TLS_CLIENT_CERT="$dir/client.pem" STATEKEEPER_TLS_CLIENT_KEY="$dir/client.key")
  echo "mTLS: CA, server and client certificates in $dir"
}

# The production tier: PostgreSQL and Redis from scripts/services.sh (one
# pair per run), the schema migrated by the first replica.
start_services() {
  # Its own directory, not under $WORK: that one is private to this user, and
  # PostgreSQL runs as another when the run is root.
  SERVICES_DIR=$(mktemp -d "${TMPDIR:-/tmp}/statekeeper-conformance-services.XXXXXX")
  scripts/services.sh start "$SERVICES_DIR" >/dev/null
  # shellcheck disable=SC1091
  . "$SERVICES_DIR/env"
  echo "PostgreSQL $STATEKEEPER_TEST_POSTGRES_DSN, Redis $STATEKEEPER_TEST_REDIS_URL"
}

start_server() {
  PORT=$(free_port)
  ADDR=127.0.0.1:$PORT
  API_KEY="conformance-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  local data=$WORK/data-$BACKEND
  mkdir -p "$data"
  local tier=()
  if [ "$BACKEND" = production ]; then
    tier=(--postgres-dsn "$STATEKEEPER_TEST_POSTGRES_DSN" --redis-url "$STATEKEEPER_TEST_REDIS_URL"
      --migrate-on-start --workers 2)
  fi
  "$PY" -m statekeeper serve --listen "$ADDR" --data-dir "$data" "${tier[@]}" \
    --api-key "$API_KEY=conformance" "${SERVER_TLS[@]}" >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  echo "$BACKEND server pid $SERVER_PID on $ADDR (data dir $data)"
  for _ in $(seq 1 150); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "server exited early" >&2
      cat "$WORK/server.log" >&2
      return 1
    fi
    if "$TOOLS/bin/grpc_health_probe" -addr "$ADDR" "${PROBE_TLS[@]}" -connect-timeout 1s -rpc-timeout 1s >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.2
  done
  echo "server did not become healthy in 30 s" >&2
  return 1
}

# ---------------------------------------------------------------- operator tools
check_grpcurl() {
  local grpcurl=$TOOLS/bin/grpcurl services
  services=$("$grpcurl" "${GRPCURL_TLS[@]}" "$ADDR" list)
  echo "$services" | sed 's/^/  list: /'
  local s
  for s in SessionService MemoryService CheckpointService BlackboardService MessageService; do
    if ! grep -qx "statekeeper.v1.$s" <<<"$services"; then
      echo "grpcurl list does not show statekeeper.v1.$s" >&2
      return 1
    fi
  done
  "$grpcurl" "${GRPCURL_TLS[@]}" "$ADDR" describe statekeeper.v1.SessionService.CreateSession | sed 's/^/  describe: /'
  local created
  created=$("$grpcurl" "${GRPCURL_TLS[@]}" -H "x-api-key: $API_KEY" \
    -d '{"session": {"userId": "grpcurl-user", "agentId": "grpcurl"}}' \
    "$ADDR" statekeeper.v1.SessionService/CreateSession)
  echo "$created" | sed 's/^/  CreateSession: /'
  grep -Eq '"session_?[iI]d"' <<<"$created" || { echo "CreateSession returned no sessionId" >&2; return 1; }
  # Without the key the same call must be refused.
  local refused
  if refused=$("$grpcurl" "${GRPCURL_TLS[@]}" -d '{"session": {"userId": "grpcurl-user"}}' \
    "$ADDR" statekeeper.v1.SessionService/CreateSession 2>&1); then
    echo "CreateSession without an API key succeeded" >&2
    return 1
  fi
  grep -q "Unauthenticated" <<<"$refused" || { echo "expected Unauthenticated, got: $refused" >&2; return 1; }
  echo "  without x-api-key: Unauthenticated (as expected)"
  [ "$TLS" = 1 ] || return 0
  # Under mTLS, plaintext and a client without a certificate do not get in.
  if "$grpcurl" -plaintext -H "x-api-key: $API_KEY" "$ADDR" list >/dev/null 2>&1; then
    echo "a plaintext call to the TLS server succeeded" >&2
    return 1
  fi
  if "$grpcurl" -cacert "$WORK/tls/ca.pem" -H "x-api-key: $API_KEY" "$ADDR" list >/dev/null 2>&1; then
    echo "a call without a client certificate succeeded" >&2
    return 1
  fi
  echo "  plaintext, or TLS without a client certificate: refused (as expected)"
}

check_health_probe() {
  "$TOOLS/bin/grpc_health_probe" -addr "$ADDR" "${PROBE_TLS[@]}" -connect-timeout 2s -rpc-timeout 2s
}

# ---------------------------------------------------------------- scenarios
scenario() { # scenario LANGUAGE CMD...
  local lang="$1 ($BACKEND)"; shift
  echo "==> conformance scenario: $lang"
  local start rc=0; start=$(date +%s%N)
  (cd "$WORK" && env "${CLIENT_TLS[@]}" STATEKEEPER_ADDR="$ADDR" STATEKEEPER_API_KEY="$API_KEY" \
    STATEKEEPER_REQUIRE="$REQUIRE" "$@") || rc=$?
  local took; took=$(fmt_ms "$(ms_since "$start")")
  if [ $rc -eq 0 ]; then
    RESULTS+=("$(printf '%-24s PASSED  %10s' "$lang" "$took")")
  else
    RESULTS+=("$(printf '%-24s FAILED  %10s  (exit %d)' "$lang" "$took" "$rc")")
    failures=$((failures + 1))
  fi
}

bg_stage "install grpcurl, grpc_health_probe" install_tools
wanted java && bg_stage "build java client" build_java
wanted rust && bg_stage "build rust client" build_rust
stage "server environment (.venv)" server_env
wanted python && stage "build python client" build_python
wanted python && stage "python client: ruff, mypy, tests" test_python_layer
wanted go && stage "build go client" build_go
wanted typescript && stage "build typescript client" build_typescript
wait_stages
if [ "$CLIENT_TESTS" = 1 ]; then
  wanted go && stage "go client tests" test_go_client
  wanted typescript && stage "typescript client tests" test_typescript_client
  wanted java && stage "java client tests" test_java_client
  wanted rust && stage "rust client tests" test_rust_client
fi
[ "$TLS" = 1 ] && stage "issue CA and certificates (mTLS)" setup_tls

# Every scenario against one server of each tier in turn.
for BACKEND in ${BACKENDS//,/ }; do
  [ "$BACKEND" = production ] && stage "PostgreSQL + Redis (production)" start_services
  stage "start server ($BACKEND)" start_server
  stage "grpc_health_probe ($BACKEND)" check_health_probe
  stage "grpcurl list/describe/call ($BACKEND)" check_grpcurl

  scen_start=$(date +%s%N)
  wanted python && scenario python "$TOOLS/venv-pyclient/bin/python" "$ROOT/clients/python/examples/conformance.py"
  wanted go && scenario go "$WORK/bin/go-conformance"
  wanted typescript && scenario typescript node "$ROOT/clients/typescript/dist/conformance.js"
  wanted java && scenario java java -cp "$ROOT/clients/java/target/classes:$(cat "$ROOT/clients/java/target/classpath.txt")" dev.statekeeper.examples.Conformance
  wanted rust && scenario rust "$ROOT/clients/rust/target/debug/examples/conformance"
  TIMINGS+=("$(printf '%-34s %10s' "conformance scenarios ($BACKEND)" "$(fmt_ms "$(ms_since "$scen_start")")")")

  # The server must still be healthy after every client ran.
  stage "grpc_health_probe (after, $BACKEND)" check_health_probe
  stop_server
done

report
total=${#RESULTS[@]}
echo "conformance: $((total - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
