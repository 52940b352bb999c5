// Gateway HA (docs/gateway-and-agent.md): the lease elector over a store, the passive gateway's behaviour,
// the announcement frame and the node agent following it.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { LEASE_KIND, LeaseElector, microTime, type LeaseSpec } from '../../src/multicluster/control/gateway-ha/index.js';
import type { KubeObject } from '../../src/platform/store/index.js';
import { parseGatewayConfig, startGateway } from '../../src/multicluster/dataplane/gateway/index.js';
import { NodeAgent, parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import { TunnelEndpoint } from '../../src/multicluster/dataplane/tunnel/index.js';
import { systemClock } from '../../src/base/clock/index.js';
import {
  announceEpoch,
  encodeAnnounce,
  writeHeaders,
  VXLAN_OVERHEAD,
  ETHERTYPE_IPV4,
  AGENT_MAC,
  GATEWAY_MAC,
} from '../../src/multicluster/wire/vxlan/index.js';
import { MemoryStore } from '../helpers/memory-store.js';
import { gatewayRecords } from '../../src/multicluster/control/gateway/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(10);
  }
}

function elector(store: MemoryStore, identity: string, log: string[], durationMs = 300, createDelayMs = 0) {
  return new LeaseElector({
    store,
    namespace: 'submariner-operator',
    name: 'strait-gateway',
    identity,
    leaseDurationMs: durationMs,
    renewMs: 60,
    createDelayMs,
    onActive: (e) => log.push(`${identity}:active@${e}`),
    onPassive: (h, e) => log.push(`${identity}:passive(${h ?? ''})@${e}`),
    onLost: (h) => log.push(`${identity}:lost(${h ?? ''})`),
  });
}

test('lease: one of two candidates is active; the other takes over when the lease is not renewed, with one more transition', async () => {
  const store = new MemoryStore();
  const log: string[] = [];
  const a = elector(store, 'gw-1', log);
  const b = elector(store, 'gw-2', log);
  a.start();
  await until('gw-1 active', () => a.isActive);
  b.start();
  await until('gw-2 passive', () => log.includes('gw-2:passive(gw-1)@0'));
  assert.equal(b.isActive, false);
  const l = await store.get<KubeObject<{ holderIdentity: string; leaseDurationSeconds: number; renewTime: string }>>(
    LEASE_KIND,
    'strait-gateway',
    'submariner-operator',
  );
  assert.equal(l?.spec?.holderIdentity, 'gw-1');
  assert.equal(l?.spec?.leaseDurationSeconds, 1, 'whole seconds for Kubernetes tools, rounded up');
  assert.equal(l?.metadata.annotations?.['strait.dev/lease-duration-ms'], '300');
  assert.match(l?.spec?.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'MicroTime');
  // gw-1 freezes (stops renewing without releasing): gw-2 takes the lease after it expires
  a.stop();
  await until('gw-2 active', () => b.isActive);
  assert.ok(log.includes('gw-2:active@1'), log.join(' '));
  b.stop();
});

test('lease: takeOver after the liveness link closed does not wait for expiry; the demoted holder is told it lost', async () => {
  const store = new MemoryStore();
  const log: string[] = [];
  const a = elector(store, 'gw-1', log, 60_000);
  const b = elector(store, 'gw-2', log, 60_000);
  a.start();
  await until('gw-1 active', () => a.isActive);
  b.start();
  await until('gw-2 passive', () => log.some((x) => x.startsWith('gw-2:passive')));
  assert.equal(await b.takeOver('gw-3'), false, 'only the holder named by the lease is taken over');
  assert.equal(await b.takeOver('gw-1'), true);
  assert.equal(b.isActive, true);
  // gw-1 is still running: its next renewal finds another holder and it steps down
  await until('gw-1 lost', () => log.includes('gw-1:lost(gw-2)'));
  assert.equal(a.isActive, false);
  b.stop();
});

test('lease: a graceful release hands over at once; a restarted holder takes its own lease back', async () => {
  const store = new MemoryStore();
  const log: string[] = [];
  const a = elector(store, 'gw-1', log, 60_000);
  a.start();
  await until('gw-1 active', () => a.isActive);
  a.stop();
  const again = elector(store, 'gw-1', log, 60_000);
  again.start();
  await until('restarted gw-1 active', () => again.isActive);
  const b = elector(store, 'gw-2', log, 60_000);
  b.start();
  await until('gw-2 passive', () => log.some((x) => x.startsWith('gw-2:passive')));
  await again.release();
  await until('gw-2 active after release', () => b.isActive);
  b.stop();
});

