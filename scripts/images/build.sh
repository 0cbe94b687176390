#!/usr/bin/env bash
# `npm run images [-- options]`: builds the chart's five images without a container engine (buildah, chroot
# isolation) from the same Dockerfiles a Docker user builds (deploy/images/), on a base made here in place of
# node:24-bookworm-slim: a Debian rootfs from Debian's packages (mmdebstrap) + Node and npm from their npm packages
# + the machine's extra CA (scripts/images/base.sh). Needs root and the Debian packages buildah and mmdebstrap.
#
#   --push PREFIX   also push every image as PREFIX/<name>:<tag> (e.g. 127.0.0.1:5000/tcab or ghcr.io/me/tcab);
#                   --tls-verify=false is used for 127.0.0.1/localhost/[::1] registries (plain HTTP); for a
#                   registry that needs credentials, `buildah login REGISTRY` (or `docker login`) first
#   --tag TAG       image tag (default: package.json's version, the chart's appVersion)
#   --only NAMES    comma-separated subset of: driver,dispatcher,nats,npm-cache,egress-proxy
#   --extra-ca FILE PEM certificates to trust in the base (default: $TCAB_EXTRA_CA, else NODE_EXTRA_CA_CERTS,
#                   else SSL_CERT_FILE); only the certificates Debian's own bundle lacks are added; /dev/null
#                   for none (images to publish should not carry a build machine's proxy CA)
#
# Images are named ghcr.io/tcab/<name>:<tag> (the chart's defaults) in a buildah storage of their own:
# ${TCAB_CACHE_DIR:-~/.cache/tcab}/images/storage (list them: scripts/images/buildah.sh images). The base and the
# Debian rootfs are cached by a key naming every version; Dockerfile steps are cached as buildah layers.
# The last stdout line is a JSON summary (names, ids, sizes, seconds) for tests and tools.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
here="$repo/scripts/images"
# shellcheck source=scripts/images/env.sh
. "$here/env.sh"

push=""
tag="$(node -p 'require(process.argv[1]).version' "$repo/package.json" 2>/dev/null || sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/package.json")"
only="driver,dispatcher,nats,npm-cache,egress-proxy"
extra_ca="${TCAB_EXTRA_CA:-${NODE_EXTRA_CA_CERTS:-${SSL_CERT_FILE:-}}}"
while [ $# -gt 0 ]; do
  case "$1" in
    --push) push="${2:?--push needs a registry prefix}"; shift 2 ;;
    --tag) tag="${2:?}"; shift 2 ;;
    --only) only="${2:?}"; shift 2 ;;
    --extra-ca) extra_ca="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "images: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "images: $tool is missing: apt-get install -y --no-install-recommends buildah mmdebstrap" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "images: run as root (mmdebstrap --mode=root and buildah's chroot isolation)" >&2; exit 1; }

# One build at a time per machine (the base, the rootfs and the tags are shared).
mkdir -p "$TCAB_IMAGES_DIR"
exec 9>"$TCAB_IMAGES_DIR/.lock"
flock 9

now_ms() { echo $(($(date +%s%N) / 1000000)); }
started=$(now_ms)
secs() { local ms=$(($(now_ms) - $1)); printf "%d.%01d" $((ms / 1000)) $((ms % 1000 / 100)); }

base="$("$here/base.sh" "$extra_ca")"
declare -A seconds=()
build() { # name dockerfile context [build-arg...]
  local name="$1" file="$2" context="$3"; shift 3
  local t; t=$(now_ms)
  echo "images: building $IMAGE_PREFIX/$name:$tag from ${file#"$repo"/}" >&2
  tcab_buildah build --isolation chroot --pull=never --layers --format oci -f "$file" \
    --build-arg "BASE=$base" "$@" -t "$IMAGE_PREFIX/$name:$tag" "$context" >&2
  seconds[$name]="$(secs "$t")"
  echo "images: $name built in ${seconds[$name]}s" >&2
}
IFS=, read -r -a names <<<"$only"
for name in "${names[@]}"; do
  case "$name" in
    driver|dispatcher|npm-cache|egress-proxy) build "$name" "$repo/deploy/images/Dockerfile.$name" "$repo" ;;
    nats)
      # The context is the directory holding a nats-server binary built from the Go module proxy.
      nats_bin="$("$repo/scripts/ensure-nats-server.sh")"
      build nats "$repo/deploy/images/Dockerfile.nats" "$(dirname "$nats_bin")" ;;
    *) echo "images: unknown image $name (driver, dispatcher, nats, npm-cache, egress-proxy)" >&2; exit 2 ;;
  esac
done
# Dangling layers of earlier builds of these tags.
tcab_buildah rmi --prune >/dev/null 2>&1 || true

if [ -n "$push" ]; then
  tls=()
  case "$push" in 127.0.0.1:*|localhost:*|\[::1\]:*) tls=(--tls-verify=false) ;; esac
  for name in "${names[@]}"; do
    t=$(now_ms)
    tcab_buildah push "${tls[@]}" --format oci "$IMAGE_PREFIX/$name:$tag" "docker://$push/$name:$tag" >&2
    echo "images: pushed $push/$name:$tag in $(secs "$t")s" >&2
  done
fi

summary="{\"base\":\"$base\",\"tag\":\"$tag\",\"storage\":\"$TCAB_IMAGES_DIR/storage\",\"seconds\":$(secs "$started"),\"images\":{"
sep=""
for name in "${names[@]}"; do
  id="$(tcab_buildah inspect --type image --format '{{.FromImageID}}' "$IMAGE_PREFIX/$name:$tag")"
  size="$(tcab_buildah images --noheading --format '{{.Size}}' "$IMAGE_PREFIX/$name:$tag" | head -1)"
  summary+="$sep\"$name\":{\"ref\":\"$IMAGE_PREFIX/$name:$tag\",\"id\":\"$id\",\"size\":\"$size\",\"seconds\":${seconds[$name]}}"
  sep=","
done
echo "images: done in $(secs "$started")s" >&2
echo "$summary}}"
