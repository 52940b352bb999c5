#!/usr/bin/env bash
# Test tooling (never product code): builds the Kubernetes SIG-Multicluster MCS API
# conformance suite (kubernetes-sigs/mcs-api `conformance/`, a Ginkgo suite) as one test
# binary with `go test -c`, from the unchanged snapshot in ../shared/third_party/mcs-api
# (STRAIT_MCS_API_DIR overrides; its README names the commit), its modules from the Go
# module proxy, pinned by the snapshot's own go.mod/go.sum, into
#   ${XDG_CACHE_HOME:-~/.cache}/strait/mcs-conformance/<commit>/conformance.test
# The snapshot is read-only and its go.mod replaces sigs.k8s.io/mcs-api with `..`: it is
# copied whole into a temporary directory and built there. The binary is keyed by the
# snapshot's contents (every file's hash) and the Go version; idempotent: a second run with
# the same snapshot does nothing.
#   test/k8s/build-mcs-conformance.sh          build what is missing, print the binary's path
#   test/k8s/build-mcs-conformance.sh --print  print the binary's path, build nothing
# Run it (test/k8s-real/mcs-conformance.test.ts does) with --kubeconfig, --contexts a,b,
# --dns-domain and Ginkgo's flags (--ginkgo.json-report=...); it writes report.html and
# report.yaml into its working directory.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
src="${STRAIT_MCS_API_DIR:-$here/../../../shared/third_party/mcs-api}"
if [ ! -f "$src/conformance/go.mod" ]; then
  echo "strait: no mcs-api snapshot at $src (its conformance/go.mod is missing); set STRAIT_MCS_API_DIR" >&2
  exit 3
fi
src="$(cd "$src" && pwd)"
# the snapshot's commit as the third-party README lists it (a folder without one: "snapshot")
commit="$(awk -F'|' '$2 ~ /`mcs-api\/`/ { gsub(/ /, "", $4); print substr($4, 1, 12) }' "$src/../README.md" 2>/dev/null || true)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/strait/mcs-conformance/${commit:-snapshot}"
bin="$cache/conformance.test"

if [ "${1:-}" = "--print" ]; then
  echo "$bin"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "strait: 'go' is not installed; install Go >= 1.23 to build the MCS conformance suite" >&2
  exit 1
fi

# the stamp: every file of the snapshot by relative path (never the checkout's path: every
# git worktree shares the cache), the Go toolchain and how the binary is linked (v1)
stamp="$( (cd "$src" && find . -type f ! -path './.git/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  go env GOVERSION; echo ldflags-v1) | sha256sum | cut -c1-16)"

mkdir -p "$cache"
# one build at a time per cache dir (several test files may ask at once)
exec 9>"$cache/.lock"
flock 9

if [ -x "$bin" ] && [ "$(cat "$bin.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$bin"
  exit 0
fi

echo "strait: building the MCS conformance suite (mcs-api ${commit:-snapshot}) into $cache (slow the first time)" >&2
start=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -R "$src" "$work/mcs-api"
# the snapshot's files are read-only; go may write go.sum entries it lacks (-mod=mod)
chmod -R u+w "$work/mcs-api"
(
  cd "$work/mcs-api/conformance"
  # 2 shared cores: stay polite. -trimpath/-s -w keep the link small; no vet (upstream code)
  CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" nice -n 19 \
    go test -c -vet=off -p "${STRAIT_GO_BUILD_P:-2}" -trimpath -ldflags="-s -w" -o "$bin.tmp" .
)
mv -f "$bin.tmp" "$bin"
echo "$stamp" >"$bin.stamp"
echo "strait: built the MCS conformance suite in $((SECONDS - start))s" >&2
echo "$bin"