test('lease: a store that fails leaves the active candidate active (and its renewals confirmed)', async () => {
  const store = new MemoryStore();
  const log: string[] = [];
  const renewed: number[] = [];
  const a = new LeaseElector({
    store,
    namespace: 'submariner-operator',
    name: 'strait-gateway',
    identity: 'gw-1',
    leaseDurationMs: 300,
    renewMs: 60,
    onActive: () => undefined,
    onPassive: () => undefined,
    onLost: (h) => log.push(`lost(${h ?? ''})`),
    onRenewed: (at) => renewed.push(at),
  });
  a.start();
  await until('gw-1 active', () => a.isActive);
  await until('renewed', () => renewed.length >= 2);
  const orig = store.update.bind(store);
  store.update = () => Promise.reject(new Error('store down'));
  const n = renewed.length;
  await sleep(400);
  assert.equal(a.isActive, true);
  assert.ok(!log.some((x) => x.includes('lost')));
  assert.ok(renewed.length > n, 'the data plane is not fenced while only the store is down');
  store.update = orig;
  a.stop();
});

test('lease: only the first member creates a missing lease; the other waits (no double win at boot), then creates it if it stays missing', async () => {
  const store = new MemoryStore();
  const log: string[] = [];
  const second = elector(store, 'gw-2', log, 300, 300);
  second.start();
  await sleep(100);
  assert.equal(second.isActive, false);
  assert.equal(await store.get(LEASE_KIND, 'strait-gateway', 'submariner-operator'), undefined);
  const first = elector(store, 'gw-1', log, 300, 0);
  first.start();
  await until('gw-1 active', () => first.isActive);
  await sleep(400);
  assert.equal(second.isActive, false, 'gw-2 found the lease held');
  assert.ok(!log.some((x) => x.includes('lost')), log.join(' '));
  first.stop();
  second.stop();
  // alone, the second member creates it after the delay
  const store2 = new MemoryStore();
  const alone = elector(store2, 'gw-2', log, 300, 300);
  alone.start();
  await until('gw-2 active alone', () => alone.isActive);
  alone.stop();
});

test('lease (Kubernetes mode): a create-only write decides a race at once; with a renew deadline a store outage is not a confirmation and ends the role', async () => {
  const store = new MemoryStore();
  const log: string[] = [];
  let creates = 0;
  // an atomic create (as POST on the API server): the second creator is told it exists
  const create = async (lease: KubeObject<LeaseSpec>): Promise<boolean> => {
    creates++;
    if (await store.get(LEASE_KIND, lease.metadata.name, lease.metadata.namespace)) return false;
    await store.apply(lease);
    return true;
  };
  const renewed: number[] = [];
  const mk = (identity: string) =>
    new LeaseElector({
      store,
      namespace: 'strait-system',
      name: 'strait-gateway',
      identity,
      leaseDurationMs: 600,
      renewMs: 60,
      renewDeadlineMs: 250,
      create,
      ensureNamespace: false,
      onActive: (e, _why, former) => log.push(`${identity}:active@${e}${former ? `<-${former}` : ''}`),
      onPassive: (h) => log.push(`${identity}:passive(${h ?? ''})`),
      onLost: (h, why) => log.push(`${identity}:lost(${h ?? ''}${why ? `: ${why}` : ''})`),
      onRenewed: (at) => {
        if (identity === 'gw-1') renewed.push(at);
      },
    });
  const a = mk('gw-1');
  const b = mk('gw-2');
  a.start();
  b.start();
  await until('one active', () => a.isActive || b.isActive);
  await sleep(200);
  assert.equal([a, b].filter((x) => x.isActive).length, 1, log.join(' '));
  assert.ok(creates >= 1);
  assert.equal(await store.get(LEASE_KIND, 'strait-system', 'strait-system'), undefined, 'no Namespace written');
  const [holder, other] = a.isActive ? [a, b] : [b, a];
  // the store fails for the holder only past the renew deadline: it gives the role up; the other takes over and learns the former holder
  const orig = store.update.bind(store);
  let failing = true;
  store.update = (o) => (failing && (o as KubeObject<LeaseSpec>).spec?.holderIdentity === holder.holder ? Promise.reject(new Error('store down')) : orig(o));
  const n = renewed.length;
  await until('the holder gave up', () => log.some((x) => x.includes(':lost(: no renewal succeeded within the renew deadline')), 3000);
  if (holder === a) assert.ok(renewed.length - n <= 1, 'failed renewals are not confirmations');
  failing = false;
  await until('the other active', () => other.isActive, 3000);
  assert.ok(
    log.some((x) => new RegExp(`:active@1<-${holder === a ? 'gw-1' : 'gw-2'}$`).test(x)),
    log.join(' '),
  );
  store.update = orig;
  a.stop();
  b.stop();
});

