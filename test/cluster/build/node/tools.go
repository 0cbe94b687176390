//go:build tools

// Package tools pins the node commands built from k8s.io/kubernetes so go mod tidy keeps their dependencies.
// A module of its own (same requires and replaces as ../kubernetes) so that bumping a node dependency does not
// change the control plane's cache key; Go's build cache still shares every compiled package between the two.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
