#!/usr/bin/env bash
# buildah on the images' storage (scripts/images/build.sh), e.g. scripts/images/buildah.sh images
set -euo pipefail
# shellcheck source=scripts/images/env.sh
. "$(dirname "$0")/env.sh"
tcab_buildah "$@"
