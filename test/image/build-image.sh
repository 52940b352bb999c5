#!/usr/bin/env bash
# Test tooling (never product code): build ./Dockerfile without a Docker engine or a
# registry, and print the image name.
#
#   test/image/build-image.sh            # build (or reuse) localhost/strait:test
#   test/image/build-image.sh --run ARGS # then run `node ARGS` in it (chroot), e.g. --run bin/strait.js --version
#   test/image/build-image.sh --sh CMD   # then run `sh -c CMD` in it (one container for several commands)
#   test/image/build-image.sh --labels   # then print the image's labels (JSON; the version is package.json's)
#   test/image/build-image.sh --print    # print the cache dir
#
# How: buildah (Debian's package) with vfs storage and chroot isolation, in a private
# storage under ${XDG_CACHE_HOME:-~/.cache}/strait/image. docker.io's node images are not
# reachable here, so the base images are made locally and passed as BUILD_IMAGE and
# RUNTIME_IMAGE: Debian bookworm from debootstrap (the machine's own apt mirror) plus this machine's
# Node (node, npm, headers) laid out under /usr/local as in the official node image.
# npm ci runs --offline from this machine's npm cache (bind-mounted). The rootfs and base
# images are built once; the image is rebuilt when the sources it copies change.
# Needs root (chroot, mounts); scripts/setup-system.sh installs buildah and debootstrap.
set -euo pipefail
#
# STRAIT_IMAGE_ROOT=DIR STRAIT_IMAGE_NAME=NAME: build DIR's Dockerfile (another version's
# sources, e.g. test/k8s/build-images.sh --strait-previous) as NAME instead; each name keeps
# its own key.
root=${STRAIT_IMAGE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/strait/image
if [ "${1:-}" = "--print" ]; then echo "$cache"; exit 0; fi
for t in buildah debootstrap flock; do
  command -v "$t" >/dev/null || { echo "build-image.sh: '$t' is missing (scripts/setup-system.sh installs it)" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "build-image.sh: needs root (chroot isolation, mounts)" >&2; exit 3; }
mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
bh() { buildah --root "$cache/storage" --runroot "$cache/run" --storage-driver vfs "$@"; }
log() { echo "build-image.sh: $*" >&2; }

# 1. Debian bookworm, minimal
if [ ! -x "$cache/rootfs/bin/sh" ]; then
  rm -rf "$cache/rootfs-tmp"
  # the Debian mirror this machine's apt uses (deb822 .sources or a one-line sources.list)
  mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
  [ -n "$mirror" ] || { echo "build-image.sh: no Debian mirror found in the apt sources of this machine" >&2; exit 3; }
  log "debootstrap bookworm (minbase) from $mirror"
  nice debootstrap --variant=minbase bookworm "$cache/rootfs-tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
  rm -rf "$cache/rootfs-tmp/var/cache/apt/archives/"*.deb "$cache/rootfs-tmp/var/lib/apt/lists/"*
  mv "$cache/rootfs-tmp" "$cache/rootfs"
fi

# 2. the base image: rootfs + Node under /usr/local (as node:20-bookworm has it)
node_version=$(node --version)
base=localhost/strait-base:node-${node_version}-bookworm
if ! bh inspect --type image "$base" >/dev/null 2>&1; then
  log "base image $base"
  node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  ctr=$(bh from scratch)
  mnt=$(bh mount "$ctr")
  cp -a "$cache/rootfs/." "$mnt/"
  install -D -m 0755 "$node_prefix/bin/node" "$mnt/usr/local/bin/node"
  mkdir -p "$mnt/usr/local/lib/node_modules" "$mnt/usr/local/include"
  cp -a "$node_prefix/lib/node_modules/npm" "$mnt/usr/local/lib/node_modules/"
  cp -a "$node_prefix/include/node" "$mnt/usr/local/include/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  bh umount "$ctr" >/dev/null
  bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env NODE_VERSION="${node_version#v}" --cmd node "$ctr"
  bh commit --quiet "$ctr" "$base" >/dev/null
  bh rm "$ctr" >/dev/null
fi

# 3. the image, rebuilt when the Dockerfile or what it copies changes
#    (STRAIT_IMAGE_REBUILD=dockerfile: only when the Dockerfile, .dockerignore or the
#    dependency set changes; what the test uses, so that a source edit does not cost a build)
key=$( (cd "$root" && cat Dockerfile .dockerignore package.json package-lock.json .npmrc tsconfig.json eslint.config.mjs \
  && if [ "${STRAIT_IMAGE_REBUILD:-sources}" != dockerfile ]; then
       find src daemon agents native bin scripts -type f ! -path 'native/build/*' -print0 | sort -z | xargs -0 sha256sum
     fi) | sha256sum | cut -c1-16)
image=${STRAIT_IMAGE_NAME:-localhost/strait:test}
keyfile="$cache/image.key"
[ "$image" = localhost/strait:test ] || keyfile="$cache/image-$(echo "$image" | tr -c 'a-zA-Z0-9.\n-' _).key"
if [ "$(cat "$keyfile" 2>/dev/null)" != "$key" ] || ! bh inspect --type image "$image" >/dev/null 2>&1; then
  log "buildah build $image (key $key)"
  start=$(date +%s)
  nice buildah --root "$cache/storage" --runroot "$cache/run" --storage-driver vfs build --isolation chroot --layers=false --pull=never \
    --build-arg BUILD_IMAGE="$base" --build-arg RUNTIME_IMAGE="$base" --build-arg NPM_FLAGS=--offline \
    --build-arg VERSION="$(node -p 'require(process.argv[1]).version' "$root/package.json")" \
    --volume "$HOME/.npm:/root/.npm:rw" \
    -f "$root/Dockerfile" -t "$image" "$root" >"$cache/build.log" 2>&1 \
    || { tail -40 "$cache/build.log" >&2; exit 1; }
  echo "$key" >"$keyfile"
  log "built in $(( $(date +%s) - start )) s"
  # keep the storage small: drop dangling stages
  bh rmi --prune >/dev/null 2>&1 || true
fi

if [ "${1:-}" = "--run" ] || [ "${1:-}" = "--sh" ]; then
  mode=$1
  shift
  ctr=$(bh from --pull=never "$image")
  trap 'bh rm "$ctr" >/dev/null 2>&1 || true' EXIT
  if [ "$mode" = --run ]; then bh run --isolation chroot "$ctr" -- node "$@"
  else bh run --isolation chroot "$ctr" -- sh -c "$1"; fi
elif [ "${1:-}" = "--key" ]; then
  cat "$keyfile"
elif [ "${1:-}" = "--labels" ]; then
  # buildah 1.28 (Debian bookworm) has no `json` template function: the labels come out of the full inspect
  bh inspect --type image "$image" \
    | node -e 'let s = ""; process.stdin.on("data", (d) => { s += d; }).on("end", () => { console.log(JSON.stringify(JSON.parse(s).OCIv1.config.Labels ?? {})); })'
else
  echo "$image"
fi
