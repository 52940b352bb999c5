#!/usr/bin/env bash
# Test tooling (never product code): builds a real kube-apiserver (and kubectl
# when none is on PATH) from the Go module proxy, pinned by
# test/k8s/apiserver/go.mod, into
#   ${XDG_CACHE_HOME:-~/.cache}/strait/k8s/<version>/
# Idempotent: a second run with the same go.sum does nothing.
#   test/k8s/build-apiserver.sh            build what is missing, print the cache dir
#   test/k8s/build-apiserver.sh --kubectl  also build kubectl even if one is on PATH
#   test/k8s/build-apiserver.sh --nodes    also build kubectl, kubelet, kube-controller-manager,
#                                          kube-scheduler and kube-proxy (test/k8s/clusters.sh)
#   test/k8s/build-apiserver.sh --print    print the cache dir, build nothing
# Every binary is stamped with the module's version (k8s.io/component-base/version),
# so kubelet and kubectl report the same version as the API server.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
mod="$here/apiserver"
version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$mod/go.mod")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/strait/k8s/$version"
# the stamp: the pinned modules' contents (never the checkout's path: every git worktree
# shares the cache) and how the binaries are linked (v2: version stamped)
stamp="$( (cat "$mod/go.mod" "$mod/go.sum"; echo ldflags-v2) | sha256sum | cut -c1-16)"
major="$(echo "$version" | sed -E 's/^v([0-9]+)\..*/\1/')"
minor="$(echo "$version" | sed -E 's/^v[0-9]+\.([0-9]+)\..*/\1/')"

if [ "${1:-}" = "--print" ]; then
  echo "$cache"
  exit 0
fi

want_kubectl=0
want_nodes=0
if [ "${1:-}" = "--nodes" ]; then
  want_nodes=1
  want_kubectl=1
fi
if [ "${1:-}" = "--kubectl" ] || ! command -v kubectl >/dev/null 2>&1; then
  want_kubectl=1
fi

if ! command -v go >/dev/null 2>&1; then
  echo "strait: 'go' is not installed; install Go >= 1.24 to build kube-apiserver" >&2
  exit 1
fi

mkdir -p "$cache"
# one build at a time per cache dir (several test files may ask at once)
exec 9>"$cache/.lock"
flock 9

build() { # build <cmd>
  local name="$1"
  if [ -x "$cache/$name" ] && [ "$(cat "$cache/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  echo "strait: building $name $version into $cache (slow the first time)" >&2
  local start=$SECONDS
  (
    cd "$mod"
    # 2 shared cores: stay polite. -trimpath/-s -w keep the link small.
    CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 \
      go build -p "${STRAIT_GO_BUILD_P:-2}" -trimpath \
      -ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean" \
      -o "$cache/$name.tmp" "k8s.io/kubernetes/cmd/$name"
  )
  mv -f "$cache/$name.tmp" "$cache/$name"
  echo "$stamp" >"$cache/$name.stamp"
  echo "strait: built $name in $((SECONDS - start))s" >&2
}

build kube-apiserver
if [ "$want_kubectl" = 1 ]; then
  build kubectl
fi
if [ "$want_nodes" = 1 ]; then
  for name in kubelet kube-controller-manager kube-scheduler kube-proxy; do
    build "$name"
  done
fi
echo "$cache"
