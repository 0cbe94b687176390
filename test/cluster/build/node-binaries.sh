#!/usr/bin/env bash
# Builds (first run on a machine) or reuses (every later run) the real node's binaries from the Go module proxy:
# kubelet and kube-proxy (k8s.io/kubernetes through the module in node/, which has the same requires and replaces
# as kubernetes/ so Go's build cache shares the control plane's compiled packages), containerd + its runc shim +
# ctr, runc (cgo against Debian's libseccomp-dev; no libpathrs), the CNI plugins bridge/host-local/loopback/portmap,
# CoreDNS, crane (the local registry: `crane registry serve --disk`, and the push client), the pause binary
# (gcc -static from kubernetes' build/pause/linux/pause.c), and rancher's local-path-provisioner (the node's dynamic
# PersistentVolume provisioner: the default StorageClass `local-path`; v0.0.30 is the newest the module proxy serves),
# and kube-router's network policy controller (the node's NetworkPolicy engine; README beside real-node.ts says why
# this one and why its only served version v2.1.0 is acceptable here).
# Cached under ~/.cache/tcab/node/<key>/bin, the key naming every version, apart from the control plane's cache, so
# a node bump never rebuilds the apiserver. Prints the bin directory on stdout; the cold or warm time goes to stderr.
# Needs: go, gcc, libc6-dev, libseccomp-dev (Debian). Go builds run under `nice -n 19`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

KUBERNETES_VERSION=v1.37.2
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
CNI_PLUGINS_VERSION=v1.10.0
COREDNS_VERSION=v1.15.0
CRANE_VERSION=v0.22.1
PAUSE_VERSION=v3.10.2
LOCAL_PATH_PROVISIONER_VERSION=v0.0.30
KUBE_ROUTER_VERSION=v2.1.0
# Bump when the way something is built changes (flags, tags) without a version changing.
BUILD_REV=1

gomods="$(cat "$here/node/go.mod" "$here/node/go.sum" | sha256sum | cut -c1-12)"
key="k8s-${KUBERNETES_VERSION}_containerd-${CONTAINERD_VERSION}_runc-${RUNC_VERSION}_cni-${CNI_PLUGINS_VERSION}_coredns-${COREDNS_VERSION}_crane-${CRANE_VERSION}_pause-${PAUSE_VERSION}_lpp-${LOCAL_PATH_PROVISIONER_VERSION}_kr-${KUBE_ROUTER_VERSION}_r${BUILD_REV}_$(go env GOVERSION)_${gomods}"
cache="${TCAB_CACHE_DIR:-$HOME/.cache/tcab}/node/$key"
bin="$cache/bin"
started=$(date +%s%N)
elapsed() { local ms=$((($(date +%s%N) - started) / 1000000)); printf "%d.%03d" $((ms / 1000)) $((ms % 1000)); }
step() { echo "node binaries: $1 ($(elapsed)s)" >&2; }

if [ -f "$cache/.complete" ]; then
  echo "node binaries: warm (cached in $cache) in $(elapsed)s" >&2
  echo "$bin"
  exit 0
fi

# One build per key at a time: several test runs (and a developer's `cli.ts up`) may start cold at once.
mkdir -p "$(dirname "$cache")"
exec 9>"$cache.lock"
flock 9
if [ -f "$cache/.complete" ]; then
  echo "node binaries: built by another run meanwhile (cached in $cache) in $(elapsed)s" >&2
  echo "$bin"
  exit 0
fi

for need in gcc; do command -v "$need" >/dev/null || { echo "node binaries: $need is missing (apt-get install gcc libc6-dev libseccomp-dev)" >&2; exit 1; }; done
[ -f /usr/include/seccomp.h ] || { echo "node binaries: libseccomp-dev is missing (apt-get install libseccomp-dev)" >&2; exit 1; }

