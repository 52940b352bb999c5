// Services across clusters (return-path/): a remote client's connection to a ClusterIP is
// DNATed by kube-proxy on the gateway node and reaches a pod on a worker. Real clusters showed
// (1) kube-proxy masquerading it (the pod saw the gateway node's address) and (2), once not
// masqueraded, the pod's reply routed into the agent's TUN device, past the gateway node's
// conntrack, so the connection never completed. Here, in a private namespace tree: node `gw`
// with kube-proxy's nftables shape (mark 0x4000 for sources outside the cluster CIDR, DNAT,
// masquerade on the mark), node `wk` whose remote subnets go into a device named like the
// agent's TUN (a dummy: what enters it is lost), a pod on `wk`; the client is the remote
// cluster's pod address on `gw`. Both halves are programmed by strait's own code.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { agentReturnPathRules, gatewayReturnPathRules, nextHop } from '../../src/multicluster/dataplane/return-path/index.js';
import { parseGatewayConfig } from '../../src/multicluster/dataplane/gateway/index.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import { runInPrivateTree, treeSkip } from '../helpers/private-tree.js';

const mod = join(process.cwd(), 'dist', 'src', 'multicluster', 'dataplane', 'return-path', 'index.js');
const REMOTE = ['10.10.0.0/16', '10.11.0.0/16'];

test('return path: the rules name the remote subnets, the TUN device and one mark bit', () => {
  const g = gatewayReturnPathRules('strait-gateway', REMOTE);
  assert.match(g, /priority 90;/);
  assert.match(g, /ip saddr \{ 10\.10\.0\.0\/16, 10\.11\.0\.0\/16 \} meta mark & 0x00004000 != 0 meta mark set meta mark & 0xffffbfff/);
  const a = agentReturnPathRules('strait-agent', 'strait0', REMOTE, 0x2000);
  assert.match(a, /ct state new iifname != "strait0" ip saddr \{ 10\.10\.0\.0\/16, 10\.11\.0\.0\/16 \} ct mark set ct mark \| 0x00002000/);
  assert.match(a, /ct direction reply ct mark & 0x00002000 != 0 meta mark set meta mark \| 0x00002000/);
  assert.deepEqual(nextHop('172.30.2.2 via 172.31.2.1 dev eth0 src 172.31.2.2 uid 0\n    cache', '172.30.2.2'), ['via', '172.31.2.1', 'dev', 'eth0']);
  // on the same link: via the gateway node itself
  assert.deepEqual(nextHop('172.31.2.1 dev eth0 src 172.31.2.2 uid 0', '172.31.2.1'), ['via', '172.31.2.1', 'dev', 'eth0']);
  assert.deepEqual(nextHop('garbage', '172.31.2.1'), []);
});

test("return path: off by default; deploy/ turns it on; a mark that is kube-proxy's is refused", () => {
  const agent = { remoteSubnets: REMOTE, gateway: { address: '172.31.2.1' } };
  assert.deepEqual(parseNodeAgentConfig(agent).kubeProxyReturnPath, { enabled: false, mark: 0x2000, table: 148 });
  assert.throws(() => parseNodeAgentConfig({ ...agent, kubeProxyReturnPath: { enabled: true, mark: 0x4000 } }), { code: 'STRAIT_ERR_CONFIG_INVALID' });
  assert.throws(() => parseNodeAgentConfig({ ...agent, kubeProxyReturnPath: { enabled: true, mark: 3 } }), { code: 'STRAIT_ERR_CONFIG_INVALID' });
  const gw = { clusterId: 'cluster-b', psk: 'x'.repeat(48), localSubnets: ['10.20.0.0/16'], peers: [] };
  assert.equal(parseGatewayConfig(gw).kubeProxyReturnPath, false);
});

