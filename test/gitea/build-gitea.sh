#!/usr/bin/env bash
# Test tooling (never product code): builds a real Gitea (the differential
# oracle for githost) and the Gitea Go SDK test driver from the Go module
# proxy, pinned by test/gitea/server/go.mod and test/gitea/sdk/go.mod, into
#   ${XDG_CACHE_HOME:-~/.cache}/strait/gitea/<version>/{gitea,gitea-sdk-test}
# Idempotent: a second run with the same go.mod/go.sum (and .go files) builds nothing.
#   test/gitea/build-gitea.sh          build what is missing, print the cache dir
#   test/gitea/build-gitea.sh --sdk    build only the SDK driver (fast)
#   test/gitea/build-gitea.sh --print  print the cache dir, build nothing
# Gitea refuses to run from a "development" version with the SDK, so the
# version is linked in with -X main.Version. Its locale/template files are read
# from the module folder (STATIC_ROOT_PATH, printed by --static).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
srv="$here/server"
sdk="$here/sdk"
version="$(awk '$1=="require" && $2=="code.gitea.io/gitea" {print $3}' "$srv/go.mod")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/strait/gitea/$version"

case "${1:-}" in
  --print) echo "$cache"; exit 0 ;;
  --static) echo "$(go env GOMODCACHE)/code.gitea.io/gitea@$version"; exit 0 ;;
esac

if ! command -v go >/dev/null 2>&1; then
  echo "strait: 'go' is not installed; install Go >= 1.26.2 to build Gitea $version" >&2
  exit 1
fi

mkdir -p "$cache"

# what a binary is built from: the module's go.mod, go.sum and its own .go files
stamp_of() { { cat "$1/go.mod"; cat "$1/go.sum" "$1"/*.go 2>/dev/null || true; } | sha256sum | cut -c1-16; }

build() { # build <name> <module dir> <package> <cgo> <tags> <ldflags>
  local name="$1" mod="$2" pkg="$3" cgo="$4" tags="$5" ldflags="$6"
  local stamp; stamp="$(stamp_of "$mod")"
  # one build per binary at a time (several test files may ask at once)
  exec 9>"$cache/.$name.lock"
  flock 9
  if [ -x "$cache/$name" ] && [ "$(cat "$cache/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    exec 9>&-
    return 0
  fi
  echo "strait: building $name ($pkg) into $cache (slow the first time)" >&2
  local start=$SECONDS
  (
    cd "$mod"
    CGO_ENABLED="$cgo" GOFLAGS=-mod=mod nice -n 19 \
      go build -p "${STRAIT_GO_BUILD_P:-2}" -trimpath -tags "$tags" -ldflags "$ldflags" \
      -o "$cache/$name.tmp" "$pkg"
  )
  mv -f "$cache/$name.tmp" "$cache/$name"
  # -mod=mod may have completed go.sum: stamp what the binary was built from
  stamp_of "$mod" >"$cache/$name.stamp"
  echo "strait: built $name in $((SECONDS - start))s" >&2
  exec 9>&-
}

if [ "${1:-}" != "--sdk" ]; then
  build gitea "$srv" code.gitea.io/gitea 1 "sqlite sqlite_unlock_notify" \
    "-s -w -X main.Version=${version#v} -X main.Tags=sqlite"
fi
if [ -f "$sdk/go.mod" ]; then
  build gitea-sdk-test "$sdk" . 0 "" "-s -w"
fi
echo "$cache"
