// `strait verify` in a running world, as `subctl verify` does it: real pod traffic.
//   connectivity (both directions): the active gateway lists the other cluster as
//     connected; a client pod curls an echo pod's IP and an echo Service's ClusterIP in the
//     other cluster through the tunnel, and the echo must report the client pod's address;
//   service discovery: a throw-away Service in the other cluster is exported, its
//     clusterset.local names are dug from the client pod until they answer: the service name
//     the clusterset IP of the client's cluster (its ServiceImport's spec.ips; the ClusterIP
//     while none is allocated), the cluster's name the ClusterIP; curl reaches it by name (so
//     through the clusterset IP), and after unexport the name must be NXDOMAIN.
import { formatRtt } from '../base/units/index.js';
import { randomBytes } from 'node:crypto';
import { MC_KINDS as K, readGateway } from '../multicluster/control/clusterset/index.js';
import type { KubeObject, ResourceStore } from '../platform/store/index.js';
import type { PodExecResult, WorldRecord } from './world-file.js';

export type VerifyKind = 'connectivity' | 'service-discovery';
export const VERIFY_KINDS: VerifyKind[] = ['connectivity', 'service-discovery'];

export interface TrafficCheck {
  check: VerifyKind;
  name: string;
  from: string;
  to: string;
  result: 'PASS' | 'FAIL';
  detail: string;
  /** how long the check took (for discovery: until the answer was right) */
  ms: number;
}

type WorldPod = WorldRecord['clusters'][number]['pods'][number];

export interface TrafficOptions {
  rec: WorldRecord;
  from: string;
  to: string;
  only: VerifyKind[];
  store(cluster: string): ResourceStore;
  exec(netns: string, command: string[], timeoutMs?: number): Promise<PodExecResult>;
  /** how long discovery may take to answer / to go away (default 10 s) */
  timeoutMs?: number;
}

interface Side {
  cluster: string;
  client: WorldPod;
  echo: WorldPod;
  echoPort: number;
  echoLabels: Record<string, string>;
  service?: { name: string; ip: string; port: number };
}

const MANAGED = 'app.kubernetes.io/managed-by';

async function side(o: TrafficOptions, cluster: string): Promise<Side | string> {
  const c = o.rec.clusters.find((x) => x.name === cluster);
  if (!c) return `cluster "${cluster}" is not in the running world (${o.rec.clusters.map((x) => x.name).join(', ')})`;
  const client = c.pods.find((p) => p.image === 'strait/idle' && p.name === 'client') ?? c.pods.find((p) => p.image === 'strait/idle');
  const echo = c.pods.find((p) => p.image === 'strait/echo');
  if (!client || !echo) return `cluster "${cluster}" needs a strait/idle pod and a strait/echo pod to verify with`;
  const store = o.store(cluster);
  const pod = await store.get(K.Pod, echo.name, echo.namespace);
  const containers = (pod?.spec as { containers?: { ports?: { containerPort?: number }[] }[] } | undefined)?.containers ?? [];
  const echoPort = containers[0]?.ports?.[0]?.containerPort ?? 8080;
  const echoLabels = Object.fromEntries(Object.entries(pod?.metadata.labels ?? {}).filter(([k]) => k !== MANAGED));
  const out: Side = { cluster, client, echo, echoPort, echoLabels };
  // a Service with a ClusterIP that selects the echo pod
  const svcs = (await store.list(K.Service, { namespace: echo.namespace })).items;
  for (const s of svcs) {
    const spec = (s.spec ?? {}) as { clusterIP?: string; selector?: Record<string, string>; ports?: { port: number; targetPort?: number | string }[] };
    const sel = Object.entries(spec.selector ?? {});
    if (!spec.clusterIP || spec.clusterIP === 'None' || sel.length === 0 || !sel.every(([k, v]) => echoLabels[k] === v)) continue;
    const port = (spec.ports ?? []).find((p) => (p.targetPort === undefined ? p.port === echoPort : p.targetPort === echoPort));
    if (port) {
      out.service = { name: s.metadata.name, ip: spec.clusterIP, port: port.port };
      break;
    }
  }
  return out;
}

