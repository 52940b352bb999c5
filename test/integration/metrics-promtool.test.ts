// `promtool check metrics` (Prometheus' own linter) on the /metrics of every daemon
// that exists, each started from its real entry point with a minimal configuration
// inside a private namespace tree (TUN devices never touch the host).
// `promtool check metrics` passes on every daemon's /metrics (docs/kubernetes.md, tests).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { probes, runInPrivateTree, treeSkip } from '../helpers/private-tree.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const dist = join(root, 'dist');

const daemons: { name: string; entry: string; port: number; config: string; expect: RegExp }[] = [
  {
    name: 'gateway',
    entry: 'daemon/gateway/main.js',
    port: 9464,
    expect: /^strait_tunnel_/m,
    config: JSON.stringify({
      clusterId: 'cluster-a',
      name: 'gw-a',
      psk: 'promtool-check-psk-0123456789abcdef',
      localSubnets: ['10.1.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: 4500, publicIP: '127.0.0.1' },
      vxlan: { listen: '127.0.0.1', port: 4800, vni: 100, agentPort: 4801 },
      tun: { name: 'strait-gw', mtu: 1400 },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.2', port: 4500, subnets: ['10.2.0.0/16'] }],
      metrics: { listen: '127.0.0.1', port: 9464 },
    }),
  },
  {
    name: 'node agent',
    entry: 'agents/node-agent/main.js',
    port: 9465,
    expect: /^strait_agent_/m,
    config: JSON.stringify({
      nodeName: 'worker-1',
      remoteSubnets: ['10.2.0.0/16'],
      gateway: { address: '127.0.0.1', port: 4800 },
      vxlan: { listen: '127.0.0.1', port: 4801, vni: 100 },
      tun: { name: 'strait0', mtu: 1400 },
      metrics: { listen: '127.0.0.1', port: 9465 },
    }),
  },
];

for (const d of daemons) {
  test(`promtool check metrics is clean for the ${d.name}'s /metrics`, { skip: treeSkip }, async () => {
    const r = await runInPrivateTree(
      `
cat > /run/config.json <<'JSON'
${d.config}
JSON
node ${JSON.stringify(join(dist, d.entry))} --config /run/config.json > /run/daemon.out 2> /run/daemon.err &
for _ in $(seq 100); do curl -sf http://127.0.0.1:${d.port}/metrics > /run/metrics.txt && break; sleep 0.1; done
OUT=$(promtool check metrics < /run/metrics.txt 2>&1 || echo "promtool exit $?")
node -e 'const fs=require("fs");console.log(JSON.stringify({probe:"promtool",out:process.argv[1],metrics:fs.readFileSync("/run/metrics.txt","utf8"),err:fs.readFileSync("/run/daemon.err","utf8").slice(0,2000)}))' "$OUT"
`,
      { timeoutMs: 30_000 },
    );
    const p = probes(r.stdout).get('promtool');
    const dbg = `\nstdout:\n${r.stdout.slice(0, 3000)}\nstderr:\n${r.stderr.slice(0, 3000)}`;
    assert.ok(p, dbg);
    assert.match(String(p['metrics']), d.expect, `the ${d.name} serves its metrics${dbg}`);
    assert.equal(p['out'], '', `promtool check metrics${dbg}`);
  });
}
