#!/usr/bin/env bash
# Builds CoreDNS (the DNS benchmark's peer) from the Go module proxy into a cache
# directory outside the repository. Benchmark only; never used by strait itself.
#   scripts/build-coredns.sh            prints the path of the binary
set -euo pipefail
version="${COREDNS_VERSION:-v1.12.0}"
bin_dir="${STRAIT_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strait-bench}/bin"
mkdir -p "$bin_dir"
if [ ! -x "$bin_dir/coredns-$version" ]; then
  GOBIN="$bin_dir" GOFLAGS=-mod=mod go install "github.com/coredns/coredns@$version" >&2
  mv -f "$bin_dir/coredns" "$bin_dir/coredns-$version"
fi
echo "$bin_dir/coredns-$version"