/** curl from a pod; PASS when HTTP 200 and the echo saw the pod's own address. */
async function curlCheck(o: TrafficOptions, client: WorldPod, url: string): Promise<{ ok: boolean; detail: string; ms: number }> {
  const t0 = performance.now();
  const r = await o.exec(client.netns, ['curl', '-s', '-m', '5', '-w', '\n%{http_code}', url]);
  const ms = Math.round(performance.now() - t0);
  const lines = r.stdout.trim().split('\n');
  const code = lines.pop() ?? '';
  if (r.code !== 0 || code !== '200') return { ok: false, detail: `curl ${url}: exit ${r.code}, HTTP ${code || '-'} ${r.stderr.trim()}`.trim(), ms };
  let seen: string;
  try {
    seen = String((JSON.parse(lines.join('\n')) as { remoteAddress?: string }).remoteAddress ?? '');
  } catch {
    return { ok: false, detail: `curl ${url}: HTTP 200 but the body is not the echo's JSON`, ms };
  }
  const ok = seen === client.ip;
  return { ok, detail: `HTTP 200, source seen ${seen}${ok ? ' (the client pod)' : `, expected the client pod ${client.ip}`}`, ms };
}

async function dig(o: TrafficOptions, client: WorldPod, name: string): Promise<{ status: string; addresses: string[] }> {
  const r = await o.exec(client.netns, ['dig', '+time=1', '+tries=1', '+noall', '+comments', '+answer', name, 'A']);
  const status = /status: ([A-Z]+)/.exec(r.stdout)?.[1] ?? (r.code === 0 ? '?' : `dig exit ${r.code}`);
  const addresses = r.stdout
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith(';'))
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[3] === 'A')
    .map((f) => f[4] ?? '')
    .sort();
  return { status, addresses };
}

/** Poll until `ok` (or the deadline); returns the last value and the time taken. */
async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number, pauseMs = 50): Promise<{ value: T; ok: boolean; ms: number }> {
  const t0 = performance.now();
  for (;;) {
    const value = await fn();
    const ms = Math.round(performance.now() - t0);
    if (ok(value)) return { value, ok: true, ms };
    if (ms > timeoutMs) return { value, ok: false, ms };
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}

export async function verifyTraffic(o: TrafficOptions): Promise<TrafficCheck[]> {
  const out: TrafficCheck[] = [];
  const timeout = o.timeoutMs ?? 10_000;
  const add = (check: VerifyKind, name: string, from: string, to: string, ok: boolean, detail: string, ms = 0) =>
    out.push({ check, name, from, to, result: ok ? 'PASS' : 'FAIL', detail, ms });
  const a = await side(o, o.from);
  const b = await side(o, o.to);
  if (typeof a === 'string' || typeof b === 'string') {
    for (const k of o.only) add(k, 'setup', o.from, o.to, false, typeof a === 'string' ? a : (b as string));
    return out;
  }
  if (o.only.includes('connectivity')) {
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as [Side, Side][]) {
      const gws = (await o.store(x.cluster).list(K.Gateway, {})).items;
      const active = gws.map(readGateway).filter((g) => g.gateway.haStatus === 'active');
      const conn = active.flatMap((g) => g.connections).find((c) => c.cluster === y.cluster);
      add(
        'connectivity',
        'gateway connection',
        x.cluster,
        y.cluster,
        conn?.status === 'connected',
        conn
          ? `${conn.status}${conn.rttAvg ? `, RTT ${formatRtt(conn.rttAvg)}` : ''} (${conn.cableDriver})`
          : gws.length === 0
            ? 'no Gateway record in this cluster'
            : 'no connection to this cluster on the active gateway',
      );
      const p = await curlCheck(o, x.client, `http://${y.echo.ip}:${y.echoPort}/`);
      add('connectivity', `pod to pod ${y.echo.ip}:${y.echoPort}`, `${x.cluster}/${x.client.name}`, `${y.cluster}/${y.echo.name}`, p.ok, p.detail, p.ms);
      if (y.service) {
        const s = await curlCheck(o, x.client, `http://${y.service.ip}:${y.service.port}/`);
        add(
          'connectivity',
          `pod to service ${y.service.ip}:${y.service.port}`,
          `${x.cluster}/${x.client.name}`,
          `${y.cluster}/svc/${y.service.name}`,
          s.ok,
          s.detail,
          s.ms,
        );
      } else {
        add('connectivity', 'pod to service', `${x.cluster}/${x.client.name}`, y.cluster, false, `no ClusterIP Service selects ${y.echo.name}`);
      }
    }
  }
  if (o.only.includes('service-discovery')) await discovery(o, a, b, add, timeout);
  return out;
}

/** The throw-away ClusterIP Service in front of the echo pods of side b, labelled strait.io/verify. */
function verifyService(name: string, ns: string, b: Side): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, labels: { 'strait.io/verify': 'true' } },
    spec: { type: 'ClusterIP', selector: b.echoLabels, ports: [{ name: 'http', port: b.echoPort, targetPort: b.echoPort, protocol: 'TCP' }] },
  };
}

