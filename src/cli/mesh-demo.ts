// `strait demo mesh`: the mesh traffic outcomes table (docs/mesh.md), measured in the running world.
// For PERMISSIVE, DISABLE and STRICT applied as the default PeerAuthentication of the `mesh`
// namespace (with the table's DestinationRule: DISABLE for "*", ISTIO_MUTUAL for the service hosts
// under STRICT), it runs the real curl from the in-mesh pod `client` and from the out-of-mesh
// pod `outsider` (as `strait exec` does: nsenter into the world, ip netns exec into the pod)
// and from the host through the ingress gateway, and prints each outcome next to the expected one.
// The PeerAuthentication and DestinationRule `default` of the namespace are put back as they
// were at the end (deleted when there were none).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { E } from '../base/errors/index.js';
import { GROUPS } from '../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../platform/store/index.js';
import { formatTable } from '../platform/cli-kit/index.js';
import { podExecArgv, type WorldRecord } from './world-file.js';

export const DEMO_MODES = ['PERMISSIVE', 'DISABLE', 'STRICT'] as const;
export type DemoMode = (typeof DEMO_MODES)[number];
export type DemoClient = 'inMesh' | 'outsider' | 'ingress';

/** The traffic outcomes table (docs/mesh.md): the outcome each client must see, as curl reports it. */
export const EXPECTED_OUTCOMES: Record<DemoMode, Record<DemoClient, { outcome: string; spec: string }>> = {
  PERMISSIVE: {
    inMesh: { outcome: 'HTTP 200', spec: 'accepted, HTTP 200' },
    outsider: { outcome: 'HTTP 200', spec: 'accepted, HTTP 200' },
    ingress: { outcome: 'HTTP 200', spec: 'HTTP 200' },
  },
  DISABLE: {
    inMesh: { outcome: 'HTTP 200', spec: 'accepted, plaintext' },
    outsider: { outcome: 'HTTP 200', spec: 'accepted' },
    ingress: { outcome: 'HTTP 200', spec: 'HTTP 200' },
  },
  STRICT: {
    inMesh: { outcome: 'HTTP 200', spec: 'accepted, HTTP 200' },
    outsider: { outcome: 'exit 56', spec: 'rejected: connection reset by peer (client error code 56)' },
    ingress: { outcome: 'HTTP 200', spec: 'HTTP 200' },
  },
};

export interface DemoCell {
  /** "HTTP 200", "exit 56", ... */
  measured: string;
  expected: string;
  spec: string;
  ok: boolean;
  /** what was run */
  command: string;
  /** curl's error text, when it failed */
  error?: string;
}

export interface DemoRow {
  mode: DemoMode;
  /** the objects applied for this row: kind/namespace/name mode */
  applied: string[];
  /** from the end of the apply until both pods saw the expected outcome (undefined: never, within the timeout) */
  observedAfterMs: number | undefined;
  cells: Record<DemoClient, DemoCell>;
}

export interface MeshDemoResult {
  cluster: string;
  namespace: string;
  url: string;
  ingress: string;
  rows: DemoRow[];
  /** what the namespace's default PeerAuthentication and DestinationRule were put back to */
  restored: string[];
  ok: boolean;
}

export interface MeshDemoOptions {
  record: WorldRecord;
  store: (cluster: string) => Promise<{ store: ResourceStore; close(): Promise<void> }>;
  /** how long to wait for a mode to take effect before reporting what is seen (ms) */
  timeoutMs?: number;
  progress?: (line: string) => void;
  /** stop early (Ctrl-C): the original policy is still put back */
  signal?: AbortSignal;
}

const NS = 'mesh';
const URL_ = `http://echo.${NS}.svc.cluster.local:8080/`;
const PA = { apiVersion: `security.${GROUPS.mesh}/v1beta1`, kind: 'PeerAuthentication' };
const DR = { apiVersion: `networking.${GROUPS.mesh}/v1beta1`, kind: 'DestinationRule' };

function setupFor(mode: DemoMode): KubeObject[] {
  const pa: KubeObject = { ...PA, metadata: { name: 'default', namespace: NS }, spec: { mtls: { mode } } };
  if (mode === 'PERMISSIVE') return [pa];
  const host = mode === 'DISABLE' ? '*' : `*.${NS}.svc.cluster.local`;
  const tls = mode === 'DISABLE' ? 'DISABLE' : 'ISTIO_MUTUAL';
  return [pa, { ...DR, metadata: { name: 'default', namespace: NS }, spec: { host, trafficPolicy: { tls: { mode: tls } } } }];
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${cmd}: ${err.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 + 9 : 1), stdout, stderr });
    });
  });
}

const CURL = ['curl', '-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}'];

