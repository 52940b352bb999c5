import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { isStraitError, type ErrorCode } from '../../src/base/errors/index.js';
import { UdpTransport } from '../../src/multicluster/dataplane/udp/index.js';
import { waitFor } from '../helpers/wait.js';
import { COLUMNS, connectionRow } from '../../src/multicluster/cli/index.js';
import {
  advertisedAddress,
  formatRtt,
  inPodCidrs,
  NodeTable,
  parseGatewayConfig,
  startGateway,
  type Gateway,
} from '../../src/multicluster/dataplane/gateway/index.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import {
  vxlan,
  writeHeaders,
  writeExtHeader,
  AGENT_MAC,
  GATEWAY_MAC,
  VXLAN_OVERHEAD,
  EXT_HEADER,
  EXT_FRAGMENT,
  ETHERTYPE_STRAIT,
} from '../../src/multicluster/wire/vxlan/index.js';
import { ipv4, udp } from '../../src/multicluster/wire/ipv4/index.js';
import { NEXT_IPV4, NEXT_IPV4_VNET } from '../../src/multicluster/wire/tunnel/index.js';
import { superPacket } from '../helpers/super-packet.js';

const CONNECTION_COLUMNS = COLUMNS.connections;

const base = {
  clusterId: 'cluster-a',
  psk: 'a-psk-of-sixteen-chars',
  localSubnets: ['10.1.0.0/16'],
  peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', subnets: ['10.2.0.0/16'] }],
};

test('gateway config: defaults, unknown keys, renamed keys, bad CIDRs, PSK source', () => {
  const c = parseGatewayConfig(base);
  assert.equal(c.tunnel.port, 4500);
  assert.equal(c.vxlan.port, 4800);
  assert.equal(c.peers[0]!.port, 4500);
  assert.ok(Object.isFrozen(c));
  const cases: [string, unknown, ErrorCode][] = [
    ['unknown key', { ...base, tunel: {} }, 'STRAIT_ERR_CONFIG_UNKNOWN_KEY'],
    ['renamed key', { ...base, remotes: [] }, 'STRAIT_ERR_CONFIG_RENAMED_KEY'],
    ['bad CIDR', { ...base, localSubnets: ['10.1.0.1/16'] }, 'STRAIT_ERR_CONFIG_INVALID'],
    ['no PSK', { ...base, psk: undefined }, 'STRAIT_ERR_CONFIG_INVALID'],
    ['short PSK', { ...base, psk: 'short' }, 'STRAIT_ERR_CONFIG_INVALID'],
    ['VNI too large', { ...base, vxlan: { vni: 1 << 24 } }, 'STRAIT_ERR_CONFIG_INVALID'],
  ];
  for (const [name, input, code] of cases)
    assert.throws(
      () => parseGatewayConfig(input),
      (e) => isStraitError(e, code),
      name,
    );
  assert.throws(
    () => parseNodeAgentConfig({ remoteSubnets: ['x'], gateway: { address: '10.0.0.1' } }),
    (e) => isStraitError(e, 'STRAIT_ERR_CONFIG_INVALID'),
  );
  assert.equal(parseNodeAgentConfig({ remoteSubnets: ['10.2.0.0/16'], gateway: { address: '10.0.0.1' } }).vxlan.vni, 100);
});

test('formatRtt prints like Go durations', () => {
  assert.equal(formatRtt(1.5), '1.5ms');
  assert.equal(formatRtt(0.25), '250µs');
  assert.equal(formatRtt(12), '12ms');
});

function udpPacket(src: number, dst: number, text: string): Buffer {
  const u = udp.encode({ srcPort: 1000, dstPort: 2000, payload: Buffer.from(text) }, undefined, 0, { src, dst });
  return ipv4.encode({ tos: 0, id: 1, flags: 2, fragmentOffset: 0, ttl: 64, protocol: 17, src, dst, payload: u });
}

