#!/usr/bin/env bash
# Regenerates every piece of code derived from proto/ (one command: `make generate`).
# Python stubs (.py, .pyi, _grpc.py) come from grpc_tools.protoc, which ships the
# protoc compiler and the gRPC Python plugin together.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
GRPC_PROTO_INCLUDE=$("$PY" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
OUT=server
rm -f "$OUT"/statekeeper/v1/*_pb2*.py "$OUT"/statekeeper/v1/*_pb2*.pyi
"$PY" -m grpc_tools.protoc -Iproto -I"$GRPC_PROTO_INCLUDE" \
  --python_out="$OUT" --pyi_out="$OUT" --grpc_python_out="$OUT" \
  proto/statekeeper/v1/*.proto
touch "$OUT"/statekeeper/v1/__init__.py
if [ -x scripts/generate-clients.sh ]; then
  scripts/generate-clients.sh
fi
