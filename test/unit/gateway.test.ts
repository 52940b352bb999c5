import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { isStraitError, type ErrorCode } from '../../src/base/errors/index.js';
import { UdpTransport } from '../../src/multicluster/dataplane/udp/index.js';
import { waitFor } from '../helpers/wait.js';
import { connectionRow, CONNECTION_COLUMNS, formatRtt, parseGatewayConfig, startGateway, type Gateway } from '../../src/multicluster/dataplane/gateway/index.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import { vxlan, writeHeaders, writeExtHeader, AGENT_MAC, GATEWAY_MAC, VXLAN_OVERHEAD, EXT_HEADER, EXT_FRAGMENT, ETHERTYPE_STRAIT } from '../../src/multicluster/wire/vxlan/index.js';
import { ipv4, udp } from '../../src/multicluster/wire/ipv4/index.js';

const base = { clusterId: 'cluster-a', psk: 'a-psk-of-sixteen-chars', localSubnets: ['10.1.0.0/16'], peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', subnets: ['10.2.0.0/16'] }] };

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
  for (const [name, input, code] of cases) assert.throws(() => parseGatewayConfig(input), (e) => isStraitError(e, code), name);
  assert.throws(() => parseNodeAgentConfig({ remoteSubnets: ['x'], gateway: { address: '10.0.0.1' } }), (e) => isStraitError(e, 'STRAIT_ERR_CONFIG_INVALID'));
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
  const gb: Gateway = await startGateway({
    ...base, clusterId: 'cluster-b', name: 'gw-b', localSubnets: ['10.2.0.0/16'],
    tunnel: { listen: '127.0.0.1', port: 0 }, vxlan: { listen: '127.0.0.1', port: 0 },
    peers: [{ clusterId: 'cluster-a', endpoint: '127.0.0.1', port: 9, subnets: ['10.1.0.0/16'] }],
  }, { noTun: true, onDeliver: (p) => got.push(Buffer.from(p)) });
  const ga: Gateway = await startGateway({
    ...base, name: 'gw-a', tunnel: { listen: '127.0.0.1', port: 0 }, vxlan: { listen: '127.0.0.1', port: 0 },
    peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: gb.tunnelPort, subnets: ['10.2.0.0/16'] }],
  }, { noTun: true });
  gb.setPeerEndpoint('cluster-a', '127.0.0.1', ga.tunnelPort);
  return { ga, gb, got };
}

test('two gateways on loopback: VXLAN in, tunnel across, records and anti-spoofing', async () => {
  const { ga, gb, got } = await gatewayPair();
  const agent = createSocket('udp4');
  try {
    for (let i = 0; i < 50 && ga.connectionRecords()[0]?.status !== 'connected'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(ga.connectionRecords()[0]?.status, 'connected');
    const frame = (src: number, text: string) => vxlan.encode({ vni: 100, dst: GATEWAY_MAC, src: AGENT_MAC, etherType: 0x0800, payload: udpPacket(src, 0x0a020005, text) });
    agent.send(frame(0x0a010007, 'through-the-tunnel'), ga.vxlanPort, '127.0.0.1');
    agent.send(Buffer.from('garbage'), ga.vxlanPort, '127.0.0.1');
    agent.send(vxlan.encode({ vni: 100, dst: GATEWAY_MAC, src: AGENT_MAC, etherType: 0x0800, payload: udpPacket(0x0a010007, 0x0a090001, 'nowhere') }), ga.vxlanPort, '127.0.0.1');
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

test('gateway: an agent\'s GSO run of extension fragments is taken whole; a broken run takes the per-datagram path', async () => {
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
