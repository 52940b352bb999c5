// Kubernetes mode of the gateway's node table: the Node objects (InternalIP, spec.podCIDRs)
// decide which node agents may send VXLAN and for which pod addresses; a Node that goes
// away is no sender any more. The store is the conformance-tested memory store.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { runGatewayDaemon } from '../../src/multicluster/control/gateway/index.js';
import { clusterNodeOf, watchClusterNodes, type ClusterNode } from '../../src/multicluster/control/cluster-nodes/index.js';
import { Kinds } from '../../src/platform/resources/index.js';
import { kindRef, type KubeObject } from '../../src/platform/store/index.js';
import { vxlan, AGENT_MAC, GATEWAY_MAC } from '../../src/multicluster/wire/vxlan/index.js';
import { ipv4, udp } from '../../src/multicluster/wire/ipv4/index.js';
import { MemoryStore } from '../helpers/memory-store.js';
import { waitFor } from '../helpers/wait.js';

const node = (name: string, address: string | undefined, podCIDRs: unknown, single?: unknown): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { ...(podCIDRs !== undefined ? { podCIDRs } : {}), ...(single !== undefined ? { podCIDR: single } : {}) },
    status: {
      addresses: [
        { type: 'Hostname', address: name },
        ...(address
          ? [
              { type: 'ExternalIP', address: '203.0.113.9' },
              { type: 'InternalIP', address },
            ]
          : []),
      ],
    },
  }) as unknown as KubeObject;

/** A Node as a kubelet makes it: the object, then its status (the store keeps status apart). */
async function addNode(store: MemoryStore, obj: KubeObject): Promise<void> {
  const made = await store.apply(obj);
  await store.updateStatus({ ...made, status: (obj as unknown as { status: unknown }).status } as KubeObject);
}

test('clusterNodeOf: InternalIP and IPv4 pod CIDRs, or nothing', () => {
  const cases: [string, KubeObject, ClusterNode | undefined][] = [
    ['podCIDRs', node('w1', '192.0.2.11', ['10.1.1.0/24', 'fd00::/64']), { name: 'w1', address: '192.0.2.11', podCIDRs: ['10.1.1.0/24'] }],
    ['podCIDR only', node('w2', '192.0.2.12', undefined, '10.1.2.0/24'), { name: 'w2', address: '192.0.2.12', podCIDRs: ['10.1.2.0/24'] }],
    ['no pod CIDR yet', node('w3', '192.0.2.13', undefined), undefined],
    ['IPv6 pod CIDR only', node('w4', '192.0.2.14', ['fd00::/64']), undefined],
    ['no InternalIP', node('w5', undefined, ['10.1.5.0/24']), undefined],
    [
      'garbage',
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'w6' }, spec: { podCIDRs: 'x' }, status: { addresses: 'y' } } as unknown as KubeObject,
      undefined,
    ],
  ];
  for (const [name, obj, want] of cases) assert.deepEqual(clusterNodeOf(obj), want, name);
});

test("watchClusterNodes follows adds, changes and deletes, without the gateway's own node", async () => {
  const store = new MemoryStore();
  await addNode(store, node('gw', '192.0.2.1', ['10.1.0.0/24']));
  await addNode(store, node('w1', '192.0.2.11', ['10.1.1.0/24']));
  let seen: ClusterNode[] = [];
  const w = watchClusterNodes(store, {
    self: 'gw',
    onNodes: (n) => {
      seen = n;
    },
  });
  try {
    await waitFor(() => seen.length === 1, 5000, 'the first list');
    assert.deepEqual(
      seen.map((n) => n.name),
      ['w1'],
    );
    await addNode(store, node('w2', '192.0.2.12', ['10.1.2.0/24']));
    await waitFor(() => seen.length === 2, 5000, 'w2 added');
    await store.delete(kindRef(Kinds.Node), 'w1');
    await waitFor(() => seen.length === 1 && seen[0]!.name === 'w2', 5000, 'w1 deleted');
  } finally {
    w.stop();
  }
});

test("gateway daemon with nodesFrom kubernetes: VXLAN from a Node's InternalIP for its pods only, until the Node is gone", async () => {
  const store = new MemoryStore();
  await addNode(store, node('w1', '127.0.0.11', ['10.1.1.0/24']));
  const d = await runGatewayDaemon(
    {
      clusterId: 'cluster-a',
      name: 'gw',
      psk: 'a-psk-of-sixteen-chars',
      localSubnets: ['10.1.0.0/16'],
      nodesFrom: 'kubernetes',
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      metrics: { port: 0 },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: 9, subnets: ['10.2.0.0/16'] }],
    },
    { noTun: true, nodeStore: store, log: () => undefined },
  );
  const agent = createSocket('udp4');
  await new Promise<void>((r) => agent.bind(0, '127.0.0.11', () => r()));
  const drops = d.gateway.tunnel.counters.drops;
  const send = (src: number) => {
    const u = udp.encode({ srcPort: 1, dstPort: 2, payload: Buffer.from('x') }, undefined, 0, { src, dst: 0x0a020005 });
    agent.send(
      vxlan.encode({
        vni: 100,
        dst: GATEWAY_MAC,
        src: AGENT_MAC,
        etherType: 0x0800,
        payload: ipv4.encode({ tos: 0, id: 1, flags: 2, fragmentOffset: 0, ttl: 64, protocol: 17, src, dst: 0x0a020005, payload: u }),
      }),
      d.gateway.vxlanPort,
      '127.0.0.1',
    );
  };
  try {
    await waitFor(() => d.gateway.nodeCount === 1, 5000, 'the Node in the table');
    send(0x0a010107);
    await waitFor(() => d.gateway.vxlan.rxPackets === 1, 5000, "its own pod's packet taken");
    send(0x0a010207);
    await waitFor(() => drops.spoofed_source === 1, 5000, "another node's pod refused");
    await store.delete(kindRef(Kinds.Node), 'w1');
    await waitFor(() => d.gateway.nodeCount === 0, 5000, 'the Node gone from the table');
    send(0x0a010107);
    await waitFor(() => drops.unknown_sender === 1, 5000, 'a former node refused');
    assert.equal(drops.spoofed_source, 1);
  } finally {
    agent.close();
    await d.stop();
  }
});
