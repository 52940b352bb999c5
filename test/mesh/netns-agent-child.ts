// Runs inside a private namespace tree (unshare --net --mount), started by
// mesh-agent-netns.test.ts. Pods are network namespaces; their objects are in a store
// (with the strait.dev/netns annotation the local world sets); the mesh agent starts the
// sidecars itself and pushes each policy change to them. Prints the outcomes as JSON.
// STRAIT_TEST_DATAPLANE=node: the same with the node-level proxy (one process for all pods).
// STRAIT_TEST_LOOP_PROBE=1: instead of the table, PERMISSIVE only, then the outsider connects
// straight to the server pod's proxy ports (no redirect); prints what curl saw, the proxies'
// open descriptors afterwards and whether the in-mesh client is still served.
// STRAIT_TEST_ROTATION_MS=N: instead of the table, workload certificates of N ms (re-issued
// at half), STRICT + ISTIO_MUTUAL, the in-mesh client's curl every 250 ms for 2.5 N;
// prints the curls' outcomes and the server pod's certificate expiry and config updates
// (its metrics) before and after.
// STRAIT_TEST_KILL=1: instead of the table, STRICT + ISTIO_MUTUAL, then SIGKILL to every proxy
// process; prints the pods' status and the curls (in-mesh client, outsider) once the agent
// has them served again, and the outsider's curl while no proxy ran.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MeshCa, NETNS_ANNOTATION, startMeshAgent, type MeshDataplane } from '../../src/mesh/control/index.js';
import type { KubeObject } from '../../src/platform/store/index.js';
import { dr, pa, pod, smcp, smmr, svc } from './fixtures.js';
import { openEmbeddedStore } from '../../src/platform/store/index.js';

const ROOT = process.env['STRAIT_ROOT'] ?? process.cwd();
const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const PODS = { server: '10.78.0.2', client: '10.78.0.3', outsider: '10.78.0.4' } as const;
const children: ChildProcess[] = [];
const DATAPLANE = (process.env['STRAIT_TEST_DATAPLANE'] ?? 'sidecar') as MeshDataplane;

function curlIn(ns: string, url: string): Promise<{ exit: number; code: string }> {
  return new Promise((resolve) => {
    const c = spawn('ip', ['netns', 'exec', ns, 'curl', '-sS', '--max-time', '5', '-o', '/dev/null', '-w', '%{http_code}', url], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.on('exit', (code) => resolve({ exit: code ?? -1, code: out.trim() }));
  });
}

function curlHost(args: string[]): Promise<{ exit: number; code: string }> {
  return new Promise((resolve) => {
    const c = spawn('curl', ['-sS', '--max-time', '5', '-o', '/dev/null', '-w', '%{http_code}', ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.on('exit', (code) => resolve({ exit: code ?? -1, code: out.trim() }));
  });
}

const annotated = (o: KubeObject, netns: string): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, annotations: { ...(o.metadata.annotations ?? {}), [NETNS_ANNOTATION]: netns } },
});

