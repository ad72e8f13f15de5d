#!/usr/bin/env bash
# Regenerates the client code of every language from proto/ (called at the end
# of scripts/generate.sh, i.e. by `make generate` and by the freshness check).
#
#   Go          clients/go/statekeeperv1/*.pb.go          (buf + protoc-gen-go, -go-grpc)
#   TypeScript  clients/typescript/src/gen/**.ts          (buf + ts-proto, @grpc/grpc-js)
#   Java        clients/java/src/main/java/dev/statekeeper/v1  (buf + protoc java, grpc-java)
#   Rust        clients/rust/src/gen/*.rs                 (buf + protoc-gen-prost, -tonic)
#   Python      clients/python/statekeeper_client/v1/     (grpc_tools.protoc, imports
#                                                         rewritten to statekeeper_client.v1)
#
# Deterministic: the output directories are emptied first and every generator is
# pinned (scripts/install-codegen-tools.sh), so a second run changes no byte.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
BUF=${BUF:-.venv/bin/buf}

scripts/install-codegen-tools.sh codegen

# 1. Remove what the previous run generated (and nothing hand-written).
rm -f clients/go/statekeeperv1/*.pb.go
rm -rf clients/java/src/main/java/dev/statekeeper/v1
rm -rf clients/typescript/src/gen
rm -rf clients/rust/src/gen
rm -rf clients/python/statekeeper_client/v1

# 2. Go, TypeScript, Java, Rust through buf.gen.yaml.
"$BUF" generate

# 3. Python: the server owns the import path statekeeper.v1, so the client's
#    copy lives at statekeeper_client.v1. The descriptors are byte-identical to
#    the server's, so both packages can be imported in one process.
GRPC_PROTO_INCLUDE=$("$PY" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m grpc_tools.protoc -Iproto -I"$GRPC_PROTO_INCLUDE" \
  --python_out="$tmp" --pyi_out="$tmp" --grpc_python_out="$tmp" \
  proto/statekeeper/v1/*.proto
mkdir -p clients/python/statekeeper_client/v1
for f in "$tmp"/statekeeper/v1/*; do
  sed -e 's/^from statekeeper\.v1 import /from statekeeper_client.v1 import /' \
      -e "s/'statekeeper\.v1\.\([a-z_]*_pb2\)'/'statekeeper_client.v1.\1'/" \
      "$f" >"clients/python/statekeeper_client/v1/$(basename "$f")"
done
cat >clients/python/statekeeper_client/v1/__init__.py <<'PYEOF'
"""Generated protobuf and gRPC stubs of statekeeper.v1 (do not edit; see scripts/generate-clients.sh)."""
PYEOF
echo "generate-clients: done"