function outcome(r: Run): { measured: string; error?: string } {
  if (r.code === 0) return { measured: `HTTP ${r.stdout.trim()}` };
  const error = r.stderr.trim().split('\n').pop() ?? '';
  return { measured: `exit ${r.code}`, ...(error ? { error } : {}) };
}

/** curl from a pod, exactly as `strait exec CLUSTER/NS/POD -- curl ...` runs it. */
async function curlFromPod(rec: WorldRecord, cluster: string, pod: string): Promise<{ measured: string; error?: string; command: string }> {
  const p = rec.clusters.find((c) => c.name === cluster)?.pods.find((x) => x.namespace === NS && x.name === pod);
  if (!p) throw E.podNotFound(`${cluster}/${NS}/${pod}`);
  const argv = podExecArgv(rec, p.netns, [...CURL, URL_]);
  return { ...outcome(await run('nsenter', argv, 10_000)), command: `strait exec ${cluster}/${NS}/${pod} -- curl ${URL_}` };
}

async function curlIngress(rec: WorldRecord, cluster: string, url: string | undefined): Promise<{ measured: string; error?: string; command: string }> {
  if (url) return { ...outcome(await run(CURL[0] as string, [...CURL.slice(1), `${url}/`], 10_000)), command: `curl ${url}/` };
  const sock = join(rec.stateDir, 'mesh', cluster, 'ingress.sock');
  return {
    ...outcome(await run(CURL[0] as string, [...CURL.slice(1), '--unix-socket', sock, `http://echo.${NS}/`], 10_000)),
    command: `curl --unix-socket ${sock} http://echo.${NS}/`,
  };
}

function strip(o: KubeObject): KubeObject {
  const meta = { ...(o.metadata as unknown as Record<string, unknown>) };
  for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields']) delete meta[k];
  const out: KubeObject = { ...o, metadata: meta as unknown as KubeObject['metadata'] };
  delete (out as Record<string, unknown>)['status'];
  return out;
}

const describeObj = (o: KubeObject): string => {
  const spec = o['spec'] as { mtls?: { mode?: string }; host?: string; trafficPolicy?: { tls?: { mode?: string } } } | undefined;
  return o.kind === 'PeerAuthentication'
    ? `PeerAuthentication ${NS}/default ${spec?.mtls?.mode ?? 'UNSET'}`
    : `DestinationRule ${NS}/default host ${JSON.stringify(spec?.host)} ${spec?.trafficPolicy?.tls?.mode ?? '-'}`;
};

/** One mode applied, then both pods' curl repeated until they see the expected outcome (or the timeout), and the ingress tried once. */
async function runMode(
  opts: MeshDemoOptions,
  store: ResourceStore,
  cluster: string,
  ingressUrl: string | undefined,
  mode: DemoMode,
  say: (line: string) => void,
): Promise<DemoRow> {
  const rec = opts.record;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const want = EXPECTED_OUTCOMES[mode];
  const objs = setupFor(mode);
  if (!objs.some((o) => o.kind === 'DestinationRule')) await store.delete(DR, 'default', NS);
  for (const o of objs) await store.apply(o);
  const applied = objs.map(describeObj);
  say(`${mode}: applied ${applied.join(', ')}`);
  const t0 = performance.now();
  let observedAfterMs: number | undefined;
  let inMesh = await curlFromPod(rec, cluster, 'client');
  let outsider = await curlFromPod(rec, cluster, 'outsider');
  for (;;) {
    if (inMesh.measured === want.inMesh.outcome && outsider.measured === want.outsider.outcome) {
      observedAfterMs = Math.round(performance.now() - t0);
      break;
    }
    if (performance.now() - t0 > timeoutMs || opts.signal?.aborted) break;
    await new Promise((r) => setTimeout(r, 100));
    [inMesh, outsider] = [await curlFromPod(rec, cluster, 'client'), await curlFromPod(rec, cluster, 'outsider')];
  }
  const viaIngress = await curlIngress(rec, cluster, ingressUrl);
  const cell = (c: DemoClient, got: { measured: string; error?: string; command: string }): DemoCell => ({
    measured: got.measured,
    expected: want[c].outcome,
    spec: want[c].spec,
    ok: got.measured === want[c].outcome,
    command: got.command,
    ...(got.error ? { error: got.error } : {}),
  });
  return {
    mode,
    applied,
    observedAfterMs,
    cells: { inMesh: cell('inMesh', inMesh), outsider: cell('outsider', outsider), ingress: cell('ingress', viaIngress) },
  };
}

