// World boot: time from `strait up` to ready, and peak memory summed over every
// process of the world (the owning `strait up`, unshare, the supervisor, workloads),
// against issue 29's goals (the core world ready in < 3 s and < 300 MB PSS, the default world in
// < 4 s), and the CPU time the world's processes used to get there (on 2 cores, ready can be no
// sooner than half of it). Peer in the same run: the bare network of the
// same topology made with one `ip` command per step (netns add, veth, address, route),
// in a private namespace tree, with no processes, store, DNS or service proxy.
// Two worlds are measured (unless --world FILE names one): the full default world (with
// the gateway daemons, node agents and code-hosting server) and its core (tunnels: false,
// githost: false: supervisor, store, DNS, service proxies, echo pods).
//   node dist/bench/world-boot.js [--runs N] [--world FILE]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs as cpuOf, memoryOf, worldPids } from './world-procs.js';
import { buildPlan, DEFAULT_WORLD, loadWorld, type WorldPlan } from '../src/world/supervisor/index.js';

const root = join(new URL('.', import.meta.url).pathname, '..', '..');
const BIN = join(root, 'bin', 'strait.js');
const arg = (name: string, d?: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : d;
};
const RUNS = Number(arg('--runs', '3'));
const WORLD = arg('--world');

interface Run {
  readyMs: number;
  /** CPU time of the world's processes from `strait up` to ready (their reaped children included) */
  cpuMs: number;
  bootMs: number;
  peakRss: number;
  peakPss: number;
  processes: number;
  steady: { name: string; pss: number }[];
}

/** what a process of the world is: its STRAIT_PROC (component name), else its command */
function nameOf(pid: number): string {
  try {
    const proc = readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((e) => e.startsWith('STRAIT_PROC='))
      ?.slice(12);
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (cmd.includes('up') && cmd.some((a) => a.endsWith('strait.js'))) return 'strait up (the owner)';
    if (cmd[0] === 'unshare') return 'unshare';
    if (proc === 'world') return 'world supervisor';
    return proc ?? cmd.slice(0, 2).join(' ');
  } catch {
    return '?';
  }
}

async function oneRun(worldFile: string | undefined): Promise<Run> {
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-bench-'));
  const t0 = performance.now();
  // a session of its own: every world process carries its session id
  const child = spawn(process.execPath, [BIN, 'up', '--state-dir', stateDir, ...(worldFile ? ['--world', worldFile] : [])], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let readyMs = 0;
  let cpuMs = 0;
  let peakRss = 0;
  let peakPss = 0;
  let processes = 0;
  let out = '';
  const sample = (): void => {
    const pids = worldPids(child.pid as number);
    let rss = 0;
    let pss = 0;
    for (const p of pids) {
      const m = memoryOf(p);
      rss += m.rss;
      pss += m.pss;
    }
    if (rss > peakRss) {
      peakRss = rss;
      processes = pids.length;
    }
    peakPss = Math.max(peakPss, pss);
  };
  const sampler = setInterval(sample, 25);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      if (/world ready/.test(out) && !readyMs) {
        readyMs = performance.now() - t0;
        cpuMs = cpuOf(worldPids(child.pid as number), true);
        resolve();
      }
    });
    child.on('exit', (c) => reject(new Error(`strait up exited ${c}: ${out}`)));
  });
  // keep sampling a little after ready: workloads settle
  await new Promise((r) => setTimeout(r, 1000));
  sample();
  clearInterval(sampler);
  const steady = worldPids(child.pid as number)
    .map((p) => ({ name: nameOf(p), pss: memoryOf(p).pss }))
    .sort((a, b) => b.pss - a.pss);
  const bootMs = Number(/ready in (\d+) ms/.exec(out)?.[1] ?? 0);
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.on('exit', r));
  child.kill('SIGTERM');
  await exited;
  rmSync(stateDir, { recursive: true, force: true });
  return { readyMs, cpuMs, bootMs, peakRss, peakPss, processes, steady };
}