/** gateway A (cluster-a, VXLAN from agents) and gateway B (cluster-b, delivers into `got`) tunnelled over loopback */
async function gatewayPair(): Promise<{ ga: Gateway; gb: Gateway; got: Buffer[] }> {
  const got: Buffer[] = [];
  const gb: Gateway = await startGateway(
    {
      ...base,
      clusterId: 'cluster-b',
      name: 'gw-b',
      localSubnets: ['10.2.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      peers: [{ clusterId: 'cluster-a', endpoint: '127.0.0.1', port: 9, subnets: ['10.1.0.0/16'] }],
    },
    { noTun: true, onDeliver: (p) => got.push(Buffer.from(p)) },
  );
  const ga: Gateway = await startGateway(
    {
      ...base,
      name: 'gw-a',
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: gb.tunnelPort, subnets: ['10.2.0.0/16'] }],
      // the node agents: 127.0.0.1 (pods 10.1.0.0/24) and 127.0.0.2 (pods 10.1.1.0/24)
      nodes: [
        { address: '127.0.0.1', podCIDRs: ['10.1.0.0/24'] },
        { address: '127.0.0.2', podCIDRs: ['10.1.1.0/24'] },
      ],
    },
    { noTun: true },
  );
  gb.setPeerEndpoint('cluster-a', '127.0.0.1', ga.tunnelPort);
  return { ga, gb, got };
}

