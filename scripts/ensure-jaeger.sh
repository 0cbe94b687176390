#!/usr/bin/env bash
# Builds Jaeger (the v2 all-in-one binary: OTLP receiver, memory store, query API) from the Go module proxy once per
# version, cached under ~/.cache/tcab; prints its path. The OpenTelemetry export test (test/support/jaeger.ts) starts
# it on 127.0.0.1 as a real tracing backend. Jaeger's v2 binary is tagged in the Go module as v1.x.
set -euo pipefail
version="${TCAB_JAEGER_VERSION:-v1.75.0}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/tcab/jaeger-${version}"
if [ ! -x "$dir/jaeger" ]; then
  start=$(date +%s)
  echo "ensure-jaeger: building jaeger ${version} (first run on this machine, several minutes)" >&2
  mkdir -p "$dir"
  # The module's go.mod has replace directives, which `go install pkg@version` refuses: build inside the
  # downloaded (read-only) module source instead, with a private build cache dir so a half build never lands in $dir.
  src=$(GOFLAGS=-mod=mod go mod download -json "github.com/jaegertracing/jaeger@${version}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$dir/jaeger.partial" ./cmd/jaeger) >&2
  mv "$dir/jaeger.partial" "$dir/jaeger"
  echo "ensure-jaeger: built in $(( $(date +%s) - start ))s" >&2
fi
echo "$dir/jaeger"
