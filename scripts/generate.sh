#!/usr/bin/env bash
# Regenerates the committed code derived from proto/ (one command: `make generate`):
#
#   Go      clients/go/statekeeperv1/*.pb.go     buf generate (buf.gen.yaml) with
#                                                protoc-gen-go, protoc-gen-go-grpc
#   Python  clients/python/statekeeper_client/v1  grpc_tools.protoc (it ships protoc
#                                                and the gRPC Python plugin together)
#
# The Python stubs exist once: the server imports them from the client package
# (statekeeper_client.v1), which it depends on.
#
# Java, TypeScript and Rust stubs are not committed: each client's own build
# generates them from proto/ (protobuf-maven-plugin, the npm prebuild, build.rs);
# scripts/conformance.sh proves those builds.
#
# Deterministic: the output is removed first and every generator is pinned
# (scripts/install-codegen-tools.sh), so a second run changes no byte.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
BUF=${BUF:-.venv/bin/buf}

scripts/install-codegen-tools.sh codegen

# 1. Remove what the previous run generated (and nothing hand-written), so that
#    the stubs of a deleted proto cannot survive.
rm -f clients/go/statekeeperv1/*.pb.go
rm -rf clients/python/statekeeper_client/v1

# 2. Go through buf.gen.yaml, for the contract only: the vendored
#    third_party/google/api protos are imported from their own Go package
#    (google.golang.org/genproto/googleapis/api/annotations).
"$BUF" generate --path proto/statekeeper

# 3. Python. protoc names the package after the proto path (statekeeper.v1);
#    the imports between the generated modules are rewritten to the client
#    package's statekeeper_client.v1.
GRPC_PROTO_INCLUDE=$("$PY" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# google/api/*.proto come from third_party/ at compile time; their generated
# modules (google.api.field_behavior_pb2) from googleapis-common-protos.
"$PY" -m grpc_tools.protoc -Iproto -Ithird_party -I"$GRPC_PROTO_INCLUDE" \
  --python_out="$tmp" --pyi_out="$tmp" --grpc_python_out="$tmp" \
  proto/statekeeper/v1/*.proto
mkdir -p clients/python/statekeeper_client/v1
for f in "$tmp"/statekeeper/v1/*; do
  sed -e 's/^from statekeeper\.v1 import /from statekeeper_client.v1 import /' \
      -e "s/'statekeeper\.v1\.\([a-z_]*_pb2\)'/'statekeeper_client.v1.\1'/" \
      "$f" >"clients/python/statekeeper_client/v1/$(basename "$f")"
done
cat >clients/python/statekeeper_client/v1/__init__.py <<'PYEOF'
"""Generated protobuf and gRPC stubs of statekeeper.v1 (do not edit; see scripts/generate.sh)."""
PYEOF
# 4. The Go client's sentinel errors, one per ErrorReason value
#    (statekeeper/errors_gen.go), follow the enum just generated.
(cd clients/go && go generate ./statekeeper)
echo "generate: done"
