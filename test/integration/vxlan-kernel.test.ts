// VXLAN wire compatibility (docs/gateway-and-agent.md): strait's node agent exchanges frames with a Linux
// kernel `vxlan` interface in a private namespace tree: HTTP (TCP both ways).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KERNEL_VXLAN_GATEWAY, probes, runInPrivateTree, treeSkip } from '../helpers/private-tree.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

test('node agent <-> kernel vxlan: HTTP through RFC 7348 frames on UDP 4800', { skip: treeSkip }, async () => {
  const script = `
ROOT=${JSON.stringify(root)}
${KERNEL_VXLAN_GATEWAY}cat > /run/agent.json <<CFG
{"nodeName":"worker-1","remoteSubnets":["10.99.0.0/24"],"gateway":{"address":"192.168.77.1"},"vxlan":{"vni":100},"tun":{"name":"strait0"},"metrics":{"port":9465}}
CFG
ip netns exec s node "$ROOT/dist/agents/node-agent/main.js" --config /run/agent.json > /run/agent.log 2>&1 &
for i in $(seq 50); do grep -q started /run/agent.log && break; sleep 0.1; done
cat /run/agent.log
ip -n s addr add 10.99.0.2/32 dev strait0
ip netns exec k node "$ROOT/test/fixtures/echo-server.mjs" 10.99.0.1 8080 > /run/echo.log &
for i in $(seq 50); do grep -q listening /run/echo.log && break; sleep 0.1; done
BODY=$(ip netns exec s curl -s -m 5 http://10.99.0.1:8080/)
echo "{\\"probe\\":\\"http\\",\\"body\\":$BODY}"
# offload on by default (docs/gateway-and-agent.md): a 1 MB upload leaves the agent's TUN as TCP super-packets,
# which the agent cuts into plain segments for the kernel vxlan gateway (it never answers the hello)
head -c 1048576 /dev/zero | tr '\\0' 'y' > /run/body
BIG=$(ip netns exec s curl -s -m 10 --data-binary @/run/body http://10.99.0.1:8080/)
echo "{\\"probe\\":\\"upload\\",\\"body\\":$BIG}"
ip netns exec s curl -s -m 5 http://127.0.0.1:9465/metrics | grep '^strait_agent_vxlan_packets_total' | sed 's/.*direction="\\([a-z]*\\)"} \\([0-9]*\\)/{"probe":"metric-\\1","value":\\2}/'
`;
  const r = await runInPrivateTree(script, { timeoutMs: 30_000 });
  const p = probes(r.stdout);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const http = p.get('http')?.['body'] as { remoteAddress: string } | undefined;
  assert.equal(http?.remoteAddress, '10.99.0.2');
  assert.equal((p.get('upload')?.['body'] as { bodyBytes: number } | undefined)?.bodyBytes, 1048576, r.stdout + r.stderr);
  assert.ok(Number(p.get('metric-tx')?.['value']) >= 3, r.stdout);
  assert.ok(Number(p.get('metric-rx')?.['value']) >= 3, r.stdout);
});
