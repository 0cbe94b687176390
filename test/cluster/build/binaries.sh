#!/usr/bin/env bash
# Builds (first run on a machine) or reuses (every later run) the test control plane's binaries from the Go
# module proxy: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (k8s.io/kubernetes through the
# module in kubernetes/), etcd (etcd/), helm and kubeconform (go install at a pinned version).
# Cached under ~/.cache/tcab/cluster/<key>/bin, the key naming every version, so a version bump builds afresh.
# Prints the bin directory on stdout; the cold or warm time goes to stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

KUBERNETES_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.7.3
HELM_VERSION=v4.3.2
KUBECONFORM_VERSION=v0.8.0

gomods="$(cat "$here/kubernetes/go.mod" "$here/kubernetes/go.sum" "$here/etcd/go.mod" "$here/etcd/go.sum" | sha256sum | cut -c1-12)"
key="k8s-${KUBERNETES_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}_kubeconform-${KUBECONFORM_VERSION}_$(go env GOVERSION)_${gomods}"
cache="${TCAB_CACHE_DIR:-$HOME/.cache/tcab}/cluster/$key"
bin="$cache/bin"
started=$(date +%s%N)
elapsed() { local ms=$((($(date +%s%N) - started) / 1000000)); printf "%d.%03d" $((ms / 1000)) $((ms % 1000)); }

if [ -f "$cache/.complete" ]; then
  echo "cluster binaries: warm (cached in $cache) in $(elapsed)s" >&2
  echo "$bin"
  exit 0
fi

mkdir -p "$bin.partial"
export GOFLAGS=-mod=mod CGO_ENABLED=0
version_pkg=k8s.io/component-base/version
major_minor="${KUBERNETES_VERSION#v}"
ldflags="-s -w -X $version_pkg.gitVersion=$KUBERNETES_VERSION -X $version_pkg.gitMajor=${major_minor%%.*} -X $version_pkg.gitMinor=$(echo "$major_minor" | cut -d. -f2) -X $version_pkg.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION"
echo "cluster binaries: building Kubernetes $KUBERNETES_VERSION (staging modules at $STAGING_VERSION), etcd $ETCD_VERSION, helm $HELM_VERSION, kubeconform $KUBECONFORM_VERSION; the first run on a machine takes about 10 minutes on 2 cores" >&2
(cd "$here/kubernetes" && go build -trimpath -ldflags "$ldflags" -o "$bin.partial/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
(cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$bin.partial/etcd" .)
GOFLAGS= GOBIN="$bin.partial" go install -trimpath -ldflags "-s -w" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
GOFLAGS= GOBIN="$bin.partial" go install -trimpath -ldflags "-s -w" "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
rm -rf "$bin"
mv "$bin.partial" "$bin"
touch "$cache/.complete"
echo "cluster binaries: cold build in $(elapsed)s, cached in $cache" >&2
echo "$bin"
