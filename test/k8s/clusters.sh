#!/usr/bin/env bash
# Test tooling (never product code): N real Kubernetes clusters on this machine, each
# with a gateway node and a worker node (kubelet + containerd + kube-proxy each), the
# control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) on the
# gateway node, every node in its own network namespace made here. Nothing is routed
# to the host's interfaces: every address lives inside these namespaces.
#
#   test/k8s/clusters.sh up N [--strait] [--gateways 2]
#                                         bring up clusters a, b, ... (--strait: import the strait image too;
#                                         --gateways 2: cluster a gets a second gateway node a-gw2, for HA;
#                                         STRAIT_IMAGE_TAR=FILE: import that strait image archive instead)
#   test/k8s/clusters.sh down             remove everything `up` made (processes by PID, mounts,
#                                         cgroups, namespaces, files) and restore the sysctls
#   test/k8s/clusters.sh status           the clusters that are up, their nodes
#   test/k8s/clusters.sh kubectl L ARGS   kubectl against cluster L (a, b, ...), from the link namespace
#   test/k8s/clusters.sh exec CMD ARGS    run CMD in the link namespace (reaches every API server)
#   test/k8s/clusters.sh kubeconfig L     print cluster L's admin kubeconfig path
#   test/k8s/clusters.sh apiserver L stop|start|restart
#                                         cluster L's kube-apiserver (a fault of the real-cluster suite):
#                                         stop = SIGTERM to its PID (KILL after 10 s), its argv kept; start =
#                                         the same argv in the same namespace, then wait for /readyz (a
#                                         no-op when it runs); restart = both
#
# Topology, for cluster i (letter L = a, b, ...; cluster id cluster-L):
#   netns sk-wan          the routed link between clusters: 172.30.i.1 towards each gateway node
#   netns sk-L-gw         node L-gw: 172.30.i.2 (InternalIP, wan side), 172.31.i.1 (node link);
#                         control plane on 127.0.0.1 and the API server on 172.30.i.2:6443
#   netns sk-L-wk         node L-wk: 172.31.i.2 (InternalIP), default route via L-gw
#   netns sk-a-gw2        (--gateways 2) node a-gw2, labelled a gateway too: 172.30.1.3 (InternalIP, on
#                         the routed link beside a-gw: bridge wan-a in sk-wan) and 172.31.1.3 on
#                         cluster a's node network (then the L2 bridge lan-a in sk-wan, no address
#                         there, joining a-gw, a-wk and a-gw2); the worker reaches 172.30.1.3 over it
#   pods 10.(10i).0.0/16 (a /24 per node, allocated by kube-controller-manager),
#   services 10.(10i+1).0.0/16, the cluster DNS (CoreDNS, when its image is built:
#   scripts/build-coredns.sh) at 10.(10i+1).0.10. The link namespace routes only the node subnets.
#
# Facts of this VM the script handles:
# - `ip netns exec` remounts /sys (runc then finds no cgroup): daemons start under
#   `nsenter --net=/run/netns/X` instead;
# - no CAP_SYS_RESOURCE: containerd's CRI restrict_oom_score_adj = true;
# - cgroup v1: kubelet cgroupDriver cgroupfs, failCgroupV1 false, and its cgroup root
#   (/strait-k8s/<node> in every hierarchy) is made here;
# - two kubelets on one host delete each other's pod logs: each has its own podLogsDir,
#   each node's CNI network its own IPAM dataDir;
# - kubectl logs/exec: the API server prefers InternalIP;
# - etcd 3.4 tells the API server its progress every 10 min by default: a watch from a list's
#   resourceVersion then waits (3 s, then "Too large resource version") until an object of
#   that kind changes; etcd runs with a 2 s progress notification instead (as kubeadm's
#   clusters get from newer etcd and the API server's progress requests);
# - kubelet rewrites global sysctls (kernel.panic, kernel.panic_on_oops, vm.overcommit_memory,
#   ...): they are saved before the first kubelet starts and restored when `up` exits (pass or
#   fail, by a trap) and by `down`, from the saved file.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
STATE=${STRAIT_K8S_STATE:-/run/strait-k8s}
DATA=${STRAIT_K8S_DATA:-/var/lib/strait-k8s}
CG=strait-k8s
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
log() { echo "clusters.sh: $*" >&2; }
die() { log "$*"; exit 1; }
letter() { printf "\\$(printf '%03o' $((96 + $1)))"; }

