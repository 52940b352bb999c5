#!/usr/bin/env bash
# Test tooling (never product code): builds the real Argo CD CLI (`argocd`)
# from the Go module proxy, pinned by test/argocd/cli/go.mod, into
#   ${XDG_CACHE_HOME:-~/.cache}/strait/argocd/<version>/argocd
# Idempotent: a second run with the same go.mod/go.sum does nothing.
#   test/argocd/build-argocd.sh          build what is missing, print the cache dir
#   test/argocd/build-argocd.sh --print  print the cache dir, build nothing
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
mod="$here/cli"
version="$(awk '$1=="require" && $2=="github.com/argoproj/argo-cd/v3" {print $3}' "$mod/go.mod")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/strait/argocd/$version"
stamp="$(sha256sum "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-16)"

if [ "${1:-}" = "--print" ]; then
  echo "$cache"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "strait: 'go' is not installed; install Go >= 1.26.3 to build argocd" >&2
  exit 1
fi

mkdir -p "$cache"
# one build at a time per cache dir (several test files may ask at once)
exec 9>"$cache/.lock"
flock 9

if [ -x "$cache/argocd" ] && [ "$(cat "$cache/argocd.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$cache"
  exit 0
fi

echo "strait: building argocd $version into $cache (slow the first time)" >&2
start=$SECONDS
pkg=github.com/argoproj/argo-cd/v3/common
(
  cd "$mod"
  # 2 shared cores: stay polite. -trimpath/-s -w keep the link small.
  # cmd/main.go picks the component by the binary's name: "argocd" is the CLI.
  CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 \
    go build -p "${STRAIT_GO_BUILD_P:-2}" -trimpath \
    -ldflags="-s -w -X $pkg.version=${version#v} -X $pkg.gitTag=$version -X $pkg.gitTreeState=clean" \
    -o "$cache/argocd.tmp" github.com/argoproj/argo-cd/v3/cmd
)
mv -f "$cache/argocd.tmp" "$cache/argocd"
echo "$stamp" >"$cache/argocd.stamp"
echo "strait: built argocd $version in $((SECONDS - start))s" >&2
echo "$cache"
