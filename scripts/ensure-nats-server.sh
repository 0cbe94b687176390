#!/usr/bin/env bash
# Builds nats-server from the Go module proxy once per version, cached under ~/.cache/tcab; prints its path.
# Tests start a real server with JetStream from this binary (test/support/nats-server.ts).
set -euo pipefail
version="${TCAB_NATS_SERVER_VERSION:-v2.15.3}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/tcab/nats-server-${version}"
if [ ! -x "$dir/nats-server" ]; then
  start=$(date +%s)
  echo "ensure-nats-server: building nats-server ${version} (first run on this machine)" >&2
  mkdir -p "$dir"
  GOBIN="$dir" CGO_ENABLED=0 GOFLAGS=-trimpath go install -ldflags="-s -w" "github.com/nats-io/nats-server/v2@${version}" >&2
  echo "ensure-nats-server: built in $(( $(date +%s) - start ))s" >&2
fi
echo "$dir/nats-server"
