#!/usr/bin/env bash
# The production topology of docker-compose.yml as local processes, for a
# machine without a Docker engine (`make run-production`):
#
#   PostgreSQL + Redis   scripts/services.sh start DIR (loopback, DIR/statekeeper.env)
#   migrate              statekeeper migrate (every schema, once)
#   two replicas         statekeeper serve --workers 2: two server processes on
#                        one port (SO_REUSEPORT), each a full replica
#
#   scripts/run-production.sh [DIR] [-- extra serve flags]
#
# LISTEN (default 127.0.0.1:50051) and METRICS (default 127.0.0.1:9090; the
# second replica serves 9091) choose the ports. With STATEKEEPER_POSTGRES_DSN
# already set (and STATEKEEPER_REDIS_URL), the services of DIR are not started:
# the script migrates and serves on those. Ctrl-C (SIGINT) or SIGTERM drains
# both replicas; the services keep running (scripts/services.sh stop DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=/tmp/statekeeper-production
if [ $# -gt 0 ] && [ "$1" != "--" ]; then dir=$1; shift; fi
[ "${1:-}" = "--" ] && shift
statekeeper=${STATEKEEPER:-.venv/bin/statekeeper}

if [ -z "${STATEKEEPER_POSTGRES_DSN:-}" ]; then
  scripts/services.sh start "$dir"
  # shellcheck disable=SC1091
  . "$dir/statekeeper.env"
fi
"$statekeeper" migrate
exec "$statekeeper" serve --workers 2 \
  --listen "${LISTEN:-127.0.0.1:50051}" \
  --metrics-listen "${METRICS:-127.0.0.1:9090}" \
  --data-dir "$dir/data" "$@"