/** The namespace's default PeerAuthentication and DestinationRule put back as they were before the demo. */
async function restoreDefaults(store: ResourceStore, saved: { pa: KubeObject | undefined; dr: KubeObject | undefined }, restored: string[]): Promise<void> {
  if (saved.pa) {
    await store.apply(strip(saved.pa));
    restored.push(describeObj(saved.pa));
  } else {
    await store.delete(PA, 'default', NS);
    restored.push(`PeerAuthentication ${NS}/default deleted (there was none)`);
  }
  if (saved.dr) {
    await store.apply(strip(saved.dr));
    restored.push(describeObj(saved.dr));
  } else {
    await store.delete(DR, 'default', NS);
    restored.push(`DestinationRule ${NS}/default deleted (there was none)`);
  }
}

/** Run the demo against the running world. */
export async function runMeshDemo(opts: MeshDemoOptions): Promise<MeshDemoResult> {
  const rec = opts.record;
  const say = opts.progress ?? (() => undefined);
  const meshCluster =
    rec.clusters.find((c) => c.pods.some((p) => p.namespace === NS && p.name === 'client')) ?? rec.clusters.find((c) => c.pods.some((p) => p.namespace === NS));
  if (!meshCluster) throw E.podNotFound(`*/${NS}/client (the world has no mesh namespace "${NS}"; the default world has it in cluster-a)`);
  const cluster = meshCluster.name;
  const ingressUrl = (meshCluster as { ingress?: string }).ingress;
  const { store, close } = await opts.store(cluster);
  const rows: DemoRow[] = [];
  const restored: string[] = [];
  const saved = {
    pa: await store.get(PA, 'default', NS),
    dr: await store.get(DR, 'default', NS),
  };
  try {
    for (const mode of DEMO_MODES) {
      if (opts.signal?.aborted) break;
      rows.push(await runMode(opts, store, cluster, ingressUrl, mode, say));
    }
  } finally {
    await restoreDefaults(store, saved, restored);
    await close();
  }
  return {
    cluster,
    namespace: NS,
    url: URL_,
    ingress: ingressUrl ?? `unix:${join(rec.stateDir, 'mesh', cluster, 'ingress.sock')}`,
    rows,
    restored,
    ok: rows.length === DEMO_MODES.length && rows.every((r) => Object.values(r.cells).every((c) => c.ok)),
  };
}

/** The traffic outcomes table with the measured outcome per cell next to the expected one. */
export function formatMeshDemo(r: MeshDemoResult): string {
  const cellText = (c: DemoCell): string =>
    `${c.measured}${c.measured === 'exit 56' ? ' (reset by peer)' : ''} ${c.ok ? '= expected' : `≠ expected ${c.expected}`}`;
  const lines = [
    `Traffic outcomes (docs/mesh.md) in ${r.cluster}, namespace ${r.namespace}: curl ${r.url}`,
    `  in mesh:  strait exec ${r.cluster}/${r.namespace}/client -- curl ...   (sidecar, DestinationRule decides mTLS)`,
    `  outsider: strait exec ${r.cluster}/${r.namespace}/outsider -- curl ... (no sidecar: plaintext)`,
    `  ingress:  curl ${r.ingress}/ from the host (gateway originates mTLS into the mesh)`,
    '',
    formatTable(
      ['MODE', 'CLIENT IN MESH', 'CLIENT OUTSIDE MESH', 'INGRESS (HOST)', 'SEEN AFTER'],
      r.rows.map((row) => [
        row.mode,
        cellText(row.cells.inMesh),
        cellText(row.cells.outsider),
        cellText(row.cells.ingress),
        row.observedAfterMs === undefined ? 'never' : `${row.observedAfterMs} ms`,
      ]),
    ).trimEnd(),
    '',
    'Expected (docs/mesh.md):',
    formatTable(
      ['MODE', 'CLIENT IN MESH', 'CLIENT OUTSIDE MESH (PLAINTEXT)', 'EXTERNAL USER VIA INGRESS'],
      r.rows.map((row) => [row.mode, row.cells.inMesh.spec, row.cells.outsider.spec, row.cells.ingress.spec]),
    ).trimEnd(),
    '',
    `SEEN AFTER: from the end of the apply until both pods saw the expected outcome (policy propagation, curl runs included).`,
    `Restored: ${r.restored.join('; ')}`,
    r.rows.length < DEMO_MODES.length
      ? `demo: stopped after ${r.rows.length} of ${DEMO_MODES.length} modes`
      : r.ok
        ? 'demo: every cell as docs/mesh.md describes'
        : `demo: ${r.rows.reduce((n, row) => n + Object.values(row.cells).filter((c) => !c.ok).length, 0)} cell(s) differ from docs/mesh.md`,
  ];
  for (const row of r.rows) for (const c of Object.values(row.cells)) if (!c.ok && c.error) lines.push(`  ${row.mode}: ${c.command}: ${c.error}`);
  return lines.join('\n') + '\n';
}
