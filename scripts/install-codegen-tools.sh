#!/usr/bin/env bash
# Installs the code generators of the committed Go stubs (and the two operator
# tools) into .tools/ (gitignored), each at a pinned version, through the Go
# module proxy (go install):
#
#   protoc-gen-go, -go-grpc        codegen: Go stubs (scripts/generate.sh)
#   grpcurl, grpc_health_probe     ops: scripts/conformance.sh
#
# Nothing else is installed here: Python stubs come from grpcio-tools (the
# project venv), and the Java, TypeScript and Rust clients generate their stubs
# in their own builds with their own toolchain (protobuf-maven-plugin, the npm
# prebuild, build.rs with a vendored protoc).
#
# Idempotent: a tool whose stamp (.tools/stamps/NAME) names the pinned version
# and whose binary exists is skipped, so a second run takes well under a second.
#
# Usage: scripts/install-codegen-tools.sh [codegen|ops|all]   (default: codegen)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/.tools
BIN=$TOOLS/bin
STAMPS=$TOOLS/stamps
mkdir -p "$BIN" "$STAMPS"

# ---- pinned versions (change here, then run scripts/generate.sh) ----
PROTOC_GEN_GO_VERSION=v1.36.12     # google.golang.org/protobuf
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2  # google.golang.org/grpc/cmd/protoc-gen-go-grpc
GRPCURL_VERSION=v1.9.4
GRPC_HEALTH_PROBE_VERSION=v0.4.62

what=${1:-codegen}

have() { # have NAME VERSION BINARY...: true when the stamp matches and binaries exist
  local name=$1 version=$2; shift 2
  [ "$(cat "$STAMPS/$name" 2>/dev/null)" = "$version" ] || return 1
  local b
  for b in "$@"; do [ -x "$b" ] || return 1; done
}
stamp() { echo "$2" >"$STAMPS/$1"; }
log() { echo "install-codegen-tools: $*" >&2; }

go_tool() { # go_tool STAMP VERSION BINARY PACKAGE@VERSION
  local name=$1 version=$2 binary=$3 pkg=$4
  have "$name" "$version" "$BIN/$binary" && return
  log "$pkg (Go module proxy)"
  GOBIN=$BIN GOFLAGS=-buildvcs=false go install "$pkg"
  stamp "$name" "$version"
}

install_go_plugins() {
  go_tool protoc-gen-go "$PROTOC_GEN_GO_VERSION" protoc-gen-go \
    "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
  go_tool protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION" protoc-gen-go-grpc \
    "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
}

install_ops_tools() {
  go_tool grpcurl "$GRPCURL_VERSION" grpcurl \
    "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
  if ! have grpc-health-probe "$GRPC_HEALTH_PROBE_VERSION" "$BIN/grpc_health_probe"; then
    go_tool grpc-health-probe-build "$GRPC_HEALTH_PROBE_VERSION" grpc-health-probe \
      "github.com/grpc-ecosystem/grpc-health-probe@$GRPC_HEALTH_PROBE_VERSION"
    ln -sf grpc-health-probe "$BIN/grpc_health_probe"
    stamp grpc-health-probe "$GRPC_HEALTH_PROBE_VERSION"
  fi
}

case "$what" in
  codegen) install_go_plugins ;;
  ops) install_ops_tools ;;
  all) install_go_plugins; install_ops_tools ;;
  *) echo "usage: $0 [codegen|ops|all]" >&2; exit 2 ;;
esac
