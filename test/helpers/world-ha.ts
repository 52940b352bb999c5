// Helpers for tests and benchmarks that break things inside a running world: the world
// file with two gateway nodes, the host pid of a component (by its config file, which is
// unique to the state dir), continuous probes from a pod (async: the prober runs while
// the test kills something), the gateway lease holder.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, root, strait } from './world.js';

/**
 * Two clusters: cluster-a's client pod on its worker, cluster-b's echo on its worker; cluster-a
 * with a second gateway node when `haGateway` (HA), echo behind a Service when `echoService`.
 */
export function twoClusterWorld(o: { haGateway: boolean; echoService: boolean }): string {
  return `githost: false
mesh: false
clusters:
  - name: cluster-a
    clusterCIDR: 10.1.0.0/16
    serviceCIDR: 100.1.0.0/16
    nodes:
      - { name: gateway, role: gateway }
${o.haGateway ? '      - { name: gateway-2, role: gateway }\n' : ''}      - { name: worker, role: worker }
    workloads:
      - namespace: default
        pods: [{ name: client, image: strait/idle, node: worker }]
  - name: cluster-b
    clusterCIDR: 10.2.0.0/16
    serviceCIDR: 100.2.0.0/16
    nodes:
      - { name: gateway, role: gateway }
      - { name: worker, role: worker }
    workloads:
      - namespace: default
        deployments: [{ name: echo, image: strait/echo, replicas: 1, port: 8080, node: worker }]
${o.echoService ? '        services: [{ name: echo, ports: [{ name: http, port: 8080 }] }]\n' : ''}`;
}

/** cluster-a with two gateway nodes (HA), cluster-b with one; echo on cluster-b's worker, the client on cluster-a's worker */
export const HA_WORLD = twoClusterWorld({ haGateway: true, echoService: true });

export function writeHaWorld(dir: string): string {
  const file = join(dir, 'ha-world.yaml');
  writeFileSync(file, HA_WORLD);
  return file;
}

/** host pids of processes whose command line contains `needle` (e.g. a component's config file path) */
export function pidsByCommandLine(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(needle) && !cmd.includes('/proc/')) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** the gateway daemon process of a cluster's gateway node */
export function gatewayPid(stateDir: string, cluster: string, node: string, firstNode = 'gateway'): number | undefined {
  const file = join(stateDir, 'tunnel', node === firstNode ? `${cluster}.gateway.json` : `${cluster}.${node}.gateway.json`);
  return pidsByCommandLine(`--config ${file}`)[0];
}

export function leaseHolder(stateDir: string, cluster: string): { holder: string; transitions: number } | undefined {
  const r = strait(['get', 'lease', 'strait-gateway', '-n', 'submariner-operator', '--cluster', cluster, '--state-dir', stateDir, '-o', 'json']);
  if (r.status !== 0) return undefined;
  const l = JSON.parse(r.stdout) as { spec?: { holderIdentity?: string; leaseTransitions?: number } };
  return { holder: l.spec?.holderIdentity ?? '', transitions: l.spec?.leaseTransitions ?? 0 };
}

export interface ProbeResult {
  ok: number;
  failed: number;
  maxGapMs: number;
  gapAtMs: number;
  firstOkMs: number;
  last: string;
}

/** Start HTTP probes from a pod (fresh TCP connection every `intervalMs`); resolves with the prober's summary. */
export function probeFromPod(
  stateDir: string,
  pod: string,
  url: string,
  intervalMs: number,
  durationMs: number,
): { started: Promise<void>; done: Promise<ProbeResult> } {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'exec',
      '--state-dir',
      stateDir,
      pod,
      '--',
      process.execPath,
      join(root, 'test', 'fixtures', 'http-prober.mjs'),
      url,
      String(intervalMs),
      String(durationMs),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const done = new Promise<ProbeResult>((resolve, reject) => {
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as ProbeResult);
      } catch {
        reject(new Error(`prober exited ${code}: ${out}${err}`));
      }
    });
  });
  // the prober prints "probing" once it runs inside the pod (starting `strait exec` and
  // node takes a while on a busy machine)
  const started = new Promise<void>((resolve) => {
    const onData = (): void => {
      if (out.includes('probing')) {
        child.stdout.off('data', onData);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.on('close', () => resolve());
  });
  return { started, done };
}

/** GET a URL from inside the world root network namespace (gateways' /records and /metrics) */
export function curlInWorld(supervisorPid: number, url: string): string {
  return spawnSync('nsenter', ['-t', String(supervisorPid), '-n', 'curl', '-sf', '-m', '3', url], { encoding: 'utf8' }).stdout;
}