const SCRIPT = (mode: 'none' | 'gateway' | 'both'): string => `
ip netns add gw; ip netns add wk; ip netns add pod
ip link add eth0 netns wk type veth peer name node0 netns gw
ip -n gw addr add 172.31.2.1/24 dev node0; ip -n gw link set node0 up; ip -n gw link set lo up
ip -n wk addr add 172.31.2.2/24 dev eth0; ip -n wk link set eth0 up; ip -n wk link set lo up
ip link add eth0 netns pod type veth peer name cni0 netns wk
ip -n wk addr add 10.20.1.1/24 dev cni0; ip -n wk link set cni0 up
ip -n pod addr add 10.20.1.2/24 dev eth0; ip -n pod link set eth0 up; ip -n pod link set lo up
ip -n pod route add default via 10.20.1.1
ip netns exec wk sysctl -qw net.ipv4.ip_forward=1; ip netns exec gw sysctl -qw net.ipv4.ip_forward=1
# the remote cluster's client pod address, on the gateway node (where the tunnel delivers it);
# the gateway node does not answer ARP for it on the node link (a remote pod is no neighbour)
ip -n gw addr add 10.10.1.4/32 dev lo
ip netns exec gw sysctl -qw net.ipv4.conf.all.arp_ignore=1
ip -n gw route add 10.20.1.0/24 via 172.31.2.2; ip -n gw route add default via 172.31.2.2
# the agent's TUN device, no one reading it: the remote subnets go in and are lost
ip -n wk tuntap add dev strait0 mode tun; ip -n wk link set strait0 up
ip -n wk route add 10.10.0.0/16 dev strait0; ip -n wk route add 10.11.0.0/16 dev strait0
# kube-proxy (nftables mode) on the gateway node: ClusterIP 10.21.0.5:80 -> the pod
ip netns exec gw nft -f - <<'EOF'
table ip kube-proxy {
  chain mark-for-masquerade {
    meta mark set meta mark | 0x00004000
  }
  chain svc {
    ip daddr 10.21.0.5 tcp dport 80 ip saddr != 10.20.0.0/16 jump mark-for-masquerade
    ip daddr 10.21.0.5 tcp dport 80 dnat to 10.20.1.2:8080
  }
  chain nat-output {
    type nat hook output priority -100; policy accept;
    jump svc
  }
  chain nat-prerouting {
    type nat hook prerouting priority -100; policy accept;
    jump svc
  }
  chain masquerading {
    meta mark & 0x00004000 == 0x00000000 return
    meta mark set meta mark ^ 0x00004000
    masquerade fully-random
  }
  chain nat-postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    jump masquerading
  }
}
EOF
${
  mode !== 'none'
    ? `
ip netns exec gw node --input-type=module -e "const m = await import('${mod}'); m.programGatewayReturnPath(['10.10.0.0/16', '10.11.0.0/16']);"
`
    : ''
}${
  mode === 'both'
    ? `
ip netns exec wk node --input-type=module -e "const m = await import('${mod}'); new m.AgentReturnPath({ tunName: 'strait0', remoteSubnets: ['10.10.0.0/16', '10.11.0.0/16'], mark: 0x2000, table: 148 }).start('172.31.2.1');"
`
    : ''
}
# the Service's pod answers the address it sees
ip netns exec pod node -e "require('net').createServer((s) => s.end(s.remoteAddress + '\\n')).listen(8080, '10.20.1.2')" &
sleep 1
ip netns exec gw node -e "
const s = require('net').connect({ host: '10.21.0.5', port: 80, localAddress: '10.10.1.4' });
let out = ''; s.on('data', (d) => { out += d; }); s.on('end', () => { console.log('SEEN ' + out.trim()); process.exit(0); });
s.on('error', (e) => { console.log('ERROR ' + e.message); process.exit(0); });
setTimeout(() => { console.log('TIMEOUT'); process.exit(0); }, 3000);
"
${
  mode === 'both'
    ? `
# (read first: under pipefail, grep -q closing the pipe early can fail \`ip rule show\` with SIGPIPE)
rules="$(ip -n wk rule show)"; grep -q 'fwmark 0x2000/0x2000 lookup 148' <<<"$rules" && echo RULE
ip -n wk route show table 148
# stopping removes everything
ip netns exec wk node --input-type=module -e "const m = await import('${mod}'); new m.AgentReturnPath({ tunName: 'strait0', remoteSubnets: ['10.10.0.0/16'], mark: 0x2000, table: 148 }).close();"
ip netns exec wk nft list tables | grep -c strait-agent || true
ip -n wk rule show | grep -c 'lookup 148' || true
`
    : ''
}
`;

test("return path: without it the pod sees the gateway node (masqueraded); the gateway half alone loses the reply; both: the client's own address", {
  skip: treeSkip,
}, async () => {
  const none = await runInPrivateTree(SCRIPT('none'));
  assert.equal(none.code, 0, none.stderr);
  // kube-proxy's masquerade: the pod sees the gateway node's address (what real clusters showed)
  assert.match(none.stdout, /SEEN 172\.31\.2\.1/, none.stdout + none.stderr);
  // not masqueraded, the reply goes into the agent's TUN device, past the DNAT's conntrack
  const gateway = await runInPrivateTree(SCRIPT('gateway'));
  assert.equal(gateway.code, 0, gateway.stderr);
  assert.match(gateway.stdout, /TIMEOUT/, gateway.stdout + gateway.stderr);
  const both = await runInPrivateTree(SCRIPT('both'));
  assert.equal(both.code, 0, both.stderr);
  assert.match(both.stdout, /SEEN 10\.10\.1\.4/, both.stdout + both.stderr);
  assert.match(both.stdout, /RULE/);
  assert.match(both.stdout, /10\.10\.0\.0\/16 via 172\.31\.2\.1 dev eth0/);
  assert.match(both.stdout, /\n0\n0\n?$/, `close() removed the table and the rule: ${both.stdout}`);
});

