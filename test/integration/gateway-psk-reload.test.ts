// A re-join writes a new tunnel PSK file while the gateways run (`strait join` during `strait up`,
// a Kubernetes Secret update): each gateway daemon picks the file up by itself and handshakes
// again under the new PSK, without a restart. Two real gateway daemons from their entry point,
// in a private namespace tree.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { probes, runInPrivateTree, treeSkip } from '../helpers/private-tree.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const entry = join(root, 'dist', 'daemon/gateway/main.js');

const gw = (id: string, peer: string, addr: string, peerAddr: string, sub: string, peerSub: string, metrics: number): string =>
  JSON.stringify({
    clusterId: id,
    name: `gw-${id}`,
    pskFile: `/run/psk-${id}/tunnel.psk`,
    localSubnets: [sub],
    tunnel: { listen: addr, port: 4500, publicIP: addr },
    vxlan: { listen: addr, port: 4800, vni: 100, agentPort: 4801 },
    tun: { name: `strait-${id.slice(-1)}`, mtu: 1400 },
    peers: [{ clusterId: peer, endpoint: peerAddr, port: 4500, subnets: [peerSub] }],
    metrics: { listen: addr, port: metrics },
  });

test('a rewritten PSK file is picked up by the running gateways: old PSK refused, new PSK connects', { skip: treeSkip }, async () => {
  const r = await runInPrivateTree(
    `
mkdir -p /run/psk-cluster-a /run/psk-cluster-b
echo old-psk-0123456789abcdef > /run/psk-cluster-a/tunnel.psk
echo old-psk-0123456789abcdef > /run/psk-cluster-b/tunnel.psk
cat > /run/a.json <<'JSON'
${gw('cluster-a', 'cluster-b', '127.0.0.1', '127.0.0.2', '10.1.0.0/16', '10.2.0.0/16', 9464)}
JSON
cat > /run/b.json <<'JSON'
${gw('cluster-b', 'cluster-a', '127.0.0.2', '127.0.0.1', '10.2.0.0/16', '10.1.0.0/16', 9474)}
JSON
node ${JSON.stringify(entry)} --config /run/a.json > /run/a.out 2> /run/a.err & A=$!
node ${JSON.stringify(entry)} --config /run/b.json > /run/b.out 2> /run/b.err & B=$!
state() { curl -sf http://127.0.0.1:9464/metrics | grep -E '^strait_tunnel_(handshakes_total|drops_total\\{reason="auth")' | tr '\\n' ' '; }
up() { curl -sf http://127.0.0.1:9464/records | grep -q '"connected"'; }
for _ in $(seq 100); do up && break; sleep 0.1; done
FIRST=$(up && echo connected || echo not-connected)
S1=$(state)
# a new join: A's file first (atomically, as the multicluster daemon writes it), then B's
printf 'new-psk-fedcba9876543210\\n' > /run/psk-cluster-a/tunnel.psk.tmp && mv /run/psk-cluster-a/tunnel.psk.tmp /run/psk-cluster-a/tunnel.psk
for _ in $(seq 50); do grep -q 'tunnel PSK changed' /run/a.err && break; sleep 0.1; done
sleep 0.5
BAUTH=$(curl -sf http://127.0.0.2:9474/metrics | grep -E '^strait_tunnel_drops_total\\{reason="auth"' | awk '{print $2}')
printf 'new-psk-fedcba9876543210\\n' > /run/psk-cluster-b/tunnel.psk.tmp && mv /run/psk-cluster-b/tunnel.psk.tmp /run/psk-cluster-b/tunnel.psk
for _ in $(seq 50); do grep -q 'tunnel PSK changed' /run/b.err && break; sleep 0.1; done
sleep 1
S2=$(state)
UP2=$(up && echo connected || echo not-connected)
kill $A $B; wait
node -e 'const fs=require("fs");console.log(JSON.stringify({probe:"psk",first:process.argv[1],s1:process.argv[2],bauth:process.argv[3],s2:process.argv[4],up2:process.argv[5],aerr:fs.readFileSync("/run/a.err","utf8").slice(-3000),berr:fs.readFileSync("/run/b.err","utf8").slice(-3000)}))' "$FIRST" "$S1" "$BAUTH" "$S2" "$UP2"
`,
    { timeoutMs: 60_000 },
  );
  const p = probes(r.stdout).get('psk');
  const dbg = `\nstdout:\n${r.stdout.slice(0, 3000)}\nstderr:\n${r.stderr.slice(0, 3000)}`;
  assert.ok(p, dbg);
  const dbg2 = `${dbg}\n${JSON.stringify(p, null, 1)}`;
  assert.equal(p['first'], 'connected', `the two gateways connect under the first PSK${dbg2}`);
  assert.match(String(p['aerr']), /tunnel PSK changed/, `gateway A re-read its PSK file${dbg2}`);
  assert.match(String(p['berr']), /tunnel PSK changed/, `gateway B re-read its PSK file${dbg2}`);
  assert.ok(Number(p['bauth']) >= 1, `while only A had the new PSK, B refused its handshake as auth${dbg2}`);
  // A's side of a handshake: completed (A initiated) or responded (B initiated)
  const completed = (s: string): number =>
    ['completed', 'responded'].reduce((n, ev) => n + Number(new RegExp(`strait_tunnel_handshakes_total\\{event="${ev}"\\} (\\d+)`).exec(s)?.[1] ?? NaN), 0);
  assert.ok(completed(String(p['s2'])) > completed(String(p['s1'])), `a handshake under the new PSK completed${dbg2}`);
  assert.equal(p['up2'], 'connected', `connected again under the new PSK${dbg2}`);
});
