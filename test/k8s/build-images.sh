#!/usr/bin/env bash
# Test tooling (never product code): the container images of test/k8s/clusters.sh, as
# image tarballs for `ctr -n k8s.io images import`, built locally (no registry here):
#   pause.tar   registry.k8s.io/pause:3.10.1  Kubernetes' own build/pause/linux/pause.c from
#               the pinned k8s.io/kubernetes module, compiled static with the system cc (OCI layout)
#   test.tar    localhost/strait-test:1       busybox-static: httpd on :8080 whose /cgi-bin/ip
#               answers the client's address (REMOTE_ADDR); get HOST PORT PATH (nc), sh; and
#               the host's curl, dig and iperf3 with their libraries (OCI layout)
#   coredns.tar localhost/coredns:test        scripts/build-coredns.sh's static binary (only when
#               that is built: COREDNS_PRINT=1 asks it without building)
#   mcs-socat.tar    docker.io/alpine/socat:1.7.4.4   } the two images the MCS conformance suite
#   mcs-netshoot.tar docker.io/nicolaka/netshoot:v0.15 } (test/k8s/build-mcs-conformance.sh) runs,
#               under the names its pods use, with what it runs in them: in the first Debian's
#               socat 1.7.4.4 (its hello server: `socat TCP-LISTEN:42,... SYSTEM:'echo ...'`)
#               and busybox's sh/grep/awk/tr; in the second BIND's nslookup (the suite parses its
#               output), OpenBSD's nc (-4/-6 -v -w), dig, curl, dash as sh (busybox's ash would
#               run its own nc and nslookup applets ahead of these) and busybox (sleep, grep, awk,
#               tail); no entrypoint in the second (the suite gives it a command as args), as
#               upstream's; only when socat and nc.openbsd are installed (scripts/setup-system.sh)
#   strait.tar  localhost/strait:test         test/image/build-image.sh, saved with buildah
#               (docker-archive); only with --strait
#   strait-previous.tar localhost/strait:previous  the same for the previous version the
#               upgrade tests start from (the commit in test/k8s-real/previous-version, its
#               sources taken with `git archive`; built once, then cached by that commit);
#               only with --strait-previous
# into ${XDG_CACHE_HOME:-~/.cache}/strait/k8s/<version>/images/ and prints that directory.
# Idempotent: what is up to date is not rebuilt.
#   test/k8s/build-images.sh [--strait] [--strait-previous]
set -euo pipefail
with_strait= with_previous=
for a in "$@"; do
  case "$a" in
    --strait) with_strait=1 ;;
    --strait-previous) with_previous=1 ;;
    *) echo "build-images.sh: unknown argument '$a' (--strait, --strait-previous)" >&2; exit 2 ;;
  esac
done
here="$(cd "$(dirname "$0")" && pwd)"
cache="$("$here/build-apiserver.sh" --print)/images"
mkdir -p "$cache"
# one build per image at a time (the small images are not held up by the strait image)
exec 8>"$cache/.lock-small"
flock 8
log() { echo "build-images.sh: $*" >&2; }

version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$here/apiserver/go.mod")"
modcache="$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")"
pause_c="$modcache/k8s.io/kubernetes@$version/build/pause/linux/pause.c"
if [ ! -f "$pause_c" ]; then
  (cd "$here/apiserver" && GOFLAGS=-mod=mod go mod download k8s.io/kubernetes) >&2
