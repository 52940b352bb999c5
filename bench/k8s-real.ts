// strait in REAL Kubernetes clusters (test/k8s/clusters.sh): cross-cluster pod -> pod throughput
// (iperf3 in pods of the test image, one TCP flow) and RTT (TCP connect time, curl), beside the
// same pod's path to a pod on another node of its own cluster (no strait in it), the resources
// each strait pod uses (the kubelets' stats summary: CPU and working set, sampled while the
// cross-cluster iperf3 runs and idle), and the local world's figure from bench/tunnel.js in the
// same run (ROUNDS=1).
// Opt-in: needs the clusters up with strait deployed as the acceptance test leaves them, e.g.
//   test/k8s/clusters.sh up 2 --strait
//   STRAIT_K8S_REAL=1 STRAIT_K8S_REUSE=1 node --test dist/test/k8s-real/two-clusters.test.js
//   node dist/bench/k8s-real.js [seconds] [--no-world]     (1..10 s per iperf3 run, default 5)
// Without them it prints why and exits 0 (scripts/run-bench.mjs runs every benchmark).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { formatTable } from '../src/platform/cli-kit/index.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const clusters = join(root, 'test', 'k8s', 'clusters.sh');
const state = process.env['STRAIT_K8S_STATE'] ?? '/run/strait-k8s';
const seconds = Math.min(10, Math.max(1, Math.round(Number(process.argv.find((a) => /^[0-9]+$/.test(a)) ?? 5)) || 5));
const ROUNDS = 3;
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