# ---------------------------------------------------------------- sysctls
save_sysctls() {
  [ -f "$STATE/sysctl.saved" ] && return 0
  : >"$STATE/sysctl.saved.tmp"
  for k in "${SYSCTLS[@]}"; do
    f=/proc/sys/${k//.//}
    [ -r "$f" ] && echo "$k=$(cat "$f")" >>"$STATE/sysctl.saved.tmp"
  done
  mv "$STATE/sysctl.saved.tmp" "$STATE/sysctl.saved"
}
restore_sysctls() {
  [ -f "$STATE/sysctl.saved" ] || return 0
  while IFS='=' read -r k v; do
    [ -n "$k" ] || continue
    f=/proc/sys/${k//.//}
    if [ "$(cat "$f" 2>/dev/null)" != "$v" ]; then
      echo "$v" >"$f" 2>/dev/null || log "could not restore $k=$v"
    fi
  done <"$STATE/sysctl.saved"
}

# ---------------------------------------------------------------- processes
# start <id> <netns> <logfile> CMD...: a daemon in a network namespace, its PID in $STATE/pids/<id>
start() {
  local id=$1 ns=$2 out=$3
  shift 3
  # not a process group leader (non-interactive shell), so setsid execs in place and
  # $! is the daemon's own PID (nsenter execs too): Ctrl-C on `up` does not reach it.
  # The caller's descriptors past stderr are closed first: a daemon that inherited one would
  # hold it as long as it runs (`flock /tmp/k8s-real.lock clusters.sh up` left every daemon
  # holding that lock, and every later flock on it waited forever)
  (
    close_inherited_fds
    exec setsid nsenter --net="/run/netns/$ns" "$@" >>"$out" 2>&1 </dev/null
  ) &
  echo "$! $1" >"$STATE/pids/$id"
}
close_inherited_fds() {
  local fd
  for fd in /proc/"$BASHPID"/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}
# stop_pid <pid> <exe> [signal]: TERM (or signal), then KILL after 10 s; only if
# /proc/<pid>/exe is still <exe>
stop_pid() {
  local pid=$1 exe=$2 sig=${3:-TERM} i
  [ -e "/proc/$pid" ] || return 0
  case "$(readlink "/proc/$pid/exe" 2>/dev/null)" in *"$(basename "$exe")"*) ;; *) return 0 ;; esac
  kill -"$sig" "$pid" 2>/dev/null || return 0
  for i in $(seq 1 100); do [ -e "/proc/$pid" ] || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do [ -e "/proc/$pid" ] || return 0; sleep 0.1; done
}
stop_id() {
  local f="$STATE/pids/$1"
  [ -f "$f" ] || return 0
  read -r pid exe <"$f"
  stop_pid "$pid" "$exe"
  rm -f "$f"
}

# ---------------------------------------------------------------- certificates
pki() { # pki <cluster dir> <cluster index>
  local d=$1/pki i=$2
  mkdir -p "$d"
  local o="openssl"
  $o req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" -days 30 -subj "/CN=strait-test-ca-$i" 2>/dev/null
  cert() { # cert <name> <subject> [sans]
    $o req -newkey rsa:2048 -nodes -keyout "$d/$1.key" -out "$d/$1.csr" -subj "$2" 2>/dev/null
    local ext="$d/$1.ext"
    echo "basicConstraints=CA:FALSE" >"$ext"
    echo "keyUsage=digitalSignature,keyEncipherment" >>"$ext"
    echo "extendedKeyUsage=serverAuth,clientAuth" >>"$ext"
    [ -n "${3:-}" ] && echo "subjectAltName=$3" >>"$ext"
    $o x509 -req -in "$d/$1.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -out "$d/$1.crt" -days 30 -extfile "$ext" 2>/dev/null
    rm -f "$d/$1.csr" "$ext"
  }
  cert apiserver "/CN=kube-apiserver" "IP:172.30.$i.2,IP:10.$((10 * i + 1)).0.1,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
  cert admin "/O=system:masters/CN=strait-test-admin"
  cert node-gw "/O=system:nodes/CN=system:node:$(letter "$i")-gw"
  cert node-wk "/O=system:nodes/CN=system:node:$(letter "$i")-wk"
  cert node-gw2 "/O=system:nodes/CN=system:node:$(letter "$i")-gw2"
  $o genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key" 2>/dev/null
  $o pkey -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
}
kubeconfig() { # kubeconfig <file> <server> <pki dir> <cert name> <cluster name>
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $5
  cluster:
    server: $2
    certificate-authority-data: $(base64 -w0 <"$3/ca.crt")
users:
- name: $5-$4
  user:
    client-certificate-data: $(base64 -w0 <"$3/$4.crt")
    client-key-data: $(base64 -w0 <"$3/$4.key")
contexts:
- name: $5
  context: { cluster: $5, user: $5-$4 }
current-context: $5
EOF
}

