// Faults of the cluster set's control plane, injected into one running local world and each
// probed with real traffic (dig and curl from cluster-a's client pod to cluster-b's echo by
// its clusterset.local name) while every surface is checked: the ServiceExport's conditions
// in the store, `strait show exports`, `strait diagnose` (and its exit code), the
// multicluster daemon's /metrics and the Events. docs/faults.md, "The cluster set's control
// plane", has the bounds (10 s) and what these cases measured.
//
// The broker: the world's multicluster daemons reach it over its store API socket; here they
// reach it through a relay (test/fixtures/unix-stream-relay.mjs) that both clusters join
// through, as a cluster joins a broker behind a load balancer. The relay holds every byte
// (a partition: nothing refused, every caller waits for its own timeout) and lets it flow
// again, or closes every connection (the broker's API server restarted).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { curlInWorld, pidsByCommandLine, twoClusterWorld } from '../helpers/world-ha.js';
import { encodeBrokerInfo, MC_KINDS, OPERATOR_NAMESPACE, parseBrokerInfo } from '../../src/multicluster/control/clusterset/index.js';
import { connectStoreFromFiles, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { BIN, root, strait, straitAsync, upWorld, type TestWorld } from '../helpers/world.js';

/**
 * Two clusters, cluster-a's client on its worker, cluster-b's echo behind a Service on its
 * gateway node (as in the default world: a ClusterIP reached from another cluster whose
 * endpoint is on a worker does not answer today, docs/faults.md "Not covered here").
 */
const WORLD = twoClusterWorld({ haGateway: false, echoService: true }).replace(
  'deployments: [{ name: echo, image: strait/echo, replicas: 1, port: 8080, node: worker }]',
  'deployments: [{ name: echo, image: strait/echo, replicas: 1, port: 8080, node: gateway }]',
);

/** docs/faults.md: a control-plane fault is seen on every surface within 10 s */
const CONTROL_BOUND_MS = 10_000;
/** a CLI poll is one `strait` run (1-4 s on a loaded test machine): its bound gets that much slack */
const CLI_POLL_SLACK_MS = 4000;
/** the issue's outage */
const OUTAGE_MS = 60_000;

let world: TestWorld;
let tmp: string;
let sup = 0;
let relay: ChildProcessByStdio<Writable, Readable, null> | undefined;
const measured: Record<string, Record<string, number | string>> = {};

const s = (...args: string[]) => strait([...args, '--state-dir', world.stateDir]);
/** the same, without blocking (surfaces are polled side by side) */
const sAsync = (...args: string[]) => straitAsync([...args, '--state-dir', world.stateDir]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stores = new Map<string, ResourceStore>();
/** a cluster's store (or the broker's), read directly: a 100 ms poll where a CLI run takes seconds */
function store(c: string): ResourceStore {
  let st = stores.get(c);
  if (!st) {
    st = connectStoreFromFiles({ socketPath: join(world.stateDir, 'store.sock'), tokenFile: join(world.stateDir, 'store.token'), cluster: c });
    stores.set(c, st);
  }
  return st;
}

interface Cond {
  type: string;
  status: string;
  reason: string;
  message: string;
}
async function exportCondition(c: string, name: string, type = 'Valid'): Promise<Cond | undefined> {
  const se = await store(c).get(MC_KINDS.ServiceExport, name, 'default');
  return ((se?.status ?? {}) as { conditions?: Cond[] }).conditions?.find((x) => x.type === type);
}

/** the multicluster daemon's /metrics of a cluster (on its gateway node) */
function mcMetrics(c: string): string {
  const comp = world.record().components.find((x) => x.name === `${c}.multicluster`);
  return comp?.metrics ? curlInWorld(sup, `http://${comp.metrics}/metrics`) : '';
}
/** the gauge strait_mc_broker_reachable of a cluster's multicluster daemon ('' when not scraped) */
function brokerReachable(c: string): string {
  const v = /^strait_mc_broker_reachable (\d)/m.exec(mcMetrics(c))?.[1] ?? '';
  saw(`${c}: strait_mc_broker_reachable`, v);
  return v;
}

/** dig from cluster-a's client pod through its resolver: the A records */
function dig(name: string): string {
  return world.exec('cluster-a/default/client', ['dig', '+short', '+time=1', '+tries=2', name]).stdout.trim();
}
/** the same without blocking: the other polls keep their 100 ms pace beside it */
function digAsync(name: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [BIN, 'exec', '--state-dir', world.stateDir, 'cluster-a/default/client', '--', 'dig', '+short', '+time=1', '+tries=2', name],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('close', () => resolve(out.trim()));
  });
}
function curlByName(name: string, timeoutS = 3): boolean {
  return world.exec('cluster-a/default/client', ['curl', '-s', '-m', String(timeoutS), `http://${name}.default.svc.clusterset.local:8080/`]).status === 0;
}
const clusterIP = (c: string, svc: string): string => {
  const r = s('get', 'service', svc, '-n', 'default', '--cluster', c, '-o', 'json');
  return r.status === 0 ? ((JSON.parse(r.stdout) as { spec: { clusterIP?: string } }).spec.clusterIP ?? '') : '';
};

