#!/usr/bin/env bash
# The real-cluster acceptance suite (test/k8s-real) as one step of .ci/run: builds what it
# needs (cached; a no-op when warm), then runs it with STRAIT_K8S_REAL=required: a missing
# tool or a machine that cannot run clusters fails the step instead of skipping.
#   cold, quiet 2 cores: node binaries (sharing the apiserver's Go build cache), CoreDNS,
#   the pause/test/strait images; warm: the strait image when the code changed (~2 min) and
#   the suite (~7 min; the fault cases ~5.5 min more (about 205 s of them the kube-apiserver
#   restart, broker and fenced-gateway cases); the MCS conformance suite ~10 min more (602 s at
#   load 18-19, 27 of 27 passing); its binary 185 s cold, 0.7 s warm; its two images 13 s cold).
#   The upgrade file (upgrade.test.ts: the previous version, upgrades, Helm, the mesh, uninstall)
#   ~15 min (850-912 s at load 3-9 on 2026-11-29, 2-2.5 min of it installing strait again after the
#   uninstall; the whole suite 1919 s that day); the previous
#   version's image 289 s cold, then cached by its commit.
#   Run after `npm test` (it needs dist/).
set -euo pipefail
cd "$(dirname "$0")/../.."
step() {
  local start=$SECONDS rc=0
  "$@" || rc=$?
  echo "k8s-real: '$*' $([ "$rc" = 0 ] && echo took || echo "failed (exit $rc) after") $((SECONDS - start)) s" >&2
  return "$rc"
}
step test/k8s/build-apiserver.sh --nodes >/dev/null
step scripts/build-coredns.sh >/dev/null
# the images include the MCS conformance suite's two (alpine/socat, nicolaka/netshoot)
# (--strait-previous: the image of the version test/k8s-real/upgrade.test.ts upgrades from,
# test/k8s-real/previous-version; built once per pinned commit)
step test/k8s/build-images.sh --strait --strait-previous >/dev/null
# the MCS API conformance suite (../shared/third_party/mcs-api, built with go test -c;
# mcs-conformance.test.ts runs it on the same clusters)
step test/k8s/build-mcs-conformance.sh >/dev/null
# ONE bring-up for every file of the suite (two-clusters, faults, mcs-conformance): up here, each file uses
# them (STRAIT_K8S_REUSE=1; the files take turns, the first deploys strait), down on every exit
cache="$(test/k8s/build-apiserver.sh --print)"
if [ -e "${STRAIT_K8S_STATE:-/run/strait-k8s}" ]; then
  echo "k8s-real: clusters are already up (${STRAIT_K8S_STATE:-/run/strait-k8s}): test/k8s/clusters.sh down first" >&2
  exit 1
fi
down() { test/k8s/clusters.sh down >/dev/null || echo "k8s-real: clusters.sh down failed" >&2; }
trap down EXIT
STRAIT_IMAGE_TAR="${STRAIT_IMAGE_TAR:-$cache/images/strait.tar}" step test/k8s/clusters.sh up 2 --strait --gateways 2 >/dev/null
STRAIT_K8S_REUSE=1 STRAIT_K8S_REAL=required step node scripts/run-tests.mjs test/k8s-real
