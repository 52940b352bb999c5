#!/usr/bin/env bash
# Builds CoreDNS from the Go module proxy into a cache
# directory outside the repository. Benchmark and test tooling only (the DNS bench's peer,
# the real test clusters' DNS); never used by strait itself.
#   scripts/build-coredns.sh            prints the path of the binary
#   COREDNS_PRINT=1 scripts/build-coredns.sh   prints it only when built (exit 1 otherwise)
# Static (CGO_ENABLED=0): test/k8s/build-images.sh also puts it in an image (each real
# test cluster's DNS).
set -euo pipefail
version="${COREDNS_VERSION:-v1.12.0}"
bin_dir="${STRAIT_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strait-bench}/bin"
mkdir -p "$bin_dir"
if [ "${COREDNS_PRINT:-}" = 1 ]; then
  [ -x "$bin_dir/coredns-$version" ] || exit 1
elif [ ! -x "$bin_dir/coredns-$version" ]; then
  CGO_ENABLED=0 GOBIN="$bin_dir" GOFLAGS=-mod=mod go install "github.com/coredns/coredns@$version" >&2
  mv -f "$bin_dir/coredns" "$bin_dir/coredns-$version"
fi
echo "$bin_dir/coredns-$version"