partial="$bin.partial"
rm -rf "$partial"
mkdir -p "$partial/cni"
nice_go() { nice -n 19 go "$@"; }
echo "node binaries: building kubelet + kube-proxy $KUBERNETES_VERSION, containerd $CONTAINERD_VERSION, runc $RUNC_VERSION, CNI plugins $CNI_PLUGINS_VERSION, CoreDNS $COREDNS_VERSION, crane $CRANE_VERSION, pause $PAUSE_VERSION, local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION, kube-router $KUBE_ROUTER_VERSION; the first run on a machine takes about 10 minutes on 2 cores" >&2

version_pkg=k8s.io/component-base/version
major_minor="${KUBERNETES_VERSION#v}"
ldflags="-s -w -X $version_pkg.gitVersion=$KUBERNETES_VERSION -X $version_pkg.gitMajor=${major_minor%%.*} -X $version_pkg.gitMinor=$(echo "$major_minor" | cut -d. -f2) -X $version_pkg.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION"
(cd "$here/node" && GOFLAGS=-mod=mod CGO_ENABLED=0 nice_go build -trimpath -ldflags "$ldflags" -o "$partial/" \
  k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
step "kubelet, kube-proxy built"

# pause: the sandbox process, from the same Kubernetes release's source.
k8s_dir="$(cd "$here/node" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
gcc -Os -static -DVERSION="$PAUSE_VERSION" -o "$partial/pause" "$k8s_dir/build/pause/linux/pause.c"
strip "$partial/pause"
step "pause built"

export GOFLAGS=
CGO_ENABLED=0 GOBIN="$partial" nice_go install -trimpath \
  -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
  "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION"
CGO_ENABLED=0 GOBIN="$partial" nice_go install -trimpath -tags no_grpc \
  -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
  "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"
step "containerd, ctr, containerd-shim-runc-v2 built"

CGO_ENABLED=1 GOBIN="$partial" nice_go install -trimpath -tags "seccomp urfave_cli_no_docs" \
  -ldflags "-s -w -X main.version=${RUNC_VERSION#v}" "github.com/opencontainers/runc@$RUNC_VERSION"
step "runc built"

CGO_ENABLED=0 GOBIN="$partial/cni" nice_go install -trimpath -ldflags "-s -w" \
  "github.com/containernetworking/plugins/plugins/main/bridge@$CNI_PLUGINS_VERSION" \
  "github.com/containernetworking/plugins/plugins/ipam/host-local@$CNI_PLUGINS_VERSION" \
  "github.com/containernetworking/plugins/plugins/main/loopback@$CNI_PLUGINS_VERSION" \
  "github.com/containernetworking/plugins/plugins/meta/portmap@$CNI_PLUGINS_VERSION"
step "CNI plugins built"

CGO_ENABLED=0 GOBIN="$partial" nice_go install -trimpath -ldflags "-s -w" \
  "github.com/google/go-containerregistry/cmd/crane@$CRANE_VERSION"
step "crane built"

CGO_ENABLED=0 GOBIN="$partial" nice_go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
step "coredns built"

# Its own module graph (client-go v0.30): ~200 s cold on 2 busy cores, seconds when Go's build cache has it.
CGO_ENABLED=0 GOBIN="$partial" nice_go install -trimpath -ldflags "-s -w -X main.VERSION=$LOCAL_PATH_PROVISIONER_VERSION" \
  "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION"
step "local-path-provisioner built"

# Its own module graph (client-go v0.29): ~120 s cold on 2 cores. Only its network policy controller runs
# (--run-firewall; the router and the service proxy, where its reported advisories are, stay off).
CGO_ENABLED=0 GOBIN="$partial" nice_go install -trimpath -ldflags "-s -w" \
  "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION"
step "kube-router built"

rm -rf "$bin"
mv "$partial" "$bin"
touch "$cache/.complete"
echo "node binaries: cold build in $(elapsed)s, cached in $cache" >&2
echo "$bin"
