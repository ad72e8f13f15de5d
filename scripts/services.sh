#!/usr/bin/env bash
# Real Redis and PostgreSQL servers for tests and benchmarks, on loopback, in a
# directory of their own. Installs redis-server, postgresql and docker-compose
# (to validate the compose file) from Debian packages (apt-get) when missing. PostgreSQL refuses to run as root,
# so as root it runs as the `postgres` user (or `nobody`) via runuser.
#
#   scripts/services.sh install                  install what is missing
#   scripts/services.sh start DIR                start both on free ports, write DIR/env
#   scripts/services.sh stop DIR                 stop both (what DIR started, nothing else)
#   scripts/services.sh start-redis|stop-redis DIR        one service, same port as before
#   scripts/services.sh start-postgres|stop-postgres DIR
#   scripts/services.sh env DIR                  rewrite DIR's env files (ports of DIR)
#
# DIR/env holds the export lines tests read:
#   STATEKEEPER_TEST_POSTGRES_DSN, STATEKEEPER_TEST_REDIS_URL, STATEKEEPER_TEST_SERVICES_DIR
# (TEST_ names on purpose: a server started by a test must not pick them up.)
# DIR/statekeeper.env holds what `statekeeper serve` and `migrate` read to run
# the production tier on this pair: STATEKEEPER_POSTGRES_DSN, STATEKEEPER_REDIS_URL.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=$PWD/scripts/services.sh

log() { echo "services: $*" >&2; }

pg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1
  fi
}

install() {
  local missing=()
  command -v redis-server >/dev/null || missing+=(redis-server)
  pg_bindir >/dev/null || missing+=(postgresql)
  # docker-compose validates docker-compose.yml in tests/ops (no engine needed).
  command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 ||
    missing+=(docker-compose)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} from Debian packages"
  # Packages must not start their own system-wide instances: a policy-rc.d
  # denies service starts during the install, and no default cluster is made.
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
    as_root chmod 0755 "$policy"
    made_policy=1
  fi
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    as_root mkdir -p /etc/postgresql-common
    echo 'create_main_cluster = false' | as_root tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
  [ "$made_policy" = 1 ] && as_root rm -f "$policy"
  return 0
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The port a service of DIR uses: chosen once, kept across restarts.
port_of() {
  local file=$1/$2.port
  [ -s "$file" ] || free_port >"$file"
  cat "$file"
}

pg_user() {
  if [ "$(id -u)" != 0 ]; then id -un; elif id postgres >/dev/null 2>&1; then echo postgres; else
    echo nobody
  fi
}

as_pg() {
  local user
  user=$(pg_user)
  if [ "$user" = "$(id -un)" ]; then "$@"; else runuser -u "$user" -- "$@"; fi
}

start_redis() {
  local dir=$1 port
  port=$(port_of "$dir" redis)
  mkdir -p "$dir/redis"
  # A cache: no RDB snapshots, no AOF. A restart comes back empty.
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --daemonize yes --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log" \
    --dir "$dir/redis"
  for _ in $(seq 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  log "redis did not start; see $dir/redis/redis.log"
  return 1
}

stop_redis() {
  local dir=$1 pid
  [ -s "$dir/redis/redis.pid" ] || return 0
  pid=$(cat "$dir/redis/redis.pid")
  redis-cli -p "$(port_of "$dir" redis)" shutdown nosave >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  rm -f "$dir/redis/redis.pid"
}

start_postgres() {
  local dir=$1 port bin data=$1/pg/data
  bin=$(pg_bindir)
  port=$(port_of "$dir" postgres)
  if [ ! -d "$data" ]; then
    mkdir -p "$dir/pg/sock"
    chmod 0755 "$dir"
    [ "$(id -u)" = 0 ] && chown -R "$(pg_user)" "$dir/pg"
    as_pg "$bin/initdb" -D "$data" -U statekeeper --auth=trust --encoding=UTF8 \
      --no-instructions >"$dir/pg/initdb.log"
  fi
  as_pg "$bin/pg_ctl" -D "$data" -l "$dir/pg/postgres.log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir/pg/sock -c max_connections=200" \
    start >/dev/null
  if [ ! -e "$dir/pg/created" ]; then
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U statekeeper statekeeper
    touch "$dir/pg/created"
  fi
}

stop_postgres() {
  local dir=$1 bin
  bin=$(pg_bindir)
  [ -f "$dir/pg/data/postmaster.pid" ] || return 0
  as_pg "$bin/pg_ctl" -D "$dir/pg/data" -m fast -w -t 60 stop >/dev/null
}

write_env() {
  local dir=$1
  cat >"$dir/env" <<EOF
export STATEKEEPER_TEST_POSTGRES_DSN=postgresql://statekeeper@127.0.0.1:$(port_of "$dir" postgres)/statekeeper
export STATEKEEPER_TEST_REDIS_URL=redis://127.0.0.1:$(port_of "$dir" redis)/0
export STATEKEEPER_TEST_SERVICES_DIR=$dir
export STATEKEEPER_TEST_SERVICES_SCRIPT=$SCRIPT
EOF
  cat >"$dir/statekeeper.env" <<EOF
export STATEKEEPER_POSTGRES_DSN=postgresql://statekeeper@127.0.0.1:$(port_of "$dir" postgres)/statekeeper
export STATEKEEPER_REDIS_URL=redis://127.0.0.1:$(port_of "$dir" redis)/0
EOF
}

need_dir() {
  [ -n "${1:-}" ] || { echo "usage: $0 $command DIR" >&2; exit 2; }
  mkdir -p "$1"
}

command=${1:-}
case "$command" in
  install) install ;;
  start)
    need_dir "${2:-}"
    install
    start_redis "$2"
    start_postgres "$2"
    write_env "$2"
    log "redis on port $(port_of "$2" redis), postgres on port $(port_of "$2" postgres) ($2)"
    ;;
  stop)
    need_dir "${2:-}"
    stop_redis "$2"
    stop_postgres "$2"
    ;;
  env) need_dir "${2:-}"; write_env "$2" ;;
  start-redis) need_dir "${2:-}"; start_redis "$2" ;;
  stop-redis) need_dir "${2:-}"; stop_redis "$2" ;;
  start-postgres) need_dir "${2:-}"; start_postgres "$2" ;;
  stop-postgres) need_dir "${2:-}"; stop_postgres "$2" ;;
  *)
    echo "usage: $0 install | {start,stop,env,start-redis,stop-redis,start-postgres,stop-postgres} DIR" >&2
    exit 2
    ;;
esac