fi

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# oci_tar <rootfs dir> <image name> <entrypoint json> <out.tar> [Entrypoint|Cmd]: one
# uncompressed layer; the json is the image's Entrypoint (or its Cmd, with no Entrypoint)
oci_tar() {
  local rootfs=$1 name=$2 entry=$3 out=$4 entryKey=${5:-Entrypoint} work
  work=$(mktemp -d)
  mkdir -p "$work/blobs/sha256"
  tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$rootfs" -cf "$work/layer.tar" .
  local ld ls cd cs md ms
  ld=$(sha "$work/layer.tar"); ls=$(size "$work/layer.tar")
  mv "$work/layer.tar" "$work/blobs/sha256/$ld"
  printf '{"architecture":"amd64","os":"linux","config":{"%s":%s,"Env":["PATH=/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$entryKey" "$entry" "$ld" >"$work/config.json"
  cd=$(sha "$work/config.json"); cs=$(size "$work/config.json")
  mv "$work/config.json" "$work/blobs/sha256/$cd"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$cd" "$cs" "$ld" "$ls" >"$work/manifest.json"
  md=$(sha "$work/manifest.json"); ms=$(size "$work/manifest.json")
  mv "$work/manifest.json" "$work/blobs/sha256/$md"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$md" "$ms" "$name" "${name##*:}" >"$work/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci-layout"
  tar --numeric-owner --owner=0 --group=0 -C "$work" -cf "$out.tmp" oci-layout index.json blobs
  mv -f "$out.tmp" "$out"
  rm -rf "$work"
}

# 1. pause
key="$(sha "$pause_c")-$(cc --version | head -1 | sha256sum | cut -c1-8)"
if [ "$(cat "$cache/pause.key" 2>/dev/null)" != "$key" ] || [ ! -f "$cache/pause.tar" ]; then
  log "pause image from $pause_c"
  root=$(mktemp -d)
  cc -Os -static -DVERSION="$version" -o "$root/pause" "$pause_c"
  strip "$root/pause"
  oci_tar "$root" registry.k8s.io/pause:3.10.1 '["/pause"]' "$cache/pause.tar"
  rm -rf "$root"
  echo "$key" >"$cache/pause.key"
fi

# copy_with_libs <rootfs> <binary>...: the binaries into <rootfs>/bin, with the shared
# libraries ldd names (and the dynamic loader) at their own paths
copy_with_libs() {
  local rootfs=$1 b l
  shift
  for b in "$@"; do
    cp "$b" "$rootfs/bin/$(basename "$b")"
    for l in $(ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
      [ -e "$rootfs$l" ] && continue
      mkdir -p "$rootfs$(dirname "$l")"
      cp -L "$l" "$rootfs$l"
    done
  done
}
# the host tools the tests run inside pods: real curl, dig and iperf3 (Debian's, with their
# libraries; the image's glibc is the host's)
TOOLS=(/usr/bin/curl /usr/bin/dig /usr/bin/iperf3)
for t in "${TOOLS[@]}"; do [ -x "$t" ] || { log "'$t' is missing (scripts/setup-system.sh installs it)"; exit 3; }; done

# 2. test image
key="$(sha /usr/bin/busybox)-$(cat "${TOOLS[@]}" | sha256sum | cut -c1-16)-v3"
if [ "$(cat "$cache/test.key" 2>/dev/null)" != "$key" ] || [ ! -f "$cache/test.tar" ]; then
  log "test image from busybox-static"
  root=$(mktemp -d)
  mkdir -p "$root/bin" "$root/www/cgi-bin" "$root/tmp" "$root/etc"
  cp /usr/bin/busybox "$root/bin/busybox"
  for a in sh httpd wget nc sleep cat echo ip ifconfig hostname env ls ps kill nslookup; do ln -s busybox "$root/bin/$a"; done
  # the client's address as the server saw it (httpd listens dual-stack: [::ffff:a.b.c.d])
  cat >"$root/www/cgi-bin/ip" <<'EOF'
#!/bin/sh
a=${REMOTE_ADDR#[}; a=${a%]}; a=${a#::ffff:}
printf 'Content-Type: text/plain\r\n\r\n%s\n' "$a"
EOF
  # get HOST PORT PATH: an HTTP/1.0 GET printing the whole response (this busybox's static
  # wget crashes in glibc's NSS; nc resolves no names)
  cat >"$root/bin/get" <<'EOF'
#!/bin/sh
printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "${3:-/}" "$1" | nc -w "${GET_TIMEOUT:-3}" "$1" "$2"
EOF
  chmod 0755 "$root/www/cgi-bin/ip" "$root/bin/get"
  copy_with_libs "$root" "${TOOLS[@]}"
  printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
  echo 'ok' >"$root/www/index.html"
  echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
  echo 'root:x:0:' >"$root/etc/group"
  oci_tar "$root" localhost/strait-test:1 '["/bin/busybox","httpd","-f","-v","-p","8080","-h","/www"]' "$cache/test.tar"
  rm -rf "$root"
  echo "$key" >"$cache/test.key"
fi

# 3. CoreDNS (each cluster's DNS; scripts/build-coredns.sh, static): only when built already
coredns=$(COREDNS_PRINT=1 "$here/../../scripts/build-coredns.sh" 2>/dev/null || true)
if [ -n "$coredns" ] && [ -x "$coredns" ]; then
  key="$(sha "$coredns")-v1"
  if [ "$(cat "$cache/coredns.key" 2>/dev/null)" != "$key" ] || [ ! -f "$cache/coredns.tar" ]; then
    file "$coredns" | grep -q 'statically linked' || { log "$coredns is not static (build it with CGO_ENABLED=0)"; exit 3; }
    log "CoreDNS image from $coredns"
    root=$(mktemp -d)
    mkdir -p "$root/etc/coredns" "$root/tmp"
    cp "$coredns" "$root/coredns"
    echo 'root:x:0:0:root:/:/coredns' >"$root/etc/passwd"
    oci_tar "$root" localhost/coredns:test '["/coredns","-conf","/etc/coredns/Corefile"]' "$cache/coredns.tar"
    rm -rf "$root"
    echo "$key" >"$cache/coredns.key"
  fi
fi

# 4. the MCS conformance suite's images (docker.io/alpine/socat, docker.io/nicolaka/netshoot)
MCS_TOOLS=(/usr/bin/socat /bin/nc.openbsd /usr/bin/nslookup /usr/bin/dig /usr/bin/curl)
mcs_missing=""
for t in "${MCS_TOOLS[@]}" /bin/dash; do [ -x "$t" ] || mcs_missing="$mcs_missing $t"; done
if [ -n "$mcs_missing" ]; then
  log "not building the MCS conformance images:$mcs_missing missing (scripts/setup-system.sh installs socat, netcat-openbsd)"
else
  # mcs_root <applet>...: a rootfs with busybox and these applets, /etc for glibc's resolver
  mcs_root() {
    local root a
    root=$(mktemp -d)
    mkdir -p "$root/bin" "$root/tmp" "$root/etc"
    cp /usr/bin/busybox "$root/bin/busybox"
    for a in "$@"; do ln -s busybox "$root/bin/$a"; done
    printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
    echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
    echo 'root:x:0:' >"$root/etc/group"
    echo "$root"
  }
  key="$(sha /usr/bin/busybox)-$(sha /usr/bin/socat)-v1"
  if [ "$(cat "$cache/mcs-socat.key" 2>/dev/null)" != "$key" ] || [ ! -f "$cache/mcs-socat.tar" ]; then
    log "alpine/socat:1.7.4.4 from Debian's socat $(socat -V 2>/dev/null | sed -n 's/^socat version \([^ ]*\).*/\1/p')"
    root=$(mcs_root sh grep awk tr echo cat sleep env ls ps)
    copy_with_libs "$root" /usr/bin/socat
    oci_tar "$root" docker.io/alpine/socat:1.7.4.4 '["socat"]' "$cache/mcs-socat.tar"
    rm -rf "$root"
    echo "$key" >"$cache/mcs-socat.key"
  fi
  key="$(sha /usr/bin/busybox)-$(cat "${MCS_TOOLS[@]:1}" /bin/dash | sha256sum | cut -c1-16)-v2"
  if [ "$(cat "$cache/mcs-netshoot.key" 2>/dev/null)" != "$key" ] || [ ! -f "$cache/mcs-netshoot.tar" ]; then
    log "nicolaka/netshoot:v0.15 from dash, busybox, BIND's nslookup/dig, OpenBSD's nc and curl"
    root=$(mcs_root grep awk tail head tr echo cat sleep env ls ps ip ifconfig hostname ping wget)
    copy_with_libs "$root" "${MCS_TOOLS[@]:1}" /bin/dash
    mv "$root/bin/nc.openbsd" "$root/bin/nc"
    # sh is dash, as upstream's sh (Alpine's busybox ash) runs the nc and nslookup found on the
    # PATH: Debian's busybox ash runs its own applets first, whatever the PATH holds, so `nc -v`
    # was busybox's nc (no -v: "invalid option", exit 1, an empty output to the suite) and
    # `nslookup` busybox's
    ln -s dash "$root/bin/sh"
    oci_tar "$root" docker.io/nicolaka/netshoot:v0.15 '["/bin/sh"]' "$cache/mcs-netshoot.tar" Cmd
    rm -rf "$root"
    echo "$key" >"$cache/mcs-netshoot.key"
  fi
fi

# 5. strait (the Dockerfile's image)
flock -u 8
icache=$("$here/../image/build-image.sh" --print)
# save_image IMAGE NAME KEY: the image of build-image.sh's storage as $cache/NAME.tar, keyed
save_image() {
  log "saving $1"
  rm -f "$cache/$2.tar.tmp"
  (exec 9>"$icache/lock"; flock 9
   buildah --root "$icache/storage" --runroot "$icache/run" --storage-driver vfs \
     push --quiet "$1" "docker-archive:$cache/$2.tar.tmp:$1") >&2
  mv -f "$cache/$2.tar.tmp" "$cache/$2.tar"
  echo "$3" >"$cache/$2.key"
}
[ -z "$with_strait$with_previous" ] || { exec 7>"$cache/.lock-strait"; flock 7; }
if [ -n "$with_strait" ]; then
  img=$("$here/../image/build-image.sh")
  key="$(cat "$icache/image.key")"
  if [ "$(cat "$cache/strait.key" 2>/dev/null)" != "$key" ] || [ ! -f "$cache/strait.tar" ]; then
    save_image "$img" strait "$key"
  fi
fi
if [ -n "$with_previous" ]; then
  repo="$(cd "$here/../.." && pwd)"
  commit="$(sed -n 's/^commit: *\([0-9a-f]\{40\}\)$/\1/p' "$repo/test/k8s-real/previous-version")"
  [ -n "$commit" ] || { log "test/k8s-real/previous-version names no commit"; exit 1; }
  if [ "$(cat "$cache/strait-previous.key" 2>/dev/null)" != "$commit" ] || [ ! -f "$cache/strait-previous.tar" ]; then
    git -C "$repo" cat-file -e "$commit^{commit}" \
      || { log "the previous version's commit $commit cannot be read from this clone (a shallow clone? git's message above)"; exit 1; }
    src="$cache/strait-previous-src"
    rm -rf "$src"
    mkdir -p "$src"
    git -C "$repo" archive "$commit" | tar -x -C "$src"
    img=$(STRAIT_IMAGE_ROOT="$src" STRAIT_IMAGE_NAME=localhost/strait:previous "$here/../image/build-image.sh")
    save_image "$img" strait-previous "$commit"
  fi
fi
echo "$cache"