// a worker node `wk` whose link leads to the gateway node's network (172.31.3.0/24 via 172.31.2.1)
const WORKER_NODE = `ip netns add wk; ip netns add gw
ip -n wk link set lo up
ip link add eth0 netns wk type veth peer name node0 netns gw
ip -n wk addr add 172.31.2.2/24 dev eth0; ip -n wk link set eth0 up; ip -n gw link set node0 up
ip -n wk route add 172.31.3.0/24 via 172.31.2.1 dev eth0 onlink
`;

// A rolling update: the agent that replaces another on the node programs the return path over
// the one it finds (its predecessor leaves it for a waiting successor). A moment without the
// rule sends a reply into the TUN device un-DNATed, and the client resets the connection (real
// clusters: a long-lived stream died at each agent roll). Watched by a loop that reads the
// rules while 15 successors start one after another.
const SUCCESSORS = `
${WORKER_NODE}ip -n wk tuntap add dev strait0 mode tun; ip -n wk link set strait0 up
seen=/run/rules-seen; : > "$seen"
( while [ ! -e /run/done ]; do r="$(ip -n wk rule show)"; grep -c 'fwmark 0x2000/0x2000 lookup 148' <<<"$r" >> "$seen" || true; done ) &
watcher=$!
ip netns exec wk node --input-type=module -e "
const m = await import('${mod}');
const o = { tunName: 'strait0', remoteSubnets: ['10.10.0.0/16', '10.11.0.0/16'], mark: 0x2000, table: 148 };
new m.AgentReturnPath(o).start('172.31.3.7');
for (let i = 0; i < 15; i++) new m.AgentReturnPath(o).start('172.31.3.7');
"
touch /run/done; wait $watcher
echo "SEEN $(tr -d '\n' < "$seen")"
ip -n wk route show table 148
`;

test('return path: a successor programs it over the one it replaces, with no moment without the rule and no second rule', { skip: treeSkip }, async () => {
  const r = await runInPrivateTree(SUCCESSORS);
  assert.equal(r.code, 0, r.stderr);
  // each read: how many of the rule there were; none only before the first agent's start
  const seen = /SEEN (\d*)/.exec(r.stdout)?.[1] ?? '';
  assert.ok(seen.replace(/^0+/, '').length >= 10, `the watcher read the rules while the successors started: ${seen}`);
  assert.match(seen, /^0*1+$/, `after the first start, every read found exactly one rule (0: missing, 2: doubled): ${seen}`);
  assert.match(r.stdout, /10\.10\.0\.0\/16 via 172\.31\.2\.1 dev eth0/);
});

// An agent with the return path off removes one its predecessor left (its nft table says so), and
// nothing when there is none: a passive HA gateway on the node may hold the same rule and table.
const LEFTOVER = `
${WORKER_NODE}ip netns exec wk node --input-type=module -e "
const m = await import('${mod}');
const o = { tunName: 'strait0', remoteSubnets: ['10.10.0.0/16'], mark: 0x2000, table: 148 };
new m.AgentReturnPath(o).start('172.31.3.7');
new m.AgentReturnPath(o).removeLeftover();
"
echo "AFTER-LEFTOVER rules $(ip -n wk rule show | grep -c 'lookup 148' || true) tables $(ip netns exec wk nft list tables | grep -c strait-agent || true)"
# a rule and route of table 148 that are not an agent's (no strait-agent table): kept
ip -n wk rule add fwmark 0x2000/0x2000 lookup 148 priority 148
ip -n wk route add 10.10.0.0/16 via 172.31.2.1 dev eth0 table 148
ip netns exec wk node --input-type=module -e "
const m = await import('${mod}');
new m.AgentReturnPath({ tunName: 'strait0', remoteSubnets: ['10.10.0.0/16'], mark: 0x2000, table: 148 }).removeLeftover();
"
echo "NOT-OURS rules $(ip -n wk rule show | grep -c 'lookup 148' || true) routes $(ip -n wk route show table 148 | grep -c . || true)"
`;

test("return path: an agent with it off removes one its predecessor left, and nothing that is not an agent's", { skip: treeSkip }, async () => {
  const r = await runInPrivateTree(LEFTOVER);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /AFTER-LEFTOVER rules 0 tables 0/, r.stdout);
  assert.match(r.stdout, /NOT-OURS rules 1 routes 1/, r.stdout);
});