test('lease (Kubernetes mode): with no rival known, a store outage past the renew deadline keeps the role (said once) and the next renewal succeeds; with a rival it ends it', async () => {
  for (const rival of [false, true]) {
    const store = new MemoryStore();
    const log: string[] = [];
    const create = async (lease: KubeObject<LeaseSpec>): Promise<boolean> => {
      if (await store.get(LEASE_KIND, lease.metadata.name, lease.metadata.namespace)) return false;
      await store.apply(lease);
      return true;
    };
    let renewals = 0;
    const e = new LeaseElector({
      store,
      namespace: 'strait-system',
      name: 'strait-gateway',
      identity: 'gw-1',
      leaseDurationMs: 600,
      renewMs: 60,
      renewDeadlineMs: 250,
      create,
      ensureNamespace: false,
      rivals: () => rival,
      onKeptAlone: (ms) => log.push(`kept alone ${ms >= 250 ? 'past' : 'before'} the deadline`),
      onActive: (ep) => log.push(`active@${ep}`),
      onPassive: (h) => log.push(`passive(${h ?? ''})`),
      onLost: (h, why) => log.push(`lost(${h ?? ''}${why ? `: ${why}` : ''})`),
      onRenewed: () => renewals++,
    });
    e.start();
    await until('active', () => e.isActive);
    // the API server away for four renew deadlines
    const orig = store.update.bind(store);
    store.update = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const n = renewals;
    await sleep(1000);
    store.update = orig;
    if (rival) {
      assert.ok(
        log.some((x) => x.startsWith('lost(: no renewal succeeded within the renew deadline')),
        log.join(' '),
      );
      assert.equal(e.isActive, false);
    } else {
      assert.equal(renewals, n, 'failed renewals are not confirmations');
      assert.deepEqual(
        log.filter((x) => x.startsWith('kept') || x.startsWith('lost')),
        ['kept alone past the deadline'],
      );
      assert.equal(e.isActive, true);
      await until('renewed after the outage', () => renewals > n, 2000);
      assert.deepEqual(
        log.filter((x) => x.startsWith('active')),
        ['active@0'],
        'one role all along',
      );
    }
    e.stop();
  }
});

test('lease (Kubernetes mode): a renewal the network swallows (no answer at all) ends the role at the renew deadline, not when the request gives up', async () => {
  const store = new MemoryStore();
  const log: { at: number; what: string }[] = [];
  const create = async (lease: KubeObject<LeaseSpec>): Promise<boolean> => {
    if (await store.get(LEASE_KIND, lease.metadata.name, lease.metadata.namespace)) return false;
    await store.apply(lease);
    return true;
  };
  let lastRenewed = 0;
  const e = new LeaseElector({
    store,
    namespace: 'strait-system',
    name: 'strait-gateway',
    identity: 'gw-1',
    leaseDurationMs: 1500,
    renewMs: 100,
    renewDeadlineMs: 400,
    create,
    ensureNamespace: false,
    rivals: () => true,
    onActive: () => undefined,
    onPassive: () => undefined,
    onLost: (_h, why) => log.push({ at: performance.now(), what: `lost: ${why ?? ''}` }),
    onRenewed: (at) => {
      lastRenewed = at;
    },
  });
  e.start();
  await until('active', () => e.isActive);
  await sleep(250);
  // every write from now on hangs (dropped packets: no refusal, no answer)
  store.update = () => new Promise<never>(() => undefined);
  await until('gave the role up', () => log.length > 0, 3000);
  const late = (log[0]?.at ?? 0) - lastRenewed;
  assert.match(log[0]?.what ?? '', /no renewal succeeded within the renew deadline/);
  // (the request never answers: that the role ended at all is the point; not before the deadline)
  assert.ok(late >= 400, `the role ended ${Math.round(late)} ms after the last confirmed renewal (deadline 400 ms)`);
  assert.equal(e.isActive, false);
  e.stop();
});