/** the same namespaces, veths, bridges, addresses and routes, one `ip` command each */
function bareScript(plan: WorldPlan): string {
  const cmds: string[] = [
    'mount -t tmpfs tmpfs /run/netns',
    'ip link set lo up',
    `ip link add ${plan.internet.bridge} type bridge`,
    `ip link set ${plan.internet.bridge} up`,
  ];
  for (const c of plan.clusters) {
    cmds.push(`ip link add ${c.underlayBridge} type bridge`, `ip link set ${c.underlayBridge} up`, `ip addr add ${c.rootIP}/24 dev ${c.underlayBridge}`);
    for (const n of c.nodes) {
      cmds.push(
        `ip netns add ${n.netns}`,
        `ip link add ${n.rootVeth} type veth peer name eth0 netns ${n.netns}`,
        `ip link set ${n.rootVeth} master ${c.underlayBridge} up`,
        `ip -n ${n.netns} link set lo up`,
        `ip -n ${n.netns} link set eth0 up`,
        `ip -n ${n.netns} addr add ${n.underlayIP}/24 dev eth0`,
        `ip -n ${n.netns} link add cbr0 type bridge`,
        `ip -n ${n.netns} link set cbr0 up`,
        `ip -n ${n.netns} addr add ${n.bridgeIP}/24 dev cbr0`,
      );
      if (n.internetVeth) {
        cmds.push(
          `ip link add ${n.internetVeth} type veth peer name eth1 netns ${n.netns}`,
          `ip link set ${n.internetVeth} master ${plan.internet.bridge} up`,
          `ip -n ${n.netns} link set eth1 up`,
          `ip -n ${n.netns} addr add ${n.publicIP}/16 dev eth1`,
        );
      }
    }
    for (const p of c.pods) {
      const node = c.nodes.find((n) => n.name === p.node);
      cmds.push(
        `ip netns add ${p.netns}`,
        `ip -n ${node?.netns} link add ${p.hostVeth} type veth peer name eth0 netns ${p.netns}`,
        `ip -n ${node?.netns} link set ${p.hostVeth} master cbr0 up`,
        `ip -n ${p.netns} link set lo up`,
        `ip -n ${p.netns} link set eth0 up`,
        `ip -n ${p.netns} addr add ${p.ip}/32 dev eth0`,
        `ip -n ${p.netns} route add ${node?.bridgeIP} dev eth0 scope link`,
        `ip -n ${p.netns} route add default via ${node?.bridgeIP} dev eth0`,
      );
    }
  }
  return cmds.join(' && \\\n');
}

function bareRun(script: string): number {
  const t0 = performance.now();
  const r = spawnSync('unshare', ['--net', '--mount', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bare topology failed: ${r.stderr}`);
  return performance.now() - t0;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const mb = (b: number): string => `${(b / 1e6).toFixed(0)} MB`;
const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

const tmp = mkdtempSync(join(tmpdir(), 'strait-bench-worlds-'));
const coreFile = join(tmp, 'core.json');
writeFileSync(coreFile, JSON.stringify({ ...DEFAULT_WORLD, tunnels: false, githost: false }));
const variants: { label: string; file: string | undefined }[] = WORLD
  ? [{ label: WORLD, file: WORLD }]
  : [
      { label: 'default world (gateways, agents, githost)', file: undefined },
      { label: 'core world (tunnels: false, githost: false)', file: coreFile },
    ];

// issue 29's goals: the core world ready in < 3 s and < 300 MB PSS, the full default world in < 4 s
const isCore = (file: string | undefined): boolean => file === coreFile;
for (const v of variants) {
  const plan = buildPlan(loadWorld(v.file));
  const pods = plan.clusters.reduce((n, c) => n + c.pods.length, 0);
  const nodes = plan.clusters.reduce((n, c) => n + c.nodes.length, 0);
  const runs: Run[] = [];
  const bare: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    runs.push(await oneRun(v.file));
    bare.push(bareRun(bareScript(plan)));
  }
  const ready = median(runs.map((r) => r.readyMs));
  const readyGoal = isCore(v.file) ? 3000 : 4000;
  const rss = Math.max(...runs.map((r) => r.peakRss));
  const pss = Math.max(...runs.map((r) => r.peakPss));
  const bareMs = median(bare);
  console.log(`world boot: ${v.label}: ${plan.clusters.length} clusters, ${nodes} nodes, ${pods} pods; ${RUNS} runs (median time, max memory)`);
  console.log(
    `  strait up -> ready           ${s(ready).padStart(9)}   goal < ${s(readyGoal)}  ${ready < readyGoal ? 'MET' : 'MISSED'}   (runs: ${runs.map((r) => s(r.readyMs)).join(', ')})`,
  );
  const cpu = median(runs.map((r) => r.cpuMs));
  console.log(
    `  CPU of the world's processes ${s(cpu).padStart(9)}   to ready (runs: ${runs.map((r) => s(r.cpuMs)).join(', ')}); on ${availableParallelism()} cores no less than ${s(cpu / availableParallelism())} of ready`,
  );
  console.log(`    of which supervisor boot   ${s(median(runs.map((r) => r.bootMs))).padStart(9)}   (network, nftables, DNS, store, components ready)`);
  console.log(`  peak RSS, all processes      ${mb(rss).padStart(9)}   (${runs[0]?.processes} processes; shared pages counted in each)`);
  console.log(
    `  peak PSS, all processes      ${mb(pss).padStart(9)}   ${isCore(v.file) ? `goal < 300 MB  ${pss < 300e6 ? 'MET' : 'MISSED'}   ` : ''}(shared pages split between processes)`,
  );
  console.log(`  peer: bare ip netns+veth     ${s(bareMs).padStart(9)}   same topology, one ip command per step, no processes`);
  console.log(`  ratio: strait up / bare      ${(ready / bareMs).toFixed(1).padStart(7)}x`);
  const last = runs[runs.length - 1] as Run;
  const total = last.steady.reduce((n, x) => n + x.pss, 0);
  console.log(`  PSS per process, 1 s after ready (last run): ${mb(total)} in ${last.steady.length} processes`);
  for (const p of last.steady) console.log(`    ${mb(p.pss).padStart(7)}  ${p.name}`);
}
rmSync(tmp, { recursive: true, force: true });
console.log(
  `machine: ${availableParallelism()} cores, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} (other work on the machine slows every figure)`,
);
