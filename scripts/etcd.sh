#!/usr/bin/env bash
# A real etcd server on loopback for the comparison benchmark (bench/etcd,
# `make bench-etcd`), in a directory of its own. Installs etcd-server from
# Debian packages (apt-get) when it is missing.
#
#   scripts/etcd.sh install          install etcd-server if missing
#   scripts/etcd.sh start DIR        start etcd on free ports, data in DIR; print host:port
#   scripts/etcd.sh stop DIR         stop what DIR started (nothing else)
#
# Durability as etcd ships it: the WAL is fsynced on every commit.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "etcd: $*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1
  fi
}

etcd_bin() {
  command -v etcd 2>/dev/null || { [ -x /usr/bin/etcd ] && echo /usr/bin/etcd; }
}

install() {
  etcd_bin >/dev/null && return 0
  log "installing etcd-server from Debian packages"
  # The package must not start a system-wide etcd: policy-rc.d denies it.
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
    as_root chmod 0755 "$policy"
    made_policy=1
  fi
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    etcd-server >/dev/null
  [ "$made_policy" = 1 ] && as_root rm -f "$policy"
  return 0
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir=$1 client peer bin
  bin=$(etcd_bin)
  client=$(free_port)
  peer=$(free_port)
  mkdir -p "$dir/data"
  # The Debian build of 3.4 on amd64 needs no ETCD_UNSUPPORTED_ARCH.
  "$bin" --name bench --data-dir "$dir/data" \
    --listen-client-urls "http://127.0.0.1:$client" \
    --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "bench=http://127.0.0.1:$peer" \
    --log-level error >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"
  echo "127.0.0.1:$client" >"$dir/address"
  for _ in $(seq 200); do
    if curl -fsS "http://127.0.0.1:$client/health" 2>/dev/null | grep -q true; then
      cat "$dir/address"
      return 0
    fi
    kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null || break
    sleep 0.05
  done
  log "etcd did not start; see $dir/etcd.log"
  stop "$dir"
  return 1
}

stop() {
  local dir=$1 pid
  [ -s "$dir/etcd.pid" ] || return 0
  pid=$(cat "$dir/etcd.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/etcd.pid"
}

command=${1:-}
case "$command" in
  install) install ;;
  start) [ -n "${2:-}" ] || { echo "usage: $0 start DIR" >&2; exit 2; }; install; start "$2" ;;
  stop) [ -n "${2:-}" ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
  *) echo "usage: $0 install | start DIR | stop DIR" >&2; exit 2 ;;
esac
