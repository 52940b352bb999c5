// Gateway HA (docs/gateway-and-agent.md): when cluster-b's passive gateway becomes active it handshakes with the
// remote gateways at once; they accept it from its new address (authenticated roaming)
// and traffic resumes after one round trip. Measured here on loopback (reported, not
// asserted: no timed assertions in tests).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, type Gateway } from '../../src/multicluster/dataplane/gateway/index.js';
import { ipv4, udp } from '../../src/multicluster/wire/ipv4/index.js';

const PSK = 'failover-test-psk-0123456789';

function packet(n: number): Buffer {
  const src = 0x0a010007;
  const dst = 0x0a020005;
  const u = udp.encode({ srcPort: 1, dstPort: 2, payload: Buffer.from(`seq-${n}`) }, undefined, 0, { src, dst });
  return ipv4.encode({ tos: 0, id: n & 0xffff, flags: 2, fragmentOffset: 0, ttl: 64, protocol: 17, src, dst, payload: u });
}

function gatewayB(name: string, aPort: number, got: string[]): Promise<Gateway> {
  return startGateway(
    {
      clusterId: 'cluster-b',
      name,
      psk: PSK,
      localSubnets: ['10.2.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      peers: [{ clusterId: 'cluster-a', endpoint: '127.0.0.1', port: aPort, subnets: ['10.1.0.0/16'] }],
    },
    { noTun: true, onDeliver: (p) => got.push(`${name}:${p.subarray(28).toString()}`) },
  );
}

test('passive gateway takes over: traffic from cluster-a resumes through it', async (t) => {
  const got: string[] = [];
  const ga = await startGateway(
    {
      clusterId: 'cluster-a',
      name: 'gw-a',
      psk: PSK,
      localSubnets: ['10.1.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: 9, subnets: ['10.2.0.0/16'] }],
    },
    { noTun: true },
  );
  const gb1 = await gatewayB('gw-b1', ga.tunnelPort, got);
  let gb2: Gateway | undefined;
  try {
    const peer = ga.tunnel.peer('cluster-b')!;
    const wait = async (cond: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
    };
    await wait(() => peer.status === 'connected');
    let n = 0;
    ga.tunnel.sendPacket(peer, packet(n++));
    await wait(() => got.length > 0);
    assert.equal(got[0], 'gw-b1:seq-0');
    // the active gateway dies; the passive one is promoted (its lease won) and starts
    await gb1.stop();
    const t0 = performance.now();
    gb2 = await gatewayB('gw-b2', ga.tunnelPort, got);
    let resumedAt = -1;
    for (let i = 0; i < 400 && resumedAt < 0; i++) {
      ga.tunnel.sendPacket(peer, packet(n++));
      await new Promise((r) => setTimeout(r, 5));
      if (got.some((g) => g.startsWith('gw-b2:'))) resumedAt = performance.now();
    }
    assert.ok(resumedAt > 0, `traffic never resumed: ${JSON.stringify(ga.connectionRecords())}`);
    t.diagnostic(`failover: traffic resumed ${(resumedAt - t0).toFixed(1)} ms after the passive gateway started`);
    assert.equal(peer.port, gb2.tunnelPort, 'gw-a follows the authenticated new endpoint');
    assert.equal(ga.connectionRecords()[0]!.nat, 'yes');
  } finally {
    await ga.stop();
    await gb2?.stop();
  }
});