test('microTime has microseconds', () => {
  assert.equal(microTime(new Date('2026-01-02T03:04:05.678Z')), '2026-01-02T03:04:05.678000Z');
});

test('announcement frame: round trip, and the decoder never throws on random or mutated input', () => {
  const f = encodeAnnounce(100, 7);
  assert.equal(announceEpoch(f), 7);
  assert.equal(f.readUInt16BE(20), 0x88b5);
  const data = Buffer.alloc(VXLAN_OVERHEAD + 20);
  writeHeaders(data, 0, 100, GATEWAY_MAC, AGENT_MAC, ETHERTYPE_IPV4);
  assert.equal(announceEpoch(data), -1, 'an IPv4 frame is not an announcement');
  for (let i = 0; i < 20_000; i++) {
    const b = i % 2 ? randomBytes(i % 64) : Buffer.from(f);
    if (i % 2 === 0) b[i % b.length] = (b[i % b.length] as number) ^ (1 + (i % 255));
    const e = announceEpoch(b);
    assert.ok(Number.isInteger(e) && e >= -1);
  }
});

test('node agent: follows an announcement from a configured gateway with a newer epoch only', () => {
  const agent = new NodeAgent(parseNodeAgentConfig({ remoteSubnets: ['10.2.0.0/16'], gateway: { address: '172.18.0.2', standby: ['172.18.0.3'] } }));
  const from = (msg: Buffer, addr: string) => (agent as unknown as { fromGateway(m: Buffer, a: string, p: number): void }).fromGateway(msg, addr, 4800);
  from(encodeAnnounce(100, 3), '172.18.0.9');
  assert.equal(agent.gateway, '172.18.0.2', 'an unknown address cannot redirect the agent');
  assert.equal(agent.counters.drops.auth, 1);
  from(encodeAnnounce(100, 3), '172.18.0.3');
  assert.equal(agent.gateway, '172.18.0.3');
  assert.equal(agent.counters.gatewaySwitches, 1);
  from(encodeAnnounce(100, 2), '172.18.0.2');
  assert.equal(agent.gateway, '172.18.0.3', 'an older epoch (a stale active) is ignored');
  from(encodeAnnounce(101, 9), '172.18.0.2');
  assert.equal(agent.gateway, '172.18.0.3', 'another VNI is ignored');
  assert.equal(agent.counters.drops.malformed, 1);
  from(encodeAnnounce(100, 4), '172.18.0.2');
  assert.equal(agent.gateway, '172.18.0.2');
  assert.equal(agent.gatewayEpoch, 4);
});

test('gateway config: ha must list the gateway itself and renew well within the lease', () => {
  const base = {
    clusterId: 'cluster-a',
    name: 'gw-1',
    psk: 'x'.repeat(32),
    localSubnets: ['10.1.0.0/16'],
    peers: [],
    ha: {
      members: [
        { name: 'gw-1', address: '172.18.0.2' },
        { name: 'gw-2', address: '172.18.0.3' },
      ],
      store: { socket: '/s', tokenFile: '/t', cluster: 'cluster-a' },
    },
  };
  const ok = parseGatewayConfig(base);
  assert.equal(ok.ha?.leaseDurationMs, 1000);
  assert.equal(ok.ha?.renewMs, 200);
  assert.equal(ok.ha?.port, 4801);
  const bad = (cfg: unknown, re: RegExp) =>
    assert.throws(
      () => parseGatewayConfig(cfg),
      (e: unknown) => isStraitError(e) && re.test(e.message),
    );
  bad({ ...base, name: 'gw-9' }, /ha\.members.*gw-9/);
  bad({ ...base, ha: { ...base.ha, renewMs: 600 } }, /renewMs/);
  bad({ ...base, ha: { ...base.ha, members: [base.ha.members[0]] } }, /members/);
  // Kubernetes mode: no store, no members needed; client-go's timings by default, in their order
  const kube = parseGatewayConfig({ ...base, ha: { kubernetes: {} } });
  assert.deepEqual(kube.ha?.kubernetes, { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 });
  assert.deepEqual(kube.ha?.members, []);
  assert.equal(kube.ha?.store, undefined);
  bad({ ...base, ha: { kubernetes: { leaseDurationSeconds: 10, renewDeadlineSeconds: 10 } } }, /renewDeadlineSeconds/);
  bad({ ...base, ha: { kubernetes: { renewDeadlineSeconds: 3, retryPeriodSeconds: 3 } } }, /retryPeriodSeconds/);
});