/** the clusterset IPs of cluster-a's ServiceImport of `svc` (its spec.ips: the VIP the name answers once the import settles) */
const clustersetIPs = (svc: string): string[] => {
  const r = s('get', 'serviceimport', svc, '-n', 'default', '--cluster', 'cluster-a', '-o', 'json');
  return r.status === 0 ? ((JSON.parse(r.stdout) as { spec: { ips?: string[] } }).spec.ips ?? []) : [];
};
/**
 * A clusterset answer for `svc` exported by cluster-b: the import answers at once with
 * cluster-b's ClusterIP, then with the clusterset IP once its derived Service exists
 * (docs/multicluster.md, "The clusterset IP"); either is a working answer.
 */
const answersFor = (svc: string, bIP: string, answer: string): boolean => answer !== '' && (answer === bIP || clustersetIPs(svc).includes(answer));

/** what each poll saw last (for the failure message) */
const lastSeen = new Map<string, string>();
const saw = (what: string, v: unknown): void => {
  lastSeen.set(what, typeof v === 'string' ? v.slice(0, 600) : JSON.stringify(v));
};

/**
 * Poll `fn` every `everyMs` (100 ms; a CLI poll, which costs a process start on a loaded
 * machine, every 1 s); the ms from `t0` to the end of the first poll that saw it.
 */
async function until(what: string, t0: number, fn: () => boolean | Promise<boolean>, ms: number, everyMs = 100): Promise<number> {
  const end = t0 + ms;
  const fail = () => new Error(`${what}: not seen within ${ms} ms; last seen: ${lastSeen.get(what) ?? '(nothing)'}`);
  for (;;) {
    if (Date.now() > end) throw fail();
    if (await fn()) return Date.now() - t0;
    if (Date.now() > end) throw fail();
    await sleep(everyMs);
  }
}
async function allOf(polls: Record<string, Promise<number>>): Promise<Record<string, number>> {
  const keys = Object.keys(polls);
  const values = await Promise.all(Object.values(polls));
  return Object.fromEntries(keys.map((k, i) => [k, values[i] as number]));
}

/** tell the relay; resolves on its "ok" */
function relayCommand(cmd: 'drop' | 'pass' | 'reset'): Promise<void> {
  const r = relay;
  if (!r) return Promise.resolve();
  return new Promise((resolve) => {
    const on = (d: Buffer) => {
      if (d.toString().includes(`ok ${cmd}`)) {
        r.stdout.off('data', on);
        resolve();
      }
    };
    r.stdout.on('data', on);
    r.stdin.write(`${cmd}\n`);
  });
}

/** What the cluster set holds about exports: the broker's slices and imports, cluster-a's imported slices and ServiceImports (names, sorted). */
async function exportState(): Promise<{ broker: string[]; imports: string[] }> {
  const names = (l: { items: KubeObject[] }) => l.items.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
  const [bs, bi, ls, li] = await Promise.all([
    store('broker').list(MC_KINDS.EndpointSlice, { labelSelector: 'multicluster.kubernetes.io/source-cluster' }),
    store('broker').list(MC_KINDS.ServiceImport, {}),
    store('cluster-a').list(MC_KINDS.EndpointSlice, { labelSelector: 'endpointslice.kubernetes.io/managed-by=strait-multicluster' }),
    store('cluster-a').list(MC_KINDS.ServiceImport, {}),
  ]);
  return { broker: [...names(bs), ...names(bi)], imports: [...names(ls), ...names(li)] };
}