async function main(): Promise<void> {
  sh('mount', '-t', 'tmpfs', 'strait-netns', '/run/netns');
  sh('ip', 'link', 'set', 'lo', 'up');
  sh('ip', 'link', 'add', 'br0', 'type', 'bridge');
  sh('ip', 'addr', 'add', '10.78.0.1/24', 'dev', 'br0'); // the tree's root (the "host" of the ingress) reaches the pods
  sh('ip', 'link', 'set', 'br0', 'up');
  Object.entries(PODS).forEach(([name, ip], i) => {
    sh('ip', 'netns', 'add', name);
    sh('ip', 'link', 'add', `h${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name);
    sh('ip', 'link', 'set', `h${i}`, 'master', 'br0', 'up');
    sh('ip', '-n', name, 'link', 'set', 'lo', 'up');
    sh('ip', '-n', name, 'addr', 'add', `${ip}/24`, 'dev', 'eth0');
    sh('ip', '-n', name, 'link', 'set', 'eth0', 'up');
  });
  const app = spawn('ip', ['netns', 'exec', 'server', process.execPath, join(ROOT, 'dist', 'test', 'mesh', 'echo-app.js'), '8080'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(app);
  await new Promise((r) => createInterface({ input: app.stdout! }).once('line', r));

  const store = openEmbeddedStore({ dir: mkdtempSync(join(tmpdir(), 'strait-agent-store-')) });
  for (const o of [
    annotated(pod('mesh', 'echo-0', { labels: { app: 'echo' }, inject: 'annotation', ip: PODS.server, sa: 'echo', port: 8080 }), 'server'),
    annotated(pod('mesh', 'client', { inject: 'annotation', ip: PODS.client, sa: 'client' }), 'client'),
    annotated(pod('mesh', 'outsider', { ip: PODS.outsider }), 'outsider'),
    svc('mesh', 'echo', 8080),
  ]) {
    const applied = await store.apply(o);
    // status is not part of apply: set the pod's IP as the world's pod runtime does
    if (o.status) await store.updateStatus({ ...applied, status: o.status });
  }
  const dir = mkdtempSync(join(tmpdir(), 'strait-agent-'));
  const agent = await startMeshAgent({
    store,
    ca: MeshCa.create(),
    dir,
    sidecarScript: join(ROOT, 'dist', 'agents', 'sidecar', 'main.js'),
    dataplane: DATAPLANE,
    nodeProxyScript: join(ROOT, 'dist', 'agents', 'mesh-node', 'main.js'),
    ...(process.env['STRAIT_TEST_ROTATION_MS'] ? { workloadLifetimeMs: Number(process.env['STRAIT_TEST_ROTATION_MS']) } : {}),
    bootstrap: [smcp('istio-system', { mtls: false, automtls: false, cp: false }), smmr('istio-system', ['mesh'])],
    ingress: {
      namespace: 'istio-system',
      serviceAccount: 'istio-ingressgateway-service-account',
      routes: [{ pathPrefix: '/', namespace: 'mesh', service: 'echo', port: 8080, backend: { host: PODS.server, port: 8080 } }],
    },
  });
  const ingress = spawn(
    process.execPath,
    [
      join(ROOT, 'dist', 'daemon', 'mesh-ingress', 'main.js'),
      '--config',
      join(dir, 'ingress.json'),
      '--listen',
      '127.0.0.1:0',
      '--listen-unix',
      join(dir, 'ingress.sock'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } },
  );
  children.push(ingress);
  const ingressPort = JSON.parse(await new Promise<string>((r) => createInterface({ input: ingress.stdout! }).once('line', r)))['port'] as number;
  const url = `http://${PODS.server}:8080/`;
  // wait until both sidecars serve
  for (let i = 0; i < 200 && !agent.supervisor.status().every((s) => s.ready); i++) await new Promise((r) => setTimeout(r, 50));
  const status = agent.supervisor.status();

  const setups: Record<string, KubeObject[]> = {
    PERMISSIVE: [pa('mesh', 'default', 'PERMISSIVE')],
    DISABLE: [pa('mesh', 'default', 'DISABLE'), dr('mesh', 'default', '*', 'DISABLE')],
    STRICT: [pa('mesh', 'default', 'STRICT'), dr('mesh', 'default', 'echo', 'ISTIO_MUTUAL')],
  };
  const table: Record<string, unknown> = {};
  let strictMs = -1;
  if (process.env['STRAIT_TEST_KILL'] === '1') {
    for (const o of setups['STRICT'] ?? []) await store.apply(o);
    for (let i = 0; i < 400 && (await curlIn('client', url)).exit !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    const before = agent.supervisor.status();
    const killed = [...new Set(before.map((s) => s.pid as number))];
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    // while nothing serves the pods, the redirect still holds: refused, never plaintext to the app
    const whileDown = await curlIn('outsider', url);
    const t0 = performance.now();
    for (let i = 0; i < 400; i++) {
      const st = agent.supervisor.status();
      if (st.every((s) => s.ready && !killed.includes(s.pid as number))) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const readyMs = performance.now() - t0;
    const after = agent.supervisor.status();
    const inMesh = await curlIn('client', url);
    const outsider = await curlIn('outsider', url);
    await agent.stop();
    await store.close();
    process.stdout.write(JSON.stringify({ before, after, whileDown, inMesh, outsider, readyMs }));
    return;
  }
  if (process.env['STRAIT_TEST_ROTATION_MS']) {
    const lifetime = Number(process.env['STRAIT_TEST_ROTATION_MS']);
    for (const o of setups['STRICT'] ?? []) await store.apply(o);
    for (let i = 0; i < 400 && (await curlIn('client', url)).exit !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    const scrape = (): { expiry: number; updates: number } => {
      const m = execFileSync('curl', ['-sS', '--max-time', '5', `http://${PODS.server}:15020/metrics`], { encoding: 'utf8' });
      return {
        expiry: Number(/^strait_mesh_certificate_expiry_seconds (\S+)/m.exec(m)?.[1]),
        updates: Number(/^strait_mesh_config_updates_total (\S+)/m.exec(m)?.[1]),
      };
    };
    const first = scrape();
    const curls: number[] = [];
    const end = Date.now() + 2.5 * lifetime;
    while (Date.now() < end) {
      curls.push((await curlIn('client', url)).exit);
      await new Promise((r) => setTimeout(r, 250));
    }
    const last = scrape();
    const pids = [...new Set(agent.supervisor.status().map((s) => s.pid as number))];
    await agent.stop();
    await store.close();
    process.stdout.write(JSON.stringify({ first, last, curls, pids }));
    return;
  }
  if (process.env['STRAIT_TEST_LOOP_PROBE'] === '1') {
    for (const o of setups['PERMISSIVE'] ?? []) await store.apply(o);
    await new Promise((r) => setTimeout(r, 300));
    const before = await curlIn('client', url);
    const probes = {
      inbound: await curlIn('outsider', `http://${PODS.server}:15006/`),
      outbound: await curlIn('outsider', `http://${PODS.server}:15001/`),
      // from inside the pod itself, to its own proxy ports
      ownInbound: await curlIn('server', `http://${PODS.server}:15006/`),
      ownOutbound: await curlIn('server', 'http://127.0.0.1:15001/'),
    };
    await new Promise((r) => setTimeout(r, 500));
    const pids = [...new Set(agent.supervisor.status().map((s) => s.pid as number))];
    const fds = pids.map((pid) => readdirSync(`/proc/${pid}/fd`).length);
    const after = await curlIn('client', url);
    await agent.stop();
    await store.close();
    process.stdout.write(JSON.stringify({ before, probes, fds, after }));
    return;
  }
  for (const [mode, objs] of Object.entries(setups)) {
    await store.delete({ apiVersion: 'networking.istio.io/v1beta1', kind: 'DestinationRule' }, 'default', 'mesh');
    const t0 = performance.now();
    for (const o of objs) await store.apply(o);
    if (mode === 'STRICT') {
      // enforced when the outsider is reset; complete when the in-mesh client also originates mTLS (the rule came in)
      for (let i = 0; i < 400; i++) {
        if ((await curlIn('outsider', url)).exit === 56) {
          strictMs = performance.now() - t0;
          break;
        }
      }
      for (let i = 0; i < 400 && (await curlIn('client', url)).exit !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    } else {
      await new Promise((r) => setTimeout(r, 300));
    }
    table[mode] = {
      inMesh: await curlIn('client', url),
      outsider: await curlIn('outsider', url),
      ingress: await curlHost([`http://127.0.0.1:${ingressPort}/`]),
      ingressUnix: await curlHost(['--unix-socket', join(dir, 'ingress.sock'), 'http://echo.mesh/']),
    };
  }
  const metrics = execFileSync('curl', ['-sS', '--max-time', '5', `http://${PODS.server}:15020/metrics`], { encoding: 'utf8' });
  await agent.stop();
  await store.close();
  process.stdout.write(JSON.stringify({ status, table, strictMs, metrics }));
}

main()
  .catch((err) => {
    process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }));
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGTERM');
  });
