#!/usr/bin/env bash
# Builds wireguard-go (userspace WireGuard, the benchmark's peer) from the Go module
# proxy into .state/bin/wireguard-go. Benchmark only; never used by strait itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.state/bin"
GOBIN="$root/.state/bin" go install golang.zx2c4.com/wireguard@latest
mv -f "$root/.state/bin/wireguard" "$root/.state/bin/wireguard-go"
echo "$root/.state/bin/wireguard-go"