test('two gateways on loopback: VXLAN in, tunnel across, records and anti-spoofing', async () => {
  const { ga, gb, got } = await gatewayPair();
  const agent = createSocket('udp4');
  try {
    for (let i = 0; i < 50 && ga.connectionRecords()[0]?.status !== 'connected'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(ga.connectionRecords()[0]?.status, 'connected');
    const frame = (src: number, text: string) =>
      vxlan.encode({ vni: 100, dst: GATEWAY_MAC, src: AGENT_MAC, etherType: 0x0800, payload: udpPacket(src, 0x0a020005, text) });
    agent.send(frame(0x0a010007, 'through-the-tunnel'), ga.vxlanPort, '127.0.0.1');
    agent.send(Buffer.from('garbage'), ga.vxlanPort, '127.0.0.1');
    agent.send(
      vxlan.encode({ vni: 100, dst: GATEWAY_MAC, src: AGENT_MAC, etherType: 0x0800, payload: udpPacket(0x0a010007, 0x0a090001, 'nowhere') }),
      ga.vxlanPort,
      '127.0.0.1',
    );
    for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(got.length, 1);
    assert.match(got[0]!.toString('latin1'), /through-the-tunnel/);
    assert.equal(ipv4.decode(got[0]!, 0).src, 0x0a010007, 'source address preserved');
    assert.equal(ga.tunnel.counters.drops.malformed, 1);
    assert.equal(ga.tunnel.counters.drops.no_route, 1);
    const conn = ga.connectionRecords()[0]!;
    assert.equal(conn.gateway, 'gw-a');
    assert.equal(conn.cableDriver, 'strait-psk');
    assert.equal(conn.txPackets, 1);
    assert.equal(CONNECTION_COLUMNS.length, connectionRow(conn).length);
    assert.deepEqual(connectionRow(conn).slice(0, 7), ['gw-a', 'cluster-b', '127.0.0.1', 'no', 'strait-psk', '10.2.0.0/16', 'connected']);
    assert.equal(ga.gatewayRecord().summary, 'All connections (1) are established');
    assert.equal(ga.endpointRecord().type, 'local');
    // a packet whose source is not in the sending cluster's subnets is refused by the receiver
    const beforeAuth = gb.tunnel.counters.drops.auth;
    ga.tunnel.sendPacket(ga.tunnel.peer('cluster-b')!, udpPacket(0x0a020009, 0x0a020005, 'spoofed'));
    for (let i = 0; i < 50 && gb.tunnel.counters.drops.auth === beforeAuth; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(gb.tunnel.counters.drops.auth, beforeAuth + 1);
    assert.equal(got.length, 1);
  } finally {
    agent.close();
    await ga.stop();
    await gb.stop();
  }
});

test("gateway: an agent's GSO run of extension fragments is taken whole; a broken run takes the per-datagram path", async () => {
  const { ga, gb, got } = await gatewayPair();
  const agent = await UdpTransport.bind('127.0.0.1', 0, () => undefined);
  try {
    for (let i = 0; i < 50 && ga.connectionRecords()[0]?.status !== 'connected'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(ga.connectionRecords()[0]?.status, 'connected');
    // a plain virtio_net_hdr + IPv4 packet of 20000 bytes in fragments of 1000 bytes, as an agent sends them
    const body = Buffer.concat([Buffer.alloc(10), udpPacket(0x0a010007, 0x0a020005, 'x'.repeat(20000 - 28))]);
    const size = 1000;
    const count = Math.ceil(body.length / size);
    const send = (id: number, broken: number): void => {
      for (let i = 0; i < count; i++) {
        const data = body.subarray(i * size, Math.min(body.length, (i + 1) * size));
        const f = Buffer.alloc(VXLAN_OVERHEAD + EXT_HEADER + data.length);
        writeHeaders(f, 0, 100, GATEWAY_MAC, AGENT_MAC, ETHERTYPE_STRAIT);
        writeExtHeader(f, VXLAN_OVERHEAD, EXT_FRAGMENT, i, count, 0, i === broken ? id + 1 : id, size);
        data.copy(f, VXLAN_OVERHEAD + EXT_HEADER);
        agent.send(f, ga.vxlanPort, '127.0.0.1'); // one GSO send at the end of the turn
      }
    };
    send(1, -1);
    await waitFor(() => got.length === 1, 5000, 'the reassembled packet at gateway B');
    assert.ok(ga.vxlan.fragmentRuns >= 1, `runs ${ga.vxlan.fragmentRuns}`);
    assert.equal(ga.vxlan.fragments, count);
    assert.equal(ga.vxlan.reassembled, 1);
    assert.match(got[0]!.toString('latin1'), /xxxxxxxx/);
    // fragment 3 carries another message id: the run is left to the per-datagram path, which
    // reassembles nothing (the message misses a fragment) and keeps the stray one pending
    const runs = ga.vxlan.fragmentRuns;
    send(5, 3);
    await waitFor(() => ga.vxlan.fragments === 2 * count, 5000, 'the broken run counted');
    assert.equal(ga.vxlan.fragmentRuns, runs);
    assert.equal(ga.vxlan.reassembled, 1);
    assert.equal(got.length, 1);
  } finally {
    await agent.close();
    await ga.stop();
    await gb.stop();
  }
});

test("gateway: VXLAN only from the cluster's nodes, inner source in the sending node's pod CIDRs; drops counted, never a crash", async () => {
  const { ga, gb, got } = await gatewayPair();
  const bind = async (address: string) => {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, address, () => r()));
    return s;
  };
  const node1 = await bind('127.0.0.1');
  const node2 = await bind('127.0.0.2');
  const pod = await bind('127.0.0.9');
  const hellos: Buffer[] = [];
  pod.on('message', (m) => hellos.push(m));
  try {
    await waitFor(() => ga.connectionRecords()[0]?.status === 'connected', 5000, 'tunnel up');
    const frame = (src: number, text: string) =>
      vxlan.encode({ vni: 100, dst: GATEWAY_MAC, src: AGENT_MAC, etherType: 0x0800, payload: udpPacket(src, 0x0a020005, text) });
    const d = ga.tunnel.counters.drops;
    // each node for its own pods: through
    node1.send(frame(0x0a010007, 'node1-own-pod'), ga.vxlanPort, '127.0.0.1');
    node2.send(frame(0x0a010107, 'node2-own-pod'), ga.vxlanPort, '127.0.0.1');
    await waitFor(() => got.length === 2, 5000, 'both delivered');
    // a node speaking for another node's pod, for an address of no node, for the remote cluster
    node1.send(frame(0x0a010107, 'node1-as-node2'), ga.vxlanPort, '127.0.0.1');
    node2.send(frame(0x0a010007, 'node2-as-node1'), ga.vxlanPort, '127.0.0.1');
    node1.send(frame(0x0a01ff07, 'node1-as-nobody'), ga.vxlanPort, '127.0.0.1');
    node1.send(frame(0x0a020009, 'node1-as-remote'), ga.vxlanPort, '127.0.0.1');
    await waitFor(() => d.spoofed_source === 4, 5000, 'spoofed sources dropped');
    // a sender that is no node: data, a hello (never answered), garbage
    pod.send(frame(0x0a010007, 'pod-as-node1-pod'), ga.vxlanPort, '127.0.0.1');
    const hello = Buffer.alloc(VXLAN_OVERHEAD + EXT_HEADER);
    writeHeaders(hello, 0, 100, GATEWAY_MAC, AGENT_MAC, ETHERTYPE_STRAIT);
    writeExtHeader(hello, VXLAN_OVERHEAD, 1, 0, 0, 0, 7, 0);
    pod.send(hello, ga.vxlanPort, '127.0.0.1');
    pod.send(Buffer.from('garbage'), ga.vxlanPort, '127.0.0.1');
    await waitFor(() => d.unknown_sender === 3, 5000, 'unknown senders dropped');
    // a super-packet in extension fragments from node 1 with node 2's pod as source
    const body = Buffer.concat([Buffer.alloc(10), udpPacket(0x0a010107, 0x0a020005, 'y'.repeat(3000))]);
    for (let i = 0, n = Math.ceil(body.length / 1000); i < n; i++) {
      const data = body.subarray(i * 1000, (i + 1) * 1000);
      const f = Buffer.alloc(VXLAN_OVERHEAD + EXT_HEADER + data.length);
      writeHeaders(f, 0, 100, GATEWAY_MAC, AGENT_MAC, ETHERTYPE_STRAIT);
      writeExtHeader(f, VXLAN_OVERHEAD, EXT_FRAGMENT, i, n, 0, 42, 1000);
      data.copy(f, VXLAN_OVERHEAD + EXT_HEADER);
      node1.send(f, ga.vxlanPort, '127.0.0.1');
    }
    await waitFor(() => d.spoofed_source === 5, 5000, 'the reassembled super-packet dropped');
    // node 2 leaves the cluster (Kubernetes: its Node object is gone): its frames are dropped
    ga.setNodes([{ address: '127.0.0.1', podCIDRs: ['10.1.0.0/24'] }]);
    node2.send(frame(0x0a010107, 'node2-gone'), ga.vxlanPort, '127.0.0.1');
    await waitFor(() => d.unknown_sender === 4, 5000, 'a removed node dropped');
    node1.send(frame(0x0a010008, 'node1-still'), ga.vxlanPort, '127.0.0.1');
    await waitFor(() => got.length === 3, 5000, 'node 1 still delivered');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      got.map((p) => /node\d-[a-z-]+|pod-[a-z-]+|y{3}/.exec(p.toString('latin1'))?.[0]),
      ['node1-own-pod', 'node2-own-pod', 'node1-still'],
    );
    assert.equal(hellos.length, 0, 'no hello-ack to a non-node');
    assert.throws(
      () => ga.setNodes([{ address: '127.0.0.1', podCIDRs: ['10.1.0.1/24'] }]),
      (e) => isStraitError(e, 'STRAIT_ERR_CONFIG_INVALID'),
    );
    node1.send(frame(0x0a010009, 'node1-after-bad-update'), ga.vxlanPort, '127.0.0.1');
    await waitFor(() => got.length === 4, 5000, 'a rejected update keeps the table');
    void gb;
  } finally {
    node1.close();
    node2.close();
    pod.close();
    await ga.stop();
    await gb.stop();
  }
});