# ---------------------------------------------------------------- cgroups
CG_HIER=()
cg_hierarchies() {
  CG_HIER=()
  local h
  for h in /sys/fs/cgroup/*/; do
    h=${h%/}
    [ -e "$h/cgroup.procs" ] && CG_HIER+=("$h")
  done
}
cg_make() { # cg_make <node>: /strait-k8s/<node> in every v1 hierarchy
  local h p
  for h in "${CG_HIER[@]}"; do
    for p in "$h/$CG" "$h/$CG/$1"; do
      [ -d "$p" ] && continue
      mkdir "$p"
      if [ -e "$p/cpuset.cpus" ]; then
        cat "$(dirname "$p")/cpuset.cpus" >"$p/cpuset.cpus"
        cat "$(dirname "$p")/cpuset.mems" >"$p/cpuset.mems"
      fi
    done
  done
}
# cg_kill_and_remove: kill every process left in our cgroups (the containers), remove them
cg_kill_and_remove() {
  local h pids dir round
  cg_hierarchies
  for round in 1 2 3 4 5 6 7 8 9 10; do
    pids=""
    for h in "${CG_HIER[@]}"; do
      [ -d "$h/$CG" ] || continue
      # cgroups vanish while find walks them (their processes are dying): find then fails,
      # which under set -e and pipefail ended `down` here, silently, leaving the clusters up
      pids="$pids $( (find "$h/$CG" -name cgroup.procs -exec cat {} + 2>/dev/null || true) | tr '\n' ' ')"
    done
    pids=$(echo "$pids" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
    [ -z "${pids// /}" ] && break
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.5
  done
  for h in "${CG_HIER[@]}"; do
    [ -d "$h/$CG" ] || continue
    find "$h/$CG" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [ -d "$h/$CG" ] && log "cgroup $h/$CG not removed (busy?)"
  done
  return 0
}

# ---------------------------------------------------------------- one node
node_up() { # node_up <cluster index> <role gw|wk> <node ip> <server url> <labels>
  local i=$1 role=$2 ip=$3 server=$4 labels=$5
  local L node ns d s c
  L=$(letter "$i"); node=$L-$role; ns=sk-$L-$role
  d=$DATA/$node; s=$STATE/$node; c=$STATE/cluster-$L
  mkdir -p "$d/kubelet" "$d/pod-logs" "$d/cni/net.d" "$d/cni/ipam" "$d/containerd" "$s"
  cg_make "$node"

  cat >"$s/containerd.toml" <<EOF
version = 2
root = "$d/containerd"
state = "$s/containerd"
oom_score = 0
[grpc]
  address = "$s/containerd.sock"
[ttrpc]
  address = "$s/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
    conf_template = "$d/cni/template.json"
EOF
  # the node's pod network, written by containerd once kubelet hands it the podCIDR
  # that kube-controller-manager allocated
  cat >"$d/cni/template.json" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "strait-k8s-$node",
  "plugins": [
    { "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": { "type": "host-local", "dataDir": "$d/cni/ipam",
                "ranges": [[{ "subnet": "{{.PodCIDR}}" }]], "routes": [{ "dst": "0.0.0.0/0" }] } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
  # the pods' way out of the cluster, as a CNI's outgoing NAT or ip-masq-agent has it: pod
  # traffic to anything outside 10.0.0.0/8 (every cluster's pods and Services) leaves with the
  # node's address (a pod reaches another cluster's API server, e.g. the broker, as in a cloud);
  # pod to pod and to Services keeps the pod's own address
  nsenter --net="/run/netns/$ns" nft -f - <<EOF
table ip strait-k8s-egress {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr 10.$((10 * i)).0.0/16 ip daddr != 10.0.0.0/8 masquerade
  }
}
EOF
  start "containerd-$node" "$ns" "$s/containerd.log" "$(command -v containerd)" --config "$s/containerd.toml"
  local k
  for k in $(seq 1 100); do [ -S "$s/containerd.sock" ] && break; sleep 0.1; done
  [ -S "$s/containerd.sock" ] || die "containerd of $node did not start: $(tail -5 "$s/containerd.log")"

  local img
  # STRAIT_IMAGE_TAR: another strait image archive (docker-archive of localhost/strait:test) than
  # the cached one, e.g. one built from a branch's sources into a private buildah storage
  # the MCS conformance suite's two images (docker.io/alpine/socat, docker.io/nicolaka/netshoot)
  # when build-images.sh made them (it needs socat and nc.openbsd on the host)
  local mcs=()
  [ -f "$IMAGES/mcs-socat.tar" ] && [ -f "$IMAGES/mcs-netshoot.tar" ] && mcs=("$IMAGES/mcs-socat.tar" "$IMAGES/mcs-netshoot.tar")
  for img in "$IMAGES/pause.tar" "$IMAGES/test.tar" ${WITH_COREDNS:+"$IMAGES/coredns.tar"} "${mcs[@]}" ${WITH_STRAIT:+"${STRAIT_IMAGE_TAR:-$IMAGES/strait.tar}"}; do
    ctr -a "$s/containerd.sock" -n k8s.io images import --no-unpack "$img" >/dev/null \
      || die "could not import $img into $node"
  done

  kubeconfig "$s/kubelet.kubeconfig" "$server" "$c/pki" "node-$role" "cluster-$L"
  cat >"$s/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupRoot: /$CG/$node
cgroupsPerQOS: true
containerRuntimeEndpoint: unix://$s/containerd.sock
podLogsDir: $d/pod-logs
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
failSwapOn: false
clusterDomain: cluster.local
clusterDNS: [10.$((10 * i + 1)).0.10]
resolvConf: ""
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $c/pki/ca.crt }
authorization: { mode: Webhook }
evictionHard: { memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 50
EOF
  start "kubelet-$node" "$ns" "$s/kubelet.log" "$K8S/kubelet" \
    --config="$s/kubelet.yaml" --kubeconfig="$s/kubelet.kubeconfig" \
    --root-dir="$d/kubelet" --cert-dir="$d/kubelet/pki" \
    --hostname-override="$node" --node-ip="$ip" --node-labels="$labels" --v=1

  kubeconfig "$s/proxy.kubeconfig" "$server" "$c/pki" admin "cluster-$L"
  cat >"$s/proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $s/proxy.kubeconfig }
hostnameOverride: $node
mode: nftables
clusterCIDR: 10.$((10 * i)).0.0/16
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s }
EOF
  start "kube-proxy-$node" "$ns" "$s/kube-proxy.log" "$K8S/kube-proxy" --config="$s/proxy.yaml"
}

# ---------------------------------------------------------------- one cluster
cluster_up() { # cluster_up <index>
  local i=$1 L c gw wk
  L=$(letter "$i"); c=$STATE/cluster-$L; gw=sk-$L-gw; wk=sk-$L-wk
  mkdir -p "$c"
  # namespaces and links
  ip netns add "$gw"; echo "$gw" >>"$STATE/netns"
  ip netns add "$wk"; echo "$wk" >>"$STATE/netns"
  if [ "$(gateways_of "$i")" = 2 ]; then
    # two gateway nodes: the routed link's side of this cluster and its node network are
    # bridges (in the link namespace; the node network's has no address there)
    local g2=sk-$L-gw2
    ip netns add "$g2"; echo "$g2" >>"$STATE/netns"
    ip -n sk-wan link add "wan-$L" type bridge
    ip -n sk-wan link add "lan-$L" type bridge
    local port peer n dev
    for port in "1:$gw:wan0" "2:$g2:wan0"; do
      IFS=: read -r n peer dev <<<"$port"
      ip -n sk-wan link add "wan-$L-$n" type veth peer name "$dev" netns "$peer"
      ip -n sk-wan link set "wan-$L-$n" master "wan-$L" up
    done
    for port in "gw:$gw:node0" "wk:$wk:eth0" "gw2:$g2:node0"; do
      IFS=: read -r n peer dev <<<"$port"
      ip -n sk-wan link add "lan-$L-$n" type veth peer name "$dev" netns "$peer"
      ip -n sk-wan link set "lan-$L-$n" master "lan-$L" up
    done
    ip -n sk-wan addr add "172.30.$i.1/24" dev "wan-$L"
    ip -n sk-wan link set "wan-$L" up
    ip -n sk-wan link set "lan-$L" up
    ip -n "$g2" addr add "172.30.$i.3/24" dev wan0
    ip -n "$g2" link set wan0 up
    ip -n "$g2" link set lo up
    ip -n "$g2" route add default via "172.30.$i.1"
    ip -n "$g2" addr add "172.31.$i.3/24" dev node0
    ip -n "$g2" link set node0 up
    ip netns exec "$g2" sysctl -qw net.ipv4.ip_forward=1
  else
    ip link add "wan-$L" type veth peer name wan0 netns "$gw"
    ip link set "wan-$L" netns sk-wan
    ip -n sk-wan addr add "172.30.$i.1/24" dev "wan-$L"
    ip -n sk-wan link set "wan-$L" up
    ip link add "nl-$L" type veth peer name eth0 netns "$wk"
    ip link set "nl-$L" netns "$gw"
    ip -n "$gw" link set "nl-$L" name node0
  fi
  ip -n "$gw" addr add "172.30.$i.2/24" dev wan0
  ip -n "$gw" link set wan0 up
  ip -n "$gw" link set lo up
  ip -n "$gw" route add default via "172.30.$i.1"
  ip -n "$gw" addr add "172.31.$i.1/24" dev node0
  ip -n "$gw" link set node0 up
  ip -n "$wk" addr add "172.31.$i.2/24" dev eth0
  ip -n "$wk" link set eth0 up
  ip -n "$wk" link set lo up
  ip -n "$wk" route add default via "172.31.$i.1"
  # the second gateway node's InternalIP straight over the node network (VXLAN both ways)
  if [ "$(gateways_of "$i")" = 2 ]; then ip -n "$wk" route add "172.30.$i.3" via "172.31.$i.3"; fi
  ip netns exec "$gw" sysctl -qw net.ipv4.ip_forward=1
  ip netns exec "$wk" sysctl -qw net.ipv4.ip_forward=1

  # control plane
  pki "$c" "$i"
  local p=$c/pki
  kubeconfig "$c/admin.kubeconfig" "https://172.30.$i.2:6443" "$p" admin "cluster-$L"
  kubeconfig "$c/local.kubeconfig" "https://127.0.0.1:6443" "$p" admin "cluster-$L"
  start "etcd-$L" "$gw" "$c/etcd.log" "$(command -v etcd)" --name "cluster-$L" --data-dir "$c/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster "cluster-$L=http://127.0.0.1:2380" \
    --experimental-watch-progress-notify-interval=2s
  start "kube-apiserver-$L" "$gw" "$c/kube-apiserver.log" "$K8S/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 --bind-address=0.0.0.0 --advertise-address="172.30.$i.2" --secure-port=6443 \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --cert-dir="$c/certs" --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-cluster-ip-range="10.$((10 * i + 1)).0.0/16" --allow-privileged=true \
    --kubelet-client-certificate="$p/admin.crt" --kubelet-client-key="$p/admin.key" \
    --kubelet-preferred-address-types=InternalIP,Hostname --profiling=false --v=0
  start "kube-controller-manager-$L" "$gw" "$c/kube-controller-manager.log" "$K8S/kube-controller-manager" \
    --kubeconfig="$c/local.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 \
    --allocate-node-cidrs=true --cluster-cidr="10.$((10 * i)).0.0/16" --node-cidr-mask-size=24 \
    --service-cluster-ip-range="10.$((10 * i + 1)).0.0/16" --configure-cloud-routes=false \
    --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" --root-ca-file="$p/ca.crt" \
    --service-account-private-key-file="$p/sa.key" --use-service-account-credentials=true \
    --cluster-name="cluster-$L" --profiling=false
  start "kube-scheduler-$L" "$gw" "$c/kube-scheduler.log" "$K8S/kube-scheduler" \
    --kubeconfig="$c/local.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 --profiling=false
  local k
  for k in $(seq 1 300); do
    kc "$L" get --raw /readyz >/dev/null 2>&1 && break
    sleep 0.2
  done
  kc "$L" get --raw /readyz >/dev/null 2>&1 || die "cluster-$L's API server is not ready: $(tail -5 "$c/kube-apiserver.log")"

  node_up "$i" gw "172.30.$i.2" "https://172.30.$i.2:6443" "submariner.io/gateway=true"
  node_up "$i" wk "172.31.$i.2" "https://172.30.$i.2:6443" "strait.dev/test-role=worker"
  if [ "$(gateways_of "$i")" = 2 ]; then node_up "$i" gw2 "172.30.$i.3" "https://172.30.$i.2:6443" "submariner.io/gateway=true"; fi
}

# gateways_of <index>: the number of gateway nodes of cluster i (--gateways N: cluster a only)
gateways_of() { if [ "$1" = 1 ]; then echo "${GATEWAYS:-1}"; else echo 1; fi; }

kc() { # kc <letter> kubectl args... (from the link namespace)
  local L=$1
  shift
  nsenter --net=/run/netns/sk-wan "$KUBECTL" --kubeconfig "$STATE/cluster-$L/admin.kubeconfig" "$@"
}

# wait until both nodes of cluster i are Ready with podCIDRs, then route the worker's pods
cluster_ready() {
  local i=$1 L k cidr want=""
  L=$(letter "$i")
  for k in $(seq 1 $((2 + $(gateways_of "$i") - 1))); do want="${want}True "; done
  for k in $(seq 1 600); do
    if [ "$(kc "$L" get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{end}' 2>/dev/null)" = "$want" ]; then
      break
    fi
    sleep 0.2
  done
  kc "$L" wait --for=condition=Ready node --all --timeout=5s >/dev/null \
    || die "cluster-$L's nodes are not Ready (see $STATE/$L-*/kubelet.log)"
  cidr=$(kc "$L" get node "$L-wk" -o jsonpath='{.spec.podCIDR}')
  [ -n "$cidr" ] || die "node $L-wk has no podCIDR (kube-controller-manager --allocate-node-cidrs)"
  ip -n "sk-$L-gw" route replace "$cidr" via "172.31.$i.2"
  if [ "$(gateways_of "$i")" = 2 ]; then
    # every node reaches every node's pods over the node network
    local cgw cgw2
    cgw=$(kc "$L" get node "$L-gw" -o jsonpath='{.spec.podCIDR}')
    cgw2=$(kc "$L" get node "$L-gw2" -o jsonpath='{.spec.podCIDR}')
    [ -n "$cgw2" ] || die "node $L-gw2 has no podCIDR"
    ip -n "sk-$L-gw" route replace "$cgw2" via "172.31.$i.3"
    ip -n "sk-$L-wk" route replace "$cgw2" via "172.31.$i.3"
    ip -n "sk-$L-gw2" route replace "$cidr" via "172.31.$i.2"
    ip -n "sk-$L-gw2" route replace "$cgw" via "172.31.$i.1"
  fi
  if [ -n "${WITH_COREDNS:-}" ]; then coredns_up "$i"; fi
}

