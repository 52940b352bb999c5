#!/usr/bin/env bash
# Installs the Debian packages strait needs (idempotent). Called by `npm start`
# and `npm test` (through scripts/ensure-system.mjs) and usable by hand.
#   scripts/setup-system.sh           install what is missing
#   scripts/setup-system.sh --check   exit 1 and list what is missing, install nothing
# It also checks the Go toolchain that `npm test` uses to build its test peers
# (kube-apiserver and kubectl: test/k8s/build-apiserver.sh; Gitea: test/gitea/build-gitea.sh)
# and says how to get it; Go is not a Debian package here (Debian 12's golang-go is 1.19,
# older than their go.mod files need), so the script never installs it and a missing Go
# does not fail it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# The Go the test peers need: the highest `go` line of their go.mod files (e.g. 1.26.3),
# and which files ask for it.
go_mods=("$here/../test/k8s/apiserver/go.mod" "$here/../test/gitea/server/go.mod" "$here/../test/argocd/cli/go.mod")
go_wanted=1.24
go_by=""
for mod in "${go_mods[@]}"; do
  [ -f "$mod" ] || continue
  v="$(awk '$1=="go" {print $2; exit}' "$mod")"
  [ -n "$v" ] || continue
  go_by="${go_by:+$go_by, }${mod#"$here/../"}"
  if [ "$(printf '%s\n%s\n' "$go_wanted" "$v" | sort -V | tail -n1)" = "$v" ]; then go_wanted="$v"; fi
done

# Prints one line about Go; returns 1 when it is missing or too old.
check_go() {
  local have
  if ! command -v go >/dev/null 2>&1; then
    echo "strait: Go >= $go_wanted is not installed: 'npm test' skips the tests that need kube-apiserver or Gitea without it ($go_by; Debian 12's golang-go is 1.19, too old): install Go $go_wanted or newer from https://go.dev/dl/ and put its bin/ on PATH" >&2
    return 1
  fi
  have="$(go env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9][0-9.]*\).*/\1/p')"
  if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$go_wanted" "$have" | sort -V | head -n1)" != "$go_wanted" ]; then
    echo "strait: Go ${have:-(unknown version)} at $(command -v go) is older than $go_wanted, which 'npm test' needs to build kube-apiserver and Gitea ($go_by): install Go $go_wanted or newer from https://go.dev/dl/ and put it first on PATH" >&2
    return 1
  fi
  echo "strait: Go $have found ($(command -v go)); 'npm test' builds kube-apiserver, Gitea and the argocd CLI with it (it needs $go_wanted)" >&2
  return 0
}

# command -> Debian package that provides it
declare -A PKG=(
  [ip]=iproute2
  [nft]=nftables
  [curl]=curl
  [dig]=dnsutils
  [git]=git
  [gpg]=gnupg
  [iperf3]=iperf3
  [tshark]=tshark
  [promtool]=prometheus
  [cc]=build-essential
  [make]=build-essential
  [python3]=python3
  [ethtool]=ethtool
  [dnsperf]=dnsperf
  [systemd-analyze]=systemd
  [etcd]=etcd-server
  [haproxy]=haproxy
  [buildah]=buildah
  [debootstrap]=debootstrap
  # real Kubernetes clusters for tests (test/k8s/clusters.sh): container runtime,
  # OCI runtime, nsenter; etcd is above; the CNI plugins are checked by path below
  [containerd]=containerd
  [ctr]=containerd
  [runc]=runc
  [nsenter]=util-linux
  # the small test image of test/k8s/build-images.sh (httpd, wget, nc in one static binary)
  [busybox]=busybox-static
  # the MCS conformance suite's server image (test/k8s/build-images.sh: alpine/socat)
  [socat]=socat
  # the web console's browser tests (playwright-core drives Debian's Chromium, headless)
  [chromium]=chromium
  # the C addon's formatter (native/.clang-format; npm run lint checks it, npm run format writes it)
  [clang-format]=clang-format
)
# file -> Debian package, for what is not a command on PATH
declare -A PKG_FILE=(
  # the sanitizer runtimes of the addon's sanitizer build (scripts/native-asan.mjs)
  [/usr/lib/x86_64-linux-gnu/libasan.so.8]=libasan8
  [/usr/lib/x86_64-linux-gnu/libubsan.so.1]=libubsan1
  [/usr/lib/cni/bridge]=containernetworking-plugins
  [/usr/lib/cni/host-local]=containernetworking-plugins
  [/usr/lib/cni/loopback]=containernetworking-plugins
  [/usr/lib/cni/portmap]=containernetworking-plugins
  # OpenBSD's nc (-4/-6, -v, -w), which the MCS conformance suite runs in its netshoot image
  [/bin/nc.openbsd]=netcat-openbsd
)

# strait up without root (user namespaces) mounts its private tmpfs over these two
# directories, which only root can create; make them once here (harmless when present)
if [ "$(id -u)" -eq 0 ] && [ "${1:-}" != "--check" ]; then
  mkdir -p /run/netns /etc/netns 2>/dev/null || true
fi

missing=()
for cmd in "${!PKG[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1; then
    missing+=("${PKG[$cmd]}")
  fi
done
for f in "${!PKG_FILE[@]}"; do
  [ -e "$f" ] || missing+=("${PKG_FILE[$f]}")
done
# de-duplicate
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | sed '/^$/d')

if [ "${1:-}" = "--check" ]; then
  check_go || true
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "strait: all ${#PKG[@]} system commands strait needs are installed" >&2
    exit 0
  fi
  echo "strait: missing Debian packages: ${missing[*]} (run scripts/setup-system.sh as root)" >&2
  exit 1
fi
if [ "${#missing[@]}" -eq 0 ]; then
  # quiet on the everyday path (npm start, npm test): only a Go problem is worth a line
  check_go >/dev/null 2>&1 || check_go || true
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "strait: these Debian packages are missing: ${missing[*]}" >&2
  echo "strait: run 'sudo scripts/setup-system.sh' once, then try again" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "strait: installing Debian packages: ${missing[*]}" >&2
# tshark asks whether non-root users may capture; answer no without a prompt
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "strait: Debian packages installed" >&2
check_go || true