const SERVICE = (name: string) =>
  `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: default }\nspec:\n  selector: { app: echo }\n  ports: [{ name: http, port: 8080, protocol: TCP }]\n`;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'strait-cp-faults-'));
  const file = join(tmp, 'world.yaml');
  writeFileSync(file, WORLD);
  world = upWorld(['--world', file]);
  sup = world.record().supervisorPid;
  // the broker behind the relay: both clusters join through it
  const sock = join(tmp, 'broker.sock');
  relay = spawn(process.execPath, [join(root, 'test', 'fixtures', 'unix-stream-relay.mjs'), sock, join(world.stateDir, 'store.sock')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    relay!.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('relaying')) resolve();
    });
    relay!.on('exit', (code) => reject(new Error(`the relay exited (${code})`)));
  });
  const info = parseBrokerInfo(readFileSync(join(world.stateDir, 'broker-info.subm'), 'utf8'));
  const infoFile = join(tmp, 'broker-info.subm');
  writeFileSync(infoFile, encodeBrokerInfo({ ...info, brokerURL: `unix://${sock}#broker` }));
  for (const c of ['cluster-a', 'cluster-b']) {
    const j = s('join', infoFile, '--clusterid', c);
    assert.equal(j.status, 0, j.stderr + j.stdout);
  }
  const ap = strait(['apply', '--cluster', 'cluster-b', '-f', '-', '--state-dir', world.stateDir], SERVICE('echo-late'));
  assert.equal(ap.status, 0, ap.stderr);
});

after(() => {
  relay?.kill('SIGTERM');
  // the daemons' logs outlive the world (a failure's evidence)
  if (world) spawnSync('sh', ['-c', `rm -rf /tmp/strait-cp-faults-logs && cp -r ${world.stateDir}/logs /tmp/strait-cp-faults-logs`]);
  for (const st of stores.values()) void st.close();
  world?.cleanup();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  console.log(`measured: ${JSON.stringify(measured)}`);
});

test('baseline: echo exported by cluster-b answers and carries traffic in cluster-a by its clusterset.local name', async () => {
  const ex = s('export', 'service', '--namespace', 'default', 'echo', '--cluster', 'cluster-b');
  assert.equal(ex.status, 0, ex.stderr);
  const ip = clusterIP('cluster-b', 'echo');
  assert.ok(ip);
  // settled: the name answers the import's clusterset IP
  await until(
    'the clusterset answer',
    Date.now(),
    () => {
      const vip = clustersetIPs('echo')[0];
      return vip !== undefined && dig('echo.default.svc.clusterset.local') === vip;
    },
    60_000,
  );
  // the tunnel may still be coming up after `strait up`
  await until('curl by the clusterset name', Date.now(), () => curlByName('echo'), 60_000);
  assert.equal((await exportCondition('cluster-b', 'echo'))?.status, 'True');
  assert.match(mcMetrics('cluster-b'), /strait_mc_broker_reachable 1/);
});

interface StoredConn {
  status: string;
  latency?: { avgMs: number } | null;
  countersAt?: string;
}
/** the connection of cluster-a's active Gateway record as the store holds it (what show, diagnose and the console read) */
async function storedConnA(): Promise<StoredConn | undefined> {
  const gws = (await store('cluster-a').list(MC_KINDS.Gateway, { namespace: OPERATOR_NAMESPACE })).items;
  const st = gws.map((g) => (g.status ?? {}) as { haStatus?: string; connections?: StoredConn[] }).find((g) => g.haStatus === 'active');
  return st?.connections?.[0];
}
/** cluster-a's gateway's own /records: its connection to cluster-b */
function gatewayConnA(): StoredConn | undefined {
  const comp = world.record().components.find((x) => x.name === 'cluster-a.gateway.gateway');
  const text = comp?.metrics ? curlInWorld(sup, `http://${comp.metrics}/records`) : '';
  return text ? (JSON.parse(text) as { connections: StoredConn[] }).connections[0] : undefined;
}
const gatewayPids = (c: string): number[] => pidsByCommandLine(`--config ${join(world.stateDir, 'tunnel', `${c}.gateway.json`)}`);

/**
 * The RTT case runs while the broker is away (a minute the broker case spends watching the
 * data plane work without it): it starts once the outage's conditions are seen, and the broker
 * case's traffic rounds allow the one connection the RTT case's endpoint switch (a SIGHUP of
 * cluster-a's gateway) may cost.
 */
let outageSeen: () => void = () => undefined;
/** resolved when the broker case has seen every surface say the broker is unreachable (or has ended) */
const outageSettled = new Promise<void>((resolve) => {
  outageSeen = resolve;
});

