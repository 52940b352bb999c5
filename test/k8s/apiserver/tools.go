//go:build tools

// Package apiserver only exists so that `go mod tidy` keeps the commands
// that test/k8s/build-apiserver.sh builds in go.mod and go.sum.
package apiserver

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
