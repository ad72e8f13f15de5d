#!/usr/bin/env bash
# Fails when the committed generated code differs from what proto/ generates.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/generate.sh
if ! git diff --exit-code --stat -- server/statekeeper/v1 clients; then
  echo "generated code is stale: run 'make generate' and commit the result" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- server/statekeeper/v1 clients)
if [ -n "$untracked" ]; then
  echo "generated files are not committed:" >&2
  echo "$untracked" >&2
  exit 1
fi
echo "generated code is fresh"