test('passive gateway: ignores the tunnel protocol, reports passive; once active it handshakes and announces to the agents', async () => {
  const agentSock = createSocket('udp4');
  await new Promise<void>((r) => agentSock.bind(0, '127.0.0.1', () => r()));
  const frames: Buffer[] = [];
  agentSock.on('message', (m) => frames.push(m));
  const psk = 'ha-unit-psk-0123456789abcdef';
  const sent: { msg: Buffer; port: number }[] = [];
  const remote = new TunnelEndpoint({
    clusterId: 'cluster-b',
    psk,
    clock: systemClock,
    peers: [{ clusterId: 'cluster-a', address: '127.0.0.1', port: 9, subnets: ['10.1.0.0/16'] }],
    send: (chunks, port) => sent.push({ msg: Buffer.concat(Array.isArray(chunks) ? chunks : [chunks]), port }),
    deliver: () => undefined,
  });
  const gw = await startGateway(
    {
      clusterId: 'cluster-a',
      name: 'gw-1',
      psk,
      localSubnets: ['10.1.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0, agentPort: agentSock.address().port },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: 9, subnets: ['10.2.0.0/16'] }],
      nodes: [{ address: '127.0.0.1', podCIDRs: ['10.1.1.0/24'] }],
      ha: {
        members: [
          { name: 'gw-1', address: '127.0.0.1' },
          { name: 'gw-2', address: '127.0.0.2' },
        ],
        store: { socket: '/s', tokenFile: '/t', cluster: 'cluster-a' },
      },
    },
    { noTun: true },
  );
  try {
    assert.equal(gw.haStatus, 'passive');
    assert.deepEqual(gw.gatewayRecord(), { node: 'gw-1', haStatus: 'passive', summary: 'There are no connections' });
    assert.deepEqual(gw.connectionRecords(), []);
    // a handshake initiation reaches the passive gateway: dropped, unanswered
    remote.initiate(remote.peer('cluster-a')!);
    const init = sent.pop()!;
    const probe = createSocket('udp4');
    const answers: Buffer[] = [];
    probe.on('message', (m) => answers.push(m));
    await new Promise<void>((r) => probe.bind(0, '127.0.0.1', () => r()));
    probe.send(init.msg, gw.tunnelPort, '127.0.0.1');
    await until('counted', () => gw.vxlan.passiveDrops === 1);
    assert.equal(gw.tunnel.counters.handshakesResponded, 0);
    assert.equal(frames.length, 0, 'a passive gateway announces nothing');
    gw.becomeActive(5);
    assert.equal(gw.haStatus, 'active');
    assert.equal(gw.tunnel.counters.handshakesInitiated > 0, true, 'the new active gateway handshakes at once');
    await until('announcement at the agent', () => frames.length > 0);
    assert.equal(announceEpoch(frames[0]!), 5);
    assert.equal(gw.gatewayRecord().haStatus, 'active');
    // fencing: once the lease is not confirmed in time, nothing goes out on the tunnel
    const before = gw.tunnel.counters.handshakesInitiated;
    gw.leaseHeld(performance.now() - 1);
    gw.tunnel.initiate(gw.tunnel.peer('cluster-b')!);
    assert.equal(gw.tunnel.counters.handshakesInitiated, before + 1);
    assert.equal(gw.vxlan.fencedDrops, 1, 'the initiation was not sent');
    gw.leaseHeld(performance.now() + 60_000);
    gw.tunnel.initiate(gw.tunnel.peer('cluster-b')!);
    assert.equal(gw.vxlan.fencedDrops, 1);
    probe.close();
  } finally {
    remote.close();
    await gw.stop();
    agentSock.close();
  }
});

test('Kubernetes mode (ha without members): the passive gateway learns the active one from its announcement of the lease epoch, and is ready then', async () => {
  const gw = await startGateway(
    {
      clusterId: 'cluster-a',
      name: 'gw-2',
      psk: 'ha-unit-psk-0123456789abcdef',
      localSubnets: ['10.1.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: 9, subnets: ['10.2.0.0/16'] }],
      // the other gateway node is one of the cluster's nodes (docs: it must be, to be heard)
      nodes: [{ address: '127.0.0.3', podCIDRs: ['10.1.3.0/24'] }],
      ha: { kubernetes: {} },
    },
    { noTun: true },
  );
  const active = createSocket('udp4');
  await new Promise<void>((r) => active.bind(0, '127.0.0.3', () => r()));
  const stranger = createSocket('udp4');
  await new Promise<void>((r) => stranger.bind(0, '127.0.0.4', () => r()));
  const announce = (epoch: number) => active.send(encodeAnnounce(100, epoch), gw.vxlanPort, '127.0.0.1');
  try {
    // the Lease says: held by gw-1 with 3 transitions; its address comes with its announcement
    gw.becomePassive(undefined, 3);
    assert.equal(gatewayRecords(gw).ready, false);
    announce(2); // a former holder's: older than the lease, ignored
    announce(3);
    await until('followed the holder', () => gw.activeAddress !== undefined);
    assert.equal(gw.activeAddress, '127.0.0.3');
    assert.equal(gw.haEpoch, 3);
    assert.equal(gw.vxlan.malformed, 0, 'both announcements were taken as such');
    assert.equal(gatewayRecords(gw).ready, true);
    assert.equal(gatewayRecords(gw).ha?.activeAddress, '127.0.0.3');
    // the lease changed hands (epoch 4): the old address is forgotten until the new holder announces
    gw.becomePassive(undefined, 4);
    assert.equal(gw.activeAddress, undefined);
    announce(3);
    await sleep(50);
    assert.equal(gw.activeAddress, undefined, 'an announcement of an older epoch is not followed');
    // a sender that is no node of the cluster (a pod) cannot pull the passive gateway to itself
    stranger.send(encodeAnnounce(100, 4), gw.vxlanPort, '127.0.0.1');
    await until('the stranger dropped', () => gw.tunnel.counters.drops.unknown_sender === 1);
    assert.equal(gw.activeAddress, undefined, 'an announcement from a non-node is not followed');
  } finally {
    stranger.close();
    active.close();
    await gw.stop();
  }
});

test('fencing per send: the clock is read once per callback and every 64 sends; nothing is sent past the deadline beyond that bound', async () => {
  const gw = await startGateway(
    {
      clusterId: 'cluster-a',
      name: 'gw-1',
      psk: 'ha-unit-psk-0123456789abcdef',
      localSubnets: ['10.1.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: 9, subnets: ['10.2.0.0/16'] }],
    },
    { noTun: true },
  );
  const send = (gw as unknown as { sendTunnel(b: Buffer, port: number, address: string): void }).sendTunnel.bind(gw);
  const dgram = Buffer.alloc(64);
  try {
    // one synchronous run that crosses the deadline: every send after the first clock read past it is dropped
    const deadline = performance.now() + 3;
    gw.leaseHeld(deadline);
    let sentLate = 0;
    let droppedEarly = 0;
    // by count past the deadline, not by time (a busy machine sends slowly)
    for (let late = 0; late < 200; ) {
      const t = performance.now();
      if (t > deadline) late++;
      const before = gw.vxlan.fencedDrops;
      send(dgram, 9, '127.0.0.1');
      const dropped = gw.vxlan.fencedDrops !== before;
      if (!dropped && t > deadline) sentLate++;
      if (dropped && t <= deadline) droppedEarly++;
    }
    assert.equal(droppedEarly, 0, 'nothing dropped before the deadline');
    assert.ok(sentLate < 64, `at most 63 sends past the deadline in one synchronous run (got ${sentLate})`);
    assert.ok(gw.vxlan.fencedDrops > 0);
    // a new callback (e.g. a process resumed after SIGSTOP): its first send reads the clock
    gw.leaseHeld(performance.now() + 60_000);
    send(dgram, 9, '127.0.0.1');
    const drops = gw.vxlan.fencedDrops;
    (gw as unknown as { fenceAt: number }).fenceAt = performance.now() - 1; // the deadline passed while "frozen"
    await sleep(1);
    send(dgram, 9, '127.0.0.1');
    assert.equal(gw.vxlan.fencedDrops, drops + 1, 'the first send of the next callback is fenced');
    assert.equal(gw.gatewayRecord().haStatus, 'passive', 'a fenced gateway does not report itself active');
    assert.match(gw.gatewayRecord().summary, /fenced/);
  } finally {
    await gw.stop();
  }
});
