//go:build tools

// Package cli only exists so that `go mod tidy` keeps the command that
// test/argocd/build-argocd.sh builds in go.mod and go.sum.
package cli

import (
	_ "github.com/argoproj/argo-cd/v3/cmd"
)
