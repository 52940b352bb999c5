#!/usr/bin/env bash
# Test tooling (never product code): builds the real Helm CLI (`helm`) from the Go module
# proxy, pinned by test/helm/cli/go.mod, into
#   ${XDG_CACHE_HOME:-~/.cache}/strait/helm/<version>/helm
# Idempotent: a second run with the same go.mod/go.sum does nothing.
#   test/helm/build-helm.sh          build what is missing, print the cache dir
#   test/helm/build-helm.sh --print  print the cache dir, build nothing
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
mod="$here/cli"
version="$(awk '$1=="require" && $2=="helm.sh/helm/v4" {print $3}' "$mod/go.mod")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/strait/helm/$version"
# the stamp: the pinned modules' contents (never the checkout's path: every git worktree
# shares the cache) and how the binary is linked (v1: version stamped)
stamp="$( (cat "$mod/go.mod" "$mod/go.sum"; echo ldflags-v1) | sha256sum | cut -c1-16)"

if [ "${1:-}" = "--print" ]; then
  echo "$cache"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "strait: 'go' is not installed; install Go >= 1.26.3 to build helm" >&2
  exit 1
fi

mkdir -p "$cache"
# one build at a time per cache dir (several test files may ask at once)
exec 9>"$cache/.lock"
flock 9

if [ -x "$cache/helm" ] && [ "$(cat "$cache/helm.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$cache"
  exit 0
fi

echo "strait: building helm $version into $cache (slow the first time)" >&2
start=$SECONDS
pkg=helm.sh/helm/v4/internal/version
(
  cd "$mod"
  # 2 shared cores: stay polite. -trimpath/-s -w keep the link small.
  CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 \
    go build -p "${STRAIT_GO_BUILD_P:-2}" -trimpath \
    -ldflags="-s -w -X $pkg.version=$version -X $pkg.gitTreeState=clean" \
    -o "$cache/helm.tmp" helm.sh/helm/v4/cmd/helm
)
mv -f "$cache/helm.tmp" "$cache/helm"
echo "$stamp" >"$cache/helm.stamp"
echo "strait: built helm $version in $((SECONDS - start))s" >&2
echo "$cache"