# the cluster's DNS, as kubeadm installs it: CoreDNS in kube-system behind the Service
# kube-dns at the kubelets' clusterDNS address (10.(10i+1).0.10); `reload` re-reads the
# Corefile within seconds when the ConfigMap changes (how a clusterset.local stanza is added)
coredns_up() {
  local i=$1 L
  L=$(letter "$i")
  kc "$L" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: { name: coredns, namespace: kube-system }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: "system:coredns" }
rules:
  - { apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch] }
  - { apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: "system:coredns" }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns" }
subjects: [{ kind: ServiceAccount, name: coredns, namespace: kube-system }]
---
apiVersion: v1
kind: ConfigMap
metadata: { name: coredns, namespace: kube-system }
data:
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
            ttl 30
        }
        cache 5
        loop
        reload 2s 1s
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: coredns, namespace: kube-system, labels: { k8s-app: kube-dns } }
spec:
  replicas: 1
  selector: { matchLabels: { k8s-app: kube-dns } }
  template:
    metadata: { labels: { k8s-app: kube-dns } }
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      containers:
        - name: coredns
          image: localhost/coredns:test
          imagePullPolicy: Never
          ports:
            - { name: dns, containerPort: 53, protocol: UDP }
            - { name: dns-tcp, containerPort: 53, protocol: TCP }
          readinessProbe: { httpGet: { path: /ready, port: 8181 }, periodSeconds: 2 }
          volumeMounts: [{ name: config, mountPath: /etc/coredns, readOnly: true }]
      volumes: [{ name: config, configMap: { name: coredns } }]
