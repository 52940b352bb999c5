//go:build tools

// Package cli only exists so that `go mod tidy` keeps the command that
// test/helm/build-helm.sh builds in go.mod and go.sum.
package cli

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
