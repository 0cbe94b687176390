#!/usr/bin/env bash
# Builds crane (go-containerregistry: a push/pull client and `crane registry serve`) from the Go module proxy once
# per version, cached under ~/.cache/tcab; prints its path.
set -euo pipefail
version="${TCAB_CRANE_VERSION:-v0.22.1}"
dir="${TCAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tcab}/crane-${version}"
if [ ! -x "$dir/crane" ]; then
  start=$(date +%s)
  echo "ensure-crane: building crane ${version} (first run on this machine)" >&2
  rm -rf "$dir.partial" && mkdir -p "$dir.partial"
  GOBIN="$dir.partial" CGO_ENABLED=0 GOFLAGS=-trimpath nice -n 19 go install -ldflags="-s -w" "github.com/google/go-containerregistry/cmd/crane@${version}" >&2
  rm -rf "$dir" && mv "$dir.partial" "$dir"
  echo "ensure-crane: built in $(( $(date +%s) - start ))s" >&2
fi
echo "$dir/crane"
