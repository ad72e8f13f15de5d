#!/usr/bin/env bash
# buf breaking: the contract in the working tree against the BASELINE contract.
#
# BASELINE is the commit of the last deliberate contract reset. Every change
# since then must be wire- and JSON-compatible with it (FILE rules, buf.yaml),
# whether committed or not: comparing with the tip of main instead would let a
# breaking change through as soon as it is committed.
#
# Moving BASELINE is a contract reset. It is allowed only before 1.0 (nothing
# published yet), in a commit of its own whose message gives the reason. Resets:
#
#   c59f45c  issue 10: Message -> SessionMessage, request_id in MessageService,
#            google.api.field_behavior, ErrorReason cleaned up (before 1.0)
#
# BUF_BREAKING_AGAINST overrides the baseline for one run (any git ref).
set -euo pipefail
cd "$(dirname "$0")/.."
BASELINE=c59f45c4559e12dffeba0dc3ad68b845f7a58862
against=${BUF_BREAKING_AGAINST:-$BASELINE}
if ! git cat-file -e "$against^{commit}" 2>/dev/null; then
  # A shallow clone may lack the baseline: fail rather than skip the check.
  echo "buf-breaking: baseline $against is not in this clone (git fetch --unshallow)" >&2
  exit 1
fi
.venv/bin/buf breaking --against ".git#ref=$against"
echo "no breaking change against the contract baseline ${against:0:12}"
