#!/usr/bin/env bash
# Fails when the committed generated code (Go and Python, see scripts/generate.sh)
# differs from what proto/ generates. Java, TypeScript and Rust stubs are not
# committed: their builds in scripts/conformance.sh generate them.
set -euo pipefail
cd "$(dirname "$0")/.."
GENERATED=(clients/go/statekeeperv1 clients/go/statekeeper/errors_gen.go clients/python/statekeeper_client/v1)
scripts/generate.sh
if ! git diff --exit-code --stat -- "${GENERATED[@]}"; then
  echo "generated code is stale: run 'make generate' and commit the result" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- "${GENERATED[@]}")
if [ -n "$untracked" ]; then
  echo "generated files are not committed:" >&2
  echo "$untracked" >&2
  exit 1
fi
echo "generated code is fresh"