test('inPodCidrs: precomputed network and mask, union of a node listed twice, HA members without pods', () => {
  const t = new NodeTable();
  t.set(
    [
      { address: '192.0.2.1', podCIDRs: ['10.1.0.0/24', '10.9.0.0/16'] },
      { address: '192.0.2.2', podCIDRs: ['0.0.0.0/0'] },
      { address: '192.0.2.1', podCIDRs: ['10.7.7.7/32'] },
    ],
    ['192.0.2.3', '192.0.2.1'],
  );
  const n1 = t.sender('192.0.2.1')!;
  const cases: [string, number, boolean][] = [
    ['first CIDR', 0x0a010001, true],
    ['first CIDR, last address', 0x0a0100ff, true],
    ['next /24', 0x0a010100, false],
    ['second CIDR', 0x0a09ffff, true],
    ['listed twice: /32', 0x0a070707, true],
    ['next to the /32', 0x0a070708, false],
    ['0.0.0.0', 0, false],
  ];
  for (const [name, ip, want] of cases) assert.equal(inPodCidrs(n1, ip), want, name);
  assert.equal(inPodCidrs(t.sender('192.0.2.2')!, 0xffffffff), true, '/0 holds everything');
  assert.equal(inPodCidrs(t.sender('192.0.2.3')!, 0x0a010001), false, 'an HA member alone has no pods');
  assert.equal(t.sender('192.0.2.9'), undefined);
  assert.equal(t.list.length, 3);
  assert.equal(t.size, 3);
});