---
apiVersion: v1
kind: Service
metadata: { name: kube-dns, namespace: kube-system, labels: { k8s-app: kube-dns } }
spec:
  selector: { k8s-app: kube-dns }
  clusterIP: 10.$((10 * i + 1)).0.10
  ports:
    - { name: dns, port: 53, protocol: UDP, targetPort: 53 }
    - { name: dns-tcp, port: 53, protocol: TCP, targetPort: 53 }
EOF
}

# ---------------------------------------------------------------- the API server as a fault
# apiserver <letter> stop|start|restart: stop keeps the argv the process runs with (nsenter
# and setsid exec in place: /proc/PID/cmdline is kube-apiserver's own), start runs exactly
# that again in the gateway node's namespace, so it comes back with the same flags, data and
# certificates; start is a no-op while it runs (a test's cleanup calls it on every exit path)
apiserver() {
  local L=$1 what=$2 c=$STATE/cluster-$1 f=$STATE/pids/kube-apiserver-$1 pid="" exe="" k
  [ -f "$c/admin.kubeconfig" ] || die "cluster-$L is not up ($c)"
  if [ -f "$f" ]; then read -r pid exe <"$f"; fi
  running() { [ -n "$pid" ] && [ -e "/proc/$pid" ] && case "$(readlink "/proc/$pid/exe" 2>/dev/null)" in *kube-apiserver*) true ;; *) false ;; esac; }
  case "$what" in
    stop)
      running || die "cluster-$L's kube-apiserver is not running (pid file $f); '$0 apiserver $L start' starts it"
      cp "/proc/$pid/cmdline" "$c/kube-apiserver.argv.tmp"
      mv "$c/kube-apiserver.argv.tmp" "$c/kube-apiserver.argv"
      stop_id "kube-apiserver-$L"
      log "cluster-$L's kube-apiserver (pid $pid) stopped"
      ;;
    start)
      if running; then log "cluster-$L's kube-apiserver runs (pid $pid)"; else
        [ -s "$c/kube-apiserver.argv" ] || die "no saved argv ($c/kube-apiserver.argv): it was not stopped with '$0 apiserver $L stop'"
        local argv=()
        mapfile -d '' -t argv <"$c/kube-apiserver.argv"
        case "${argv[0]}" in *kube-apiserver) ;; *) die "$c/kube-apiserver.argv does not start kube-apiserver: '${argv[0]}'" ;; esac
        start "kube-apiserver-$L" "sk-$L-gw" "$c/kube-apiserver.log" "${argv[@]}"
        read -r pid exe <"$f"
      fi
      for k in $(seq 1 600); do
        kc "$L" get --raw /readyz >/dev/null 2>&1 && { log "cluster-$L's kube-apiserver (pid $pid) is ready"; return 0; }
        [ -e "/proc/$pid" ] || die "cluster-$L's kube-apiserver exited: $(tail -5 "$c/kube-apiserver.log")"
        sleep 0.2
      done
      die "cluster-$L's kube-apiserver (pid $pid) is not ready after 120 s: $(tail -5 "$c/kube-apiserver.log")"
      ;;
    restart)
      apiserver "$L" stop
      apiserver "$L" start
      ;;
    *) die "usage: $0 apiserver L stop|start|restart" ;;
  esac
}