function kubectl(L: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(clusters, ['kubectl', L, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
function must(L: string, ...args: string[]): string {
  const r = kubectl(L, ...args);
  if (r.status !== 0) throw new Error(`kubectl ${L} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function why(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!existsSync(join(state, 'count')))
    return `no real clusters are up (${state}): test/k8s/clusters.sh up 2 --strait, then the acceptance test with STRAIT_K8S_REUSE=1`;
  if (kubectl('a', 'get', 'pod', 'client').status !== 0)
    return "strait is not deployed with the acceptance test's pods (run test/k8s-real/two-clusters.test.ts with STRAIT_K8S_REUSE=1 first)";
  return undefined;
}

/** An iperf3 server pod on `node` of cluster L (the test image), its IP. */
function iperfServer(L: string, name: string, node: string): string {
  if (kubectl(L, 'get', 'pod', name).status !== 0) {
    must(
      L,
      'run',
      name,
      '--image=localhost/strait-test:1',
      '--image-pull-policy=Never',
      `--overrides={"spec":{"nodeName":"${node}"}}`,
      '--command',
      '--',
      'iperf3',
      '-s',
    );
  }
  must(L, 'wait', '--for=condition=Ready', `pod/${name}`, '--timeout=120s');
  return must(L, 'get', 'pod', name, '-o', 'jsonpath={.status.podIP}').trim();
}

function iperf(target: string): number {
  const r = kubectl('a', 'exec', 'client', '--', 'iperf3', '-c', target, '-t', String(seconds), '-J');
  if (r.status !== 0) throw new Error(`iperf3 to ${target}: ${r.stdout.slice(-400)} ${r.stderr}`);
  const j = JSON.parse(r.stdout) as { end: { sum_received: { bits_per_second: number } } };
  return j.end.sum_received.bits_per_second / 1e9;
}

function rttMs(target: string, port: number, n = 15): number {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = kubectl('a', 'exec', 'client', '--', 'curl', '-s', '-o', '/dev/null', '-m', '3', '-w', '%{time_connect}', `http://${target}:${port}/`);
    const t = Number(r.stdout);
    if (r.status === 0 || t > 0) xs.push(t * 1000);
  }
  return median(xs);
}

interface PodStats {
  cluster: string;
  pod: string;
  node: string;
  cpuMilli: number;
  memMiB: number;
}

/** Every strait-system pod's CPU (millicores, the kubelet's recent rate) and working set. */
function straitPods(): PodStats[] {
  const out: PodStats[] = [];
  for (const L of ['a', 'b']) {
    for (const node of [`${L}-gw`, `${L}-wk`]) {
      const r = kubectl(L, 'get', '--raw', `/api/v1/nodes/${node}/proxy/stats/summary`);
      if (r.status !== 0) continue;
      const s = JSON.parse(r.stdout) as {
        pods: { podRef: { name: string; namespace: string }; cpu?: { usageNanoCores?: number }; memory?: { workingSetBytes?: number } }[];
      };
      for (const p of s.pods) {
        if (p.podRef.namespace !== 'strait-system') continue;
        out.push({
          cluster: `cluster-${L}`,
          pod: p.podRef.name.replace(/-[a-z0-9]{5}$|-[a-z0-9]{8,10}-[a-z0-9]{5}$/, ''),
          node,
          cpuMilli: (p.cpu?.usageNanoCores ?? 0) / 1e6,
          memMiB: (p.memory?.workingSetBytes ?? 0) / 2 ** 20,
        });
      }
    }
  }
  return out;
}

async function world(): Promise<string> {
  const bench = join(root, 'dist', 'bench', 'tunnel.js');
  if (!existsSync(bench)) return '(dist/bench/tunnel.js is not built)';
  return await new Promise((resolve) => {
    const p = spawn(process.execPath, [bench, '3'], { env: { ...process.env, ROUNDS: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const t = setTimeout(() => p.kill('SIGKILL'), 10 * 60_000);
    p.on('exit', () => {
      clearTimeout(t);
      resolve(out);
    });
  });
}

async function main(): Promise<void> {
  const skip = why();
  if (skip) {
    console.log(`k8s-real: skipped: ${skip}`);
    return;
  }
  console.log(`k8s-real: ${seconds} s per iperf3 run, ${ROUNDS} rounds; load average ${load()}`);
  const remote = iperfServer('b', 'iperf-b', 'b-wk');
  const local = iperfServer('a', 'iperf-a', 'a-gw');
  const echoIp = must('b', 'get', 'pod', 'echo', '-o', 'jsonpath={.status.podIP}').trim();
  const idle = straitPods();
  const cross: number[] = [];
  const same: number[] = [];
  let busy: PodStats[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // the cross-cluster run samples the strait pods' CPU while it carries the flow
    const sampler = new Promise<PodStats[]>((resolve) => setTimeout(() => resolve(straitPods()), Math.max(1000, seconds * 600)));
    cross.push(iperf(remote));
    busy = await sampler;
    same.push(iperf(local));
    console.log(
      `  round ${r + 1}: a-wk -> b-wk (strait) ${cross.at(-1)!.toFixed(2)} Gbit/s; a-wk -> a-gw (same cluster) ${same.at(-1)!.toFixed(2)} Gbit/s; load ${load()}`,
    );
  }
  const rttCross = rttMs(echoIp, 8080);
  const rttSame = rttMs(local, 5201);
  console.log(
    formatTable(
      ['path', 'Gbit/s (median)', 'TCP connect RTT ms (median)'],
      [
        ['pod a-wk -> pod b-wk, through strait (agent, gateways, tunnel)', median(cross).toFixed(2), rttCross.toFixed(2)],
        ['pod a-wk -> pod a-gw, same cluster (kernel routing)', median(same).toFixed(2), rttSame.toFixed(2)],
        ['ratio strait / same cluster', (median(cross) / median(same)).toFixed(2), (rttCross / rttSame).toFixed(2)],
      ],
    ),
  );
  console.log(
    '\nstrait pods (kubelet stats summary): CPU while the cross-cluster flow ran and before it (the kubelet rate of the last seconds: startup shows in it); working set',
  );
  console.log(
    formatTable(
      ['cluster', 'pod', 'node', 'CPU m (flow)', 'CPU m (before)', 'memory MiB'],
      busy.map((b) => {
        const i = idle.find((x) => x.cluster === b.cluster && x.pod === b.pod && x.node === b.node);
        return [b.cluster, b.pod, b.node, b.cpuMilli.toFixed(0), (i?.cpuMilli ?? 0).toFixed(0), b.memMiB.toFixed(0)];
      }),
    ),
  );
  for (const [L, name] of [
    ['b', 'iperf-b'],
    ['a', 'iperf-a'],
  ] as const)
    kubectl(L, 'delete', 'pod', name, '--wait=false');
  if (!process.argv.includes('--no-world')) {
    console.log(`\nthe local world in the same run (bench/tunnel.js 3, ROUNDS=1; load ${load()}):`);
    console.log((await world()).trim());
  }
  console.log(`\nload average at end: ${load()}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