/** The ServiceExport's Valid condition, read until it is True or the timeout passes. */
function untilExportValid(store: ReturnType<TrafficOptions['store']>, name: string, ns: string, timeout: number) {
  return until(
    async () => {
      const se = await store.get(K.ServiceExport, name, ns);
      return ((se?.status as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions ?? []).find(
        (c) => c.type === 'Valid',
      );
    },
    (c) => c?.status === 'True',
    timeout,
    10,
  );
}

/** The clusterset IPs (comma-joined) of a cluster's ServiceImport, '' while it has none. */
async function clustersetIPs(store: ReturnType<TrafficOptions['store']>, name: string, ns: string): Promise<string> {
  const si = await store.get(K.ServiceImport, name, ns).catch(() => undefined);
  const ips = (si?.spec as { ips?: unknown } | undefined)?.ips;
  return Array.isArray(ips) ? ips.filter((x): x is string => typeof x === 'string').join() : '';
}

async function discovery(
  o: TrafficOptions,
  a: Side,
  b: Side,
  add: (check: VerifyKind, name: string, from: string, to: string, ok: boolean, detail: string, ms?: number) => void,
  timeout: number,
): Promise<void> {
  const store = o.store(b.cluster);
  const ns = b.echo.namespace;
  const name = `strait-verify-${randomBytes(3).toString('hex')}`;
  const from = `${a.cluster}/${a.client.name}`;
  const fqdn = `${name}.${ns}.svc.clusterset.local`;
  const byCluster = `${b.cluster}.${fqdn}`;
  let exported = false;
  try {
    await store.apply(verifyService(name, ns, b));
    const ip = await until(
      async () => ((await store.get(K.Service, name, ns))?.spec as { clusterIP?: string } | undefined)?.clusterIP ?? '',
      (v) => v !== '',
      timeout,
    );
    add('service-discovery', `service ${ns}/${name} gets a ClusterIP`, b.cluster, b.cluster, ip.ok, ip.ok ? ip.value : 'no ClusterIP allocated', ip.ms);
    if (!ip.ok) return;
    const t0 = performance.now();
    await store.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name, namespace: ns } });
    exported = true;
    const valid = await untilExportValid(store, name, ns, timeout);
    add(
      'service-discovery',
      'ServiceExport Valid=True',
      b.cluster,
      b.cluster,
      valid.ok,
      valid.value ? `${valid.value.status}: ${valid.value.message ?? ''}` : 'no Valid condition',
      valid.ms,
    );
    const storeA = o.store(a.cluster);
    for (const n of [fqdn, byCluster]) {
      // the service name: the clusterset IPs of the client's cluster once its ServiceImport has
      // them (read again at each try), the exporting cluster's ClusterIP before
      let want = ip.value;
      const r = await until(
        async () => {
          if (n === fqdn) want = (await clustersetIPs(storeA, name, ns)) || ip.value;
          return dig(o, a.client, n);
        },
        (v) => v.status === 'NOERROR' && v.addresses.join() === want,
        timeout,
        20,
      );
      add(
        'service-discovery',
        `dig ${n}`,
        from,
        b.cluster,
        r.ok,
        `${r.value.status} ${r.value.addresses.join(',') || '(no A)'}${r.ok ? (want !== ip.value ? ' (clusterset IP)' : '') : `, expected ${want}`}${n === fqdn ? `; ${Math.round(performance.now() - t0)} ms after the export` : ''}`,
        r.ms,
      );
    }
    const c = await curlCheck(o, a.client, `http://${fqdn}:${b.echoPort}/`);
    add('service-discovery', `curl ${fqdn}:${b.echoPort}`, from, b.cluster, c.ok, c.detail, c.ms);
    await store.delete(K.ServiceExport, name, ns);
    exported = false;
    const gone = await until(
      () => dig(o, a.client, fqdn),
      (v) => v.status === 'NXDOMAIN',
      timeout,
      20,
    );
    add('service-discovery', `unexport: dig ${fqdn}`, from, b.cluster, gone.ok, `${gone.value.status}${gone.ok ? '' : ', expected NXDOMAIN'}`, gone.ms);
  } catch (err) {
    add('service-discovery', 'service discovery', from, b.cluster, false, (err as Error).message);
  } finally {
    if (exported) await store.delete(K.ServiceExport, name, ns).catch(() => undefined);
    await store.delete(K.Service, name, ns).catch(() => undefined);
  }
}