# ---------------------------------------------------------------- up / down
down() {
  [ -d "$STATE" ] || { log "nothing is up"; return 0; }
  local f id ns m
  # kubelets first (no restarts of what is being stopped), then kube-proxy
  for f in "$STATE"/pids/kubelet-* "$STATE"/pids/kube-proxy-*; do if [ -e "$f" ]; then stop_id "$(basename "$f")"; fi; done
  # the containers: every process in our cgroups
  cg_kill_and_remove
  # the pods' sandboxes and containers (their CNI cache entries are removed below)
  local ids=""
  for f in "$STATE"/pids/containerd-*; do
    [ -e "$f" ] || continue
    id=$(basename "$f"); id=${id#containerd-}
    # (a containerd that does not answer must not end `down` here: set -e with pipefail)
    ids="$ids $( (ctr -a "$STATE/$id/containerd.sock" -n k8s.io containers ls -q 2>/dev/null || true) | tr '\n' ' ')"
  done
  # containerd's shims (their command line names our state directory), then containerd
  for m in $(grep -lsaF -- "$STATE/" /proc/[0-9]*/cmdline 2>/dev/null); do
    m=${m#/proc/}
    # KILL: a shim ignores TERM until containerd tells it to go (its containers are dead by now)
    stop_pid "${m%/cmdline}" containerd-shim KILL
  done
  for f in "$STATE"/pids/containerd-*; do if [ -e "$f" ]; then stop_id "$(basename "$f")"; fi; done
  for id in $ids; do rm -f "/var/lib/cni/results/cni-loopback-$id-lo"; done
  for f in "$STATE"/pids/*; do if [ -e "$f" ]; then stop_id "$(basename "$f")"; fi; done
  cg_kill_and_remove
  # mounts under our directories (pod volumes, rootfs overlays, netns of pods), deepest first
  findmnt -rn -o TARGET | awk -v a="$DATA/" -v b="$STATE/" 'index($0, a) == 1 || index($0, b) == 1' | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"; done
  # what kubelet and libcni leave outside our directories: the symlinks of the pod logs,
  # the CNI result cache of our networks
  find /var/log/containers -maxdepth 1 -lname "$DATA/*" -delete 2>/dev/null || true
  # (a pattern that matches nothing, *-gw2 without a second gateway, must not be the loop's status)
  for f in "$STATE"/*-gw "$STATE"/*-wk "$STATE"/*-gw2; do
    if [ -d "$f" ]; then rm -f /var/lib/cni/results/"strait-k8s-$(basename "$f")"-*; fi
  done
  if [ -f "$STATE/netns" ]; then
    while read -r ns; do ip netns del "$ns" 2>/dev/null || true; done < <(sort -u "$STATE/netns")
  fi
  restore_sysctls
  rm -rf "$DATA" "$STATE"
  log "down"
}

up() {
  local n=$1 i
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces, cgroups, mounts)"
  [ -d "$STATE" ] && die "clusters are already up ($STATE); run '$0 down' first"
  for t in containerd ctr runc etcd nsenter openssl nft; do
    command -v "$t" >/dev/null || die "'$t' is missing (scripts/setup-system.sh installs it)"
  done
  [ -x /usr/lib/cni/bridge ] || die "the CNI plugins are missing (scripts/setup-system.sh installs containernetworking-plugins)"
  grep -q ' cgroup ' /proc/mounts || die "no cgroup v1 hierarchy mounted"
  K8S=$("$here/build-apiserver.sh" --nodes)
  KUBECTL=$K8S/kubectl
  # with STRAIT_IMAGE_TAR the strait image is that archive: nothing is built for it
  if [ -n "${STRAIT_IMAGE_TAR:-}" ]; then
    [ -f "$STRAIT_IMAGE_TAR" ] || die "STRAIT_IMAGE_TAR=$STRAIT_IMAGE_TAR is not a file"
    IMAGES=$("$here/build-images.sh")
  else
    IMAGES=$("$here/build-images.sh" ${WITH_STRAIT:+--strait})
  fi
  # CoreDNS as each cluster's DNS when its image is built (scripts/build-coredns.sh)
  if [ -f "$IMAGES/coredns.tar" ]; then WITH_COREDNS=1; fi
  cg_hierarchies
  mkdir -p "$STATE/pids" "$DATA"
  save_sysctls
  # from here on, every exit path gives the kernel its settings back; a failed `up` removes all
  trap 'rc=$?; trap - EXIT INT TERM; restore_sysctls; if [ $rc != 0 ]; then log "up failed, removing what it made"; down; fi; exit $rc' EXIT
  trap 'exit 130' INT TERM
  local t0=$SECONDS
  ip netns add sk-wan; echo sk-wan >>"$STATE/netns"
  ip -n sk-wan link set lo up
  ip netns exec sk-wan sysctl -qw net.ipv4.ip_forward=1
  for i in $(seq 1 "$n"); do cluster_up "$i"; done
  # the link routes only node subnets (never pod CIDRs): gateway nodes reach each other
  for i in $(seq 1 "$n"); do ip -n sk-wan route replace "172.31.$i.0/24" via "172.30.$i.2"; done
  for i in $(seq 1 "$n"); do cluster_ready "$i"; done
  if [ -n "${WITH_COREDNS:-}" ]; then
    for i in $(seq 1 "$n"); do
      kc "$(letter "$i")" -n kube-system rollout status deploy/coredns --timeout=120s >/dev/null \
        || die "cluster-$(letter "$i")'s CoreDNS is not ready"
    done
  fi
  # every kubelet has set its kernel tunables by now: give the kernel its own back
  restore_sysctls
  echo "$n" >"$STATE/count"
  echo "${GATEWAYS:-1}" >"$STATE/gateways"
  log "$n cluster(s) up in $((SECONDS - t0)) s; kubeconfigs: $(for i in $(seq 1 "$n"); do printf '%s ' "$STATE/cluster-$(letter "$i")/admin.kubeconfig"; done)"
  log "use: $0 kubectl a get nodes"
}

case "${1:-}" in
  up)
    [ -n "${2:-}" ] && [ "$2" -ge 1 ] && [ "$2" -le 9 ] 2>/dev/null || die "usage: $0 up N [--strait] [--gateways 1|2] (1 <= N <= 9)"
    n=$2
    shift 2
    while [ $# -gt 0 ]; do
      case "$1" in
        --strait) WITH_STRAIT=1 ;;
        --gateways) case "${2:-}" in 1|2) GATEWAYS=$2; shift ;; *) die "--gateways takes 1 or 2 (cluster a's gateway nodes), got '${2:-}'" ;; esac ;;
        *) die "unknown option '$1' (usage: $0 up N [--strait] [--gateways 1|2])" ;;
      esac
      shift
    done
    up "$n"
    ;;
  down)
    [ "$(id -u)" = 0 ] || die "needs root"
    down
    ;;
  status)
    [ -f "$STATE/count" ] || { echo "no clusters up"; exit 1; }
    K8S=$("$here/build-apiserver.sh" --print); KUBECTL=$K8S/kubectl
    for i in $(seq 1 "$(cat "$STATE/count")"); do
      echo "cluster-$(letter "$i") ($STATE/cluster-$(letter "$i")/admin.kubeconfig)"
      kc "$(letter "$i")" get nodes -o wide
    done
    ;;
  kubectl)
    K8S=$("$here/build-apiserver.sh" --print); KUBECTL=$K8S/kubectl
    L=${2:?usage: $0 kubectl L ARGS}
    shift 2
    kc "$L" "$@"
    ;;
  exec)
    shift
    exec nsenter --net=/run/netns/sk-wan "$@"
    ;;
  apiserver)
    [ "$(id -u)" = 0 ] || die "needs root"
    K8S=$("$here/build-apiserver.sh" --print); KUBECTL=$K8S/kubectl
    apiserver "${2:?usage: $0 apiserver L stop|start|restart}" "${3:-}"
    ;;
  kubeconfig)
    echo "$STATE/cluster-${2:?usage: $0 kubeconfig L}/admin.kubeconfig"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