describe('while the broker is unreachable', { concurrency: true }, () => {
  test('the broker unreachable for 60 s: traffic and DNS keep working, a new export says it waits for the broker, nothing imported is withdrawn; it converges after', async () => {
    const echoIP = clustersetIPs('echo')[0] ?? '';
    const lateIP = clusterIP('cluster-b', 'echo-late');
    assert.ok(echoIP && lateIP);
    const before = await exportState();
    const t0 = Date.now();
    await relayCommand('drop');
    let outage: Record<string, number | string>;
    try {
      // the agents' own view, polled from the cut on
      const reach = {
        metricsB: until('cluster-b: strait_mc_broker_reachable', t0, () => brokerReachable('cluster-b') === '0', CONTROL_BOUND_MS),
        metricsA: until('cluster-a: strait_mc_broker_reachable', t0, () => brokerReachable('cluster-a') === '0', CONTROL_BOUND_MS),
      };
      for (const p of Object.values(reach)) p.catch(() => undefined); // (awaited below)
      // a ServiceExport created during the outage (the CLI talks to the cluster's own store; its
      // own run time, seconds on a loaded machine, is not the product's: times are from its return)
      const ex = await sAsync('export', 'service', '--namespace', 'default', 'echo-late', '--cluster', 'cluster-b');
      assert.equal(ex.status, 0, ex.stdout);
      const tEx = Date.now();
      const unreachable = /broker .*unreachable/;
      outage = await allOf({
        ...reach,
        exportCliMs: Promise.resolve(tEx - t0),
        condition: until(
          'echo-late: Valid False AwaitingSync, the broker unreachable',
          tEx,
          async () => {
            const c = await exportCondition('cluster-b', 'echo-late');
            saw('echo-late: Valid False AwaitingSync, the broker unreachable', c);
            return c?.status === 'False' && c.reason === 'AwaitingSync' && unreachable.test(c.message);
          },
          CONTROL_BOUND_MS,
        ),
        show: until(
          'show exports: echo-late AwaitingSync, the broker unreachable',
          tEx,
          async () => {
            const out = (await sAsync('show', 'exports', '--cluster', 'cluster-b')).stdout;
            saw('show exports: echo-late AwaitingSync, the broker unreachable', out);
            return /echo-late\s+False\s+AwaitingSync\s+.*broker .*unreachable/.test(out);
          },
          CONTROL_BOUND_MS + CLI_POLL_SLACK_MS,
          1000,
        ),
        diagnose: until(
          'diagnose: the broker is unreachable, exit 1',
          tEx,
          async () => {
            const d = await sAsync('diagnose', '--cluster', 'cluster-b');
            saw('diagnose: the broker is unreachable, exit 1', d);
            return d.status === 1 && /broker\s+fail\s+.*unreachable/.test(d.stdout) && /service-export\s+warn\s+.*echo-late.*unreachable/.test(d.stdout);
          },
          CONTROL_BOUND_MS + CLI_POLL_SLACK_MS,
          1000,
        ),
      });
      const ev = s('get', 'events', '-n', 'default', '--cluster', 'cluster-b', '-o', 'json');
      assert.match(ev.stdout, /BrokerUnreachable/);
      // what diagnose says beside the broker: the data plane is fine
      const d = s('diagnose', '--cluster', 'cluster-b');
      assert.match(d.stdout, /connection\s+ok\s+/, d.stdout);
      outageSeen();
      // the data plane does not depend on the broker: traffic and DNS through the whole outage
      let rounds = 0;
      while (Date.now() - t0 < OUTAGE_MS - 5000) {
        assert.equal(dig('echo.default.svc.clusterset.local'), echoIP, 'the import made before the outage answers');
        // (once more: the RTT case's endpoint switch beside this one may cost a connection)
        assert.ok(curlByName('echo') || curlByName('echo'), 'traffic crosses by the clusterset name');
        assert.equal(dig('echo-late.default.svc.clusterset.local'), '', 'the new export is not imported while the broker is away');
        assert.deepEqual((await exportState()).imports, before.imports, 'nothing imported in cluster-a is withdrawn');
        rounds++;
        await sleep(3000);
      }
      outage = { ...outage, rounds };
      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - t0)));
    } finally {
      outageSeen();
      await relayCommand('pass');
    }
    const t1 = Date.now();
    const back = await allOf({
      condition: until('echo-late Valid True', t1, async () => (await exportCondition('cluster-b', 'echo-late'))?.status === 'True', CONTROL_BOUND_MS),
      metricsB: until('cluster-b: strait_mc_broker_reachable', t1, () => brokerReachable('cluster-b') === '1', CONTROL_BOUND_MS),
      dns: until(
        'cluster-a answers echo-late',
        t1,
        async () => answersFor('echo-late', lateIP, await digAsync('echo-late.default.svc.clusterset.local')),
        CONTROL_BOUND_MS + CLI_POLL_SLACK_MS,
      ),
    });
    assert.ok(curlByName('echo-late'), 'traffic to the new export');
    const after = await exportState();
    const late = ['EndpointSlice/submariner-k8s-broker/echo-late.default.cluster-b', 'ServiceImport/submariner-k8s-broker/echo-late.default'];
    assert.deepEqual(after.broker, [...before.broker, ...late].sort(), 'the broker holds each export once, the new one added');
    assert.deepEqual(
      after.imports,
      [...before.imports, 'EndpointSlice/default/echo-late.cluster-b', 'ServiceImport/default/echo-late'].sort(),
      'cluster-a imports each once',
    );
    const d = s('diagnose', '--cluster', 'cluster-b');
    assert.equal(d.status, 0, d.stdout);
    assert.match(
      s('get', 'events', '-n', 'default', '--cluster', 'cluster-b', '-o', 'json').stdout,
      /Service was successfully synced to the broker \(the broker answers again\)/,
    );
    measured['broker-unreachable-60s'] = { ...outage, ...Object.fromEntries(Object.entries(back).map(([k, v]) => [`recovered.${k}`, v])) };
  });

  test("the RTT in the store follows a real change within the records' 5 s, and is never older than 10 s", async () => {
    await outageSettled;
    // 100 ms added each way: a UDP delay relay in cluster-a's gateway node as cluster-b's endpoint
    const rec = world.record().clusters as unknown as { name: string; nodes: { role: string; netns: string; publicIP?: string }[] }[];
    const gwNode = (c: string) => rec.find((x) => x.name === c)!.nodes.find((n) => n.role === 'gateway')!;
    const pubA = gwNode('cluster-a').publicIP!;
    const pubB = gwNode('cluster-b').publicIP!;
    const delay = spawn(
      'nsenter',
      [
        ...['-t', String(sup), '-m', '-n', 'ip', 'netns', 'exec', gwNode('cluster-a').netns],
        ...[process.execPath, join(root, 'test', 'fixtures', 'udp-delay-relay.mjs'), pubA, '14500', pubB, '4500', '100'],
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      delay.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('relaying')) resolve();
      });
      delay.on('exit', (code) => reject(new Error(`the relay exited (${code})`)));
    });
    const file = join(world.stateDir, 'tunnel', 'cluster-a.gateway.json');
    const original = readFileSync(file, 'utf8');
    const cfg = JSON.parse(original) as { peers: { endpoint: string; port?: number }[] };
    cfg.peers[0]!.endpoint = pubA;
    cfg.peers[0]!.port = 14500;
    const hup = () => {
      for (const p of gatewayPids('cluster-a')) process.kill(p, 'SIGHUP');
    };
    const ages: number[] = [];
    const sample = async (): Promise<StoredConn | undefined> => {
      const c = await storedConnA();
      if (c?.countersAt) ages.push(Date.now() - Date.parse(c.countersAt));
      saw('the stored RTT', c);
      return c;
    };
    let m: { ownCrossedMs: number; storedCrossedMs: number; lagMs: number; maxAgeMs: number };
    try {
      const t0 = Date.now();
      writeFileSync(file, JSON.stringify(cfg));
      hup();
      // the gateway's own average crosses 150 ms, then the stored one
      const own = await until('the gateway: RTT avg >= 150 ms', t0, () => (gatewayConnA()?.latency?.avgMs ?? 0) >= 150, 30_000);
      const stored = await until('the store: RTT avg >= 150 ms', t0, async () => ((await sample())?.latency?.avgMs ?? 0) >= 150, 30_000);
      // and stays fresh: every sample of the store's record for 12 s is at most 10 s old (+ a 0.5 s poll and 2 s of slack for a loaded machine)
      const end = Date.now() + 12_000;
      while (Date.now() < end) {
        await sample();
        await sleep(500);
      }
      m = { ownCrossedMs: own, storedCrossedMs: stored, lagMs: stored - own, maxAgeMs: Math.max(...ages) };
    } finally {
      writeFileSync(file, original);
      hup();
      delay.kill('SIGTERM');
    }
    measured['rtt-freshness'] = m;
    assert.ok(m.lagMs <= 5000 + 500 + 2000, `the stored RTT followed the gateway's ${m.lagMs} ms later (bound 5 s + a 0.5 s poll)`);
    assert.ok(m.maxAgeMs <= 10_000 + 500 + 2000, `the stored RTT was ${m.maxAgeMs} ms old (bound 10 s + a 0.5 s poll)`);
    await until(
      'connected again without the relay',
      Date.now(),
      () => gatewayConnA()?.status === 'connected' && (gatewayConnA()?.latency?.avgMs ?? 999) < 100,
      30_000,
    );
  });
});