test('the Endpoint record publishes a real address, never the unspecified listen address 0.0.0.0', () => {
  const ifs = {
    lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
    eth1: [
      { address: 'fe80::1', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '02:00:00:00:00:01', internal: false, cidr: 'fe80::1/64', scopeid: 2 },
      { address: '172.18.0.3', netmask: '255.255.0.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '172.18.0.3/16' },
    ],
  } as unknown as Parameters<typeof advertisedAddress>[1];
  assert.equal(advertisedAddress('0.0.0.0', ifs), '172.18.0.3');
  assert.equal(advertisedAddress('10.0.0.5', ifs), '10.0.0.5');
  // the host's own interfaces: whatever they are, not 0.0.0.0
  assert.notEqual(advertisedAddress('0.0.0.0'), '0.0.0.0');
  assert.match(advertisedAddress('0.0.0.0'), /^\d+\.\d+\.\d+\.\d+$/);
});

test('a super-packet that would need more fragments than a receiver takes (a small tunnel MTU) is cut into segments, and they all arrive', async () => {
  // both gateways with offload (they take super-packets and fragments), a 576-byte path: a
  // 60 KB super-packet would leave in ~115 fragments, and a receiver takes at most 64
  const got: { p: Buffer; next: number }[] = [];
  const offload = { tun: { offload: true }, tunnel: { listen: '127.0.0.1', port: 0, mtu: 576 }, vxlan: { listen: '127.0.0.1', port: 0 } };
  const gb = await startGateway(
    {
      ...base,
      ...offload,
      clusterId: 'cluster-b',
      name: 'gw-b',
      localSubnets: ['10.2.0.0/16'],
      peers: [{ clusterId: 'cluster-a', endpoint: '127.0.0.1', port: 9, subnets: ['10.1.0.0/16'] }],
    },
    { noTun: true, onDeliver: (p, _peer, next) => got.push({ p: Buffer.from(p), next }) },
  );
  const ga = await startGateway(
    { ...base, ...offload, name: 'gw-a', peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: gb.tunnelPort, subnets: ['10.2.0.0/16'] }] },
    { noTun: true },
  );
  gb.setPeerEndpoint('cluster-a', '127.0.0.1', ga.tunnelPort);
  try {
    await waitFor(() => ga.connectionRecords()[0]?.status === 'connected', 5000, 'connected');
    // virtio_net_hdr (GSO TCPv4, MSS 500) + IPv4 + TCP + 60,000 bytes, 10.1.1.10 -> 10.2.1.10
    const payloadLen = 60_000;
    const mss = 500;
    const sp = superPacket(payloadLen, mss, 0x18).pkt;
    assert.equal(ga.tunnel.fitsOneMessage(ga.tunnel.peer('cluster-b')!, sp.length), false, 'the whole super-packet would need more than 64 fragments');
    (ga as unknown as { fromTun(b: Buffer, o: number, l: number): void }).fromTun(sp, 0, sp.length);
    const segments = Math.ceil(payloadLen / mss);
    await waitFor(() => got.length >= segments, 5000, `${segments} segments delivered (got ${got.length})`);
    assert.equal(
      got.reduce((n, g) => n + g.p.length - 52, 0),
      payloadLen,
      'every byte of the payload, once',
    );
    assert.deepEqual([...new Set(got.map((g) => g.next))], [NEXT_IPV4], 'plain packets');
    assert.equal(ga.tunnel.counters.drops.fragment, 0);
    assert.equal(gb.tunnel.counters.drops.fragment, 0, 'the receiver dropped no fragment');
    // the endpoint itself refuses to send such a message whole (nothing the peer could take leaves)
    const wire = ga.tunnel.counters.fragmentsSent;
    assert.equal(ga.tunnel.sendPacket(ga.tunnel.peer('cluster-b')!, sp, NEXT_IPV4_VNET), false);
    assert.equal(ga.tunnel.counters.drops.fragment, 1);
    assert.equal(ga.tunnel.counters.fragmentsSent, wire);
  } finally {
    await ga.stop();
    await gb.stop();
  }
});
