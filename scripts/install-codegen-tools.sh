#!/usr/bin/env bash
# Installs the code generators (and the two operator tools) that the clients
# need into .tools/ (gitignored), each at a pinned version, from the language's
# own registry through its ordinary client:
#
#   protoc, protoc-gen-grpc-java   Maven Central (mvn dependency:copy)
#   protoc-gen-go, -go-grpc        Go module proxy (go install)
#   grpcurl, grpc_health_probe     Go module proxy (go install)
#   protoc-gen-prost, -tonic       crates.io (cargo install --locked)
#   ts-proto                       npm (npm ci against a committed lockfile)
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

# ---- pinned versions (change here, then run scripts/generate-clients.sh) ----
PROTOC_VERSION=4.36.2              # com.google.protobuf:protoc (protoc 36.2)
GRPC_JAVA_VERSION=1.83.1           # io.grpc:protoc-gen-grpc-java (the linux-x86_64 exe of 1.84+ is not served)
PROTOC_GEN_GO_VERSION=v1.36.12     # google.golang.org/protobuf
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2  # google.golang.org/grpc/cmd/protoc-gen-go-grpc
PROTOC_GEN_PROST_VERSION=0.5.0     # prost 0.14
PROTOC_GEN_TONIC_VERSION=0.5.0     # tonic 0.14
GRPCURL_VERSION=v1.9.4
GRPC_HEALTH_PROBE_VERSION=v0.4.62
MAVEN_DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
# ts-proto's version lives in clients/typescript/codegen/package.json (+ lockfile).

what=${1:-codegen}

have() { # have NAME VERSION BINARY...: true when the stamp matches and binaries exist
  local name=$1 version=$2; shift 2
  [ "$(cat "$STAMPS/$name" 2>/dev/null)" = "$version" ] || return 1
  local b
  for b in "$@"; do [ -x "$b" ] || return 1; done
}
stamp() { echo "$2" >"$STAMPS/$1"; }
log() { echo "install-codegen-tools: $*" >&2; }

maven_classifier() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=osx ;;
    *) echo "unsupported OS $(uname -s)" >&2; exit 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch_64 ;;
    *) echo "unsupported CPU $(uname -m)" >&2; exit 1 ;;
  esac
  echo "$os-$arch"
}

maven_exe() { # maven_exe GROUP ARTIFACT VERSION DEST: fetch a native exe from Maven Central
  local group=$1 artifact=$2 version=$3 dest=$4 classifier tmp
  classifier=$(maven_classifier)
  tmp=$(mktemp -d)
  mvn -q -B -Dstyle.color=never "$MAVEN_DEPENDENCY_PLUGIN:copy" \
    -Dartifact="$group:$artifact:$version:exe:$classifier" \
    -DoutputDirectory="$tmp" -Dmdep.stripVersion=true -Dmdep.overWriteReleases=true >&2
  install -m 0755 "$tmp/$artifact-$classifier.exe" "$dest"
  rm -rf "$tmp"
}

install_protoc() {
  have protoc "$PROTOC_VERSION" "$BIN/protoc" && return
  log "protoc $PROTOC_VERSION (Maven Central)"
  maven_exe com.google.protobuf protoc "$PROTOC_VERSION" "$BIN/protoc"
  stamp protoc "$PROTOC_VERSION"
}

install_grpc_java() {
  have grpc-java "$GRPC_JAVA_VERSION" "$BIN/protoc-gen-grpc-java" && return
  log "protoc-gen-grpc-java $GRPC_JAVA_VERSION (Maven Central)"
  maven_exe io.grpc protoc-gen-grpc-java "$GRPC_JAVA_VERSION" "$BIN/protoc-gen-grpc-java"
  stamp grpc-java "$GRPC_JAVA_VERSION"
}

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

install_rust_plugins() {
  local version="$PROTOC_GEN_PROST_VERSION+$PROTOC_GEN_TONIC_VERSION"
  have rust-plugins "$version" "$BIN/protoc-gen-prost" "$BIN/protoc-gen-tonic" && return
  log "protoc-gen-prost $PROTOC_GEN_PROST_VERSION, protoc-gen-tonic $PROTOC_GEN_TONIC_VERSION (crates.io)"
  # --root puts the binaries in .tools/bin; the shared target dir lets the
  # second crate reuse the first one's compiled dependencies.
  CARGO_TARGET_DIR=$TOOLS/cargo-target cargo install --quiet --locked --root "$TOOLS" \
    "protoc-gen-prost@$PROTOC_GEN_PROST_VERSION" "protoc-gen-tonic@$PROTOC_GEN_TONIC_VERSION"
  rm -rf "$TOOLS/cargo-target"
  stamp rust-plugins "$version"
}

install_ts_proto() {
  local src=$ROOT/clients/typescript/codegen dest=$TOOLS/ts-proto version
  version=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-16)
  have ts-proto "$version" "$dest/node_modules/.bin/protoc-gen-ts_proto" && return
  log "ts-proto (npm, lockfile clients/typescript/codegen/package-lock.json)"
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --silent --no-audit --no-fund)
  stamp ts-proto "$version"
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
  codegen)
    install_protoc; install_grpc_java; install_go_plugins; install_ts_proto; install_rust_plugins ;;
  ops) install_ops_tools ;;
  all)
    install_protoc; install_grpc_java; install_go_plugins; install_ts_proto; install_rust_plugins
    install_ops_tools ;;
  *) echo "usage: $0 [codegen|ops|all]" >&2; exit 2 ;;
esac