test('the store API restarted (every connection and watch ends, 3 s away): an export right after it crosses the cluster set, statuses converge, nothing is lost', async () => {
  const ap = strait(['apply', '--cluster', 'cluster-b', '-f', '-', '--state-dir', world.stateDir], SERVICE('echo-after'));
  assert.equal(ap.status, 0, ap.stderr);
  const ip = clusterIP('cluster-b', 'echo-after');
  const before = await exportState();
  const sock = join(world.stateDir, 'store.sock');
  const t0 = Date.now();
  process.kill(sup, 'SIGUSR2');
  const gone = await until('the store API away', t0, () => !existsSync(sock), 5000, 20);
  // what a user meets meanwhile (the CLI may start after the 3 s: what it said is recorded, not asserted)
  const during = s('get', 'serviceexports', '-n', 'default', '--cluster', 'cluster-b');
  const duringCli = `exit ${during.status}: ${during.stderr.trim().split('\n')[0] ?? ''}`;
  const back = await until(
    'the store API back',
    t0,
    async () => {
      try {
        await store('cluster-b').list(MC_KINDS.ServiceExport, { namespace: 'default' });
        return true;
      } catch (err) {
        saw('the store API back', String(err));
        return false;
      }
    },
    30_000,
  );
  // the gateway records are written again (the records publisher's client reconnects)
  const records = until(
    'cluster-a Gateway record written after the restart',
    t0,
    async () => {
      const c = await storedConnA();
      saw('cluster-a Gateway record written after the restart', c);
      return c?.status === 'connected' && Date.parse(c.countersAt ?? '') > t0 + gone;
    },
    CONTROL_BOUND_MS + 5000,
  );
  records.catch(() => undefined); // (awaited below; a failure before that is not unhandled)
  // right after: an export, which only the re-listed informers of the multicluster daemons see
  const tCli = Date.now();
  const ex = await sAsync('export', 'service', '--namespace', 'default', 'echo-after', '--cluster', 'cluster-b');
  assert.equal(ex.status, 0, ex.stdout);
  const tEx = Date.now();
  const cliMs = tEx - tCli;
  const m = await allOf({
    condition: until(
      'echo-after Valid True',
      tEx,
      async () => {
        const c = await exportCondition('cluster-b', 'echo-after');
        saw('echo-after Valid True', c);
        return c?.status === 'True';
      },
      CONTROL_BOUND_MS,
    ),
    dns: until(
      'cluster-a answers echo-after',
      tEx,
      async () => answersFor('echo-after', ip, await digAsync('echo-after.default.svc.clusterset.local')),
      CONTROL_BOUND_MS + CLI_POLL_SLACK_MS,
      500,
    ),
    // the gateway records are written again (the records publisher's client reconnects)
    records,
  });
  assert.ok(curlByName('echo-after'), 'traffic to the export made after the restart');
  assert.ok(curlByName('echo'), 'and to the one made before');
  const after = await exportState();
  assert.deepEqual(
    after.broker,
    [...before.broker, 'EndpointSlice/submariner-k8s-broker/echo-after.default.cluster-b', 'ServiceImport/submariner-k8s-broker/echo-after.default'].sort(),
  );
  assert.deepEqual(after.imports, [...before.imports, 'EndpointSlice/default/echo-after.cluster-b', 'ServiceImport/default/echo-after'].sort());
  assert.equal(brokerReachable('cluster-b'), '1');
  const d = s('diagnose', '--cluster', 'cluster-b');
  assert.equal(d.status, 0, d.stdout);
  measured['store-restarted'] = {
    goneMs: gone,
    backMs: back,
    duringCli,
    exportCliMs: cliMs,
    ...Object.fromEntries(Object.entries(m).map(([k, v]) => [`afterExport.${k}`, v])),
  };
});
