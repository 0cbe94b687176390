# Sourced by the image scripts: versions, the cache directory and buildah on the images' own storage.
# shellcheck shell=bash
DEBIAN_SUITE=bookworm
NODE_VERSION=24.22.3
NPM_VERSION=11.21.3
IMAGE_PREFIX=ghcr.io/tcab
TCAB_IMAGES_DIR="${TCAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tcab}/images"
# Run state (locks, mount counts) lives on /run so a reboot does not leave stale mounts recorded.
TCAB_IMAGES_RUNROOT="${TCAB_IMAGES_RUNROOT:-/run/tcab-images}"
tcab_buildah() {
  buildah --root "$TCAB_IMAGES_DIR/storage" --runroot "$TCAB_IMAGES_RUNROOT" --storage-driver overlay "$@"
}
