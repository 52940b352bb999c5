#!/usr/bin/env bash
# Installs the Debian packages strait needs (idempotent). Called by `npm start`
# and `npm test` (through scripts/ensure-system.mjs) and usable by hand.
#   scripts/setup-system.sh           install what is missing
#   scripts/setup-system.sh --check   exit 1 and list what is missing, install nothing
set -euo pipefail

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
)
# file -> Debian package, for what is not a command on PATH
declare -A PKG_FILE=(
  [/usr/lib/cni/bridge]=containernetworking-plugins
  [/usr/lib/cni/host-local]=containernetworking-plugins
  [/usr/lib/cni/loopback]=containernetworking-plugins
  [/usr/lib/cni/portmap]=containernetworking-plugins
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

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "missing Debian packages: ${missing[*]} (run scripts/setup-system.sh as root)" >&2
  exit 1
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
