// clusterset.local DNS benchmark (docs/multicluster.md, Benchmark):
//   1. A-query throughput with dnsperf against strait's clusterset DNS and against CoreDNS
//      (built from the Go module proxy by scripts/build-coredns.sh into a cache dir outside
//      the repo), both serving the same records (CoreDNS from a zone file), same run; then
//      both at an offered rate of half CoreDNS's saturated rate (dnsperf -Q), with every
//      answer's latency (dnsperf -v): p50/p99/max.
//   2. export -> answer latency: a ServiceExport created in cluster-b until cluster-a's DNS
//      answers the name (controllers + broker + zone feed + server in one process), on the
//      durable embedded store and on in-memory stores, with the cost of one commit beside it.
// Run: node dist/bench/dns.js [--seconds 10] [--services 200]
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Packet } from 'dns2';
import { ClustersetZone, startClustersetDns, ZoneSource, type ZoneService } from '../src/multicluster/control/clusterset-dns/index.js';
import { MC_KINDS as K, MulticlusterAgent } from '../src/multicluster/control/clusterset/index.js';
import { MemoryStore } from '../test/helpers/memory-store.js';
import { newTestStore } from '../test/support/stores.js';
import { freeUdpPort } from '../test/helpers/free-port.js';
import { dnsQuery } from '../test/helpers/dns-query.js';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SECONDS = arg('seconds', 10);
const SERVICES = arg('services', 200);
const LAT_RUNS = arg('latency-runs', 200);

function ipOf(i: number): string {
  return `100.2.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

async function dnsperf(port: number, queryFile: string): Promise<{ qps: number; lost: number; avgLatencyMs: number }> {
  const { stdout } = await run('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(SECONDS), '-c', '8', '-q', '200'], {
    maxBuffer: 1 << 24,
  });
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(stdout)?.[1] ?? NaN);
  const avg = Number(/Average Latency \(s\):\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN) * 1000;
  return { qps, lost, avgLatencyMs: avg };
}

/** an offered rate (dnsperf -Q, 8 clients): every answer's latency from `-v`, p50/p99/max in ms and the answered count */
async function dnsperfPaced(port: number, queryFile: string, qps: number): Promise<{ p50: number; p99: number; max: number; answered: number; lost: number }> {
  // the per-answer lines go to a file, not through this process (which serves the DNS under test)
  const out = join(dirname(queryFile), 'paced.txt');
  const fd = openSync(out, 'w');
  try {
    const child = spawn(
      'dnsperf',
      ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(SECONDS), '-c', '8', '-Q', String(Math.round(qps)), '-v'],
      {
        stdio: ['ignore', fd, 'ignore'],
      },
    );
    await new Promise((resolve) => child.on('exit', resolve));
  } finally {
    closeSync(fd);
  }
  const stdout = readFileSync(out, 'utf8');
  const lat: number[] = [];
  for (const m of stdout.matchAll(/^> NOERROR \S+ A ([\d.]+)$/gm)) lat.push(Number(m[1]) * 1000);
  lat.sort((a, b) => a - b);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(stdout)?.[1] ?? NaN);
  return { p50: pctOf(lat, 50), p99: pctOf(lat, 99), max: lat[lat.length - 1] ?? NaN, answered: lat.length, lost };
}

async function waitForDns(port: number, name: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+short', '+time=1', '+tries=1', name]);
      if (stdout.trim()) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`DNS on port ${port} never answered ${name}`);
}

async function throughput(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'strait-bench-dns-'));
  try {
    const zone = new ClustersetZone('cluster-a');
    const lines: string[] = [];
    const zoneFile = [
      '$ORIGIN clusterset.local.',
      '$TTL 5',
      '@ IN SOA ns.dns.clusterset.local. hostmaster.clusterset.local. 1 7200 1800 86400 5',
      '@ IN NS ns.dns.clusterset.local.',
      'ns.dns IN A 127.0.0.1',
    ];
    for (let i = 0; i < SERVICES; i++) {
      const svc = {
        namespace: 'default',
        name: `svc-${i}`,
        headless: false,
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        clusters: new Map([['cluster-b', { ports: [], endpoints: [{ ip: ipOf(i), ready: true }] }]]),
      } as unknown as ZoneService;
      zone.upsert(svc);
      zoneFile.push(`svc-${i}.default.svc IN A ${ipOf(i)}`, `cluster-b.svc-${i}.default.svc IN A ${ipOf(i)}`);
      lines.push(`svc-${i}.default.svc.clusterset.local A`);
    }
    writeFileSync(join(dir, 'queries.txt'), lines.join('\n') + '\n');
    writeFileSync(join(dir, 'clusterset.local.db'), zoneFile.join('\n') + '\n');

    const dns = await startClustersetDns({ zone, port: 0, rateLimit: { qps: 1e9, burst: 1e9 } });
    const f = (n: number) => n.toFixed(0);
    const queries = join(dir, 'queries.txt');
    const loadBefore = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    let child: ReturnType<typeof spawn> | undefined;
    try {
      const ours = await dnsperf(dns.port, queries);
      console.log(`clusterset.local A queries, dnsperf ${SECONDS} s, 8 clients, ${SERVICES} names (qps = answered queries per second):`);
      console.log(`  strait (1 thread)         ${f(ours.qps)} qps   lost ${ours.lost}   avg latency ${ours.avgLatencyMs.toFixed(3)} ms`);

      let theirs: { qps: number; lost: number; avgLatencyMs: number } | undefined;
      let theirPort = 0;
      const built = process.argv.includes('--no-coredns')
        ? { status: 1, stdout: '', stderr: 'skipped (--no-coredns)' }
        : spawnSync(join(root, 'scripts', 'build-coredns.sh'), { encoding: 'utf8' });
      const corednsBin = built.status === 0 ? built.stdout.trim() : undefined;
      if (corednsBin) {
        theirPort = await freeUdpPort();
        writeFileSync(join(dir, 'Corefile'), `clusterset.local:${theirPort} {\n  bind 127.0.0.1\n  file ${join(dir, 'clusterset.local.db')}\n}\n`);
        child = spawn(corednsBin, ['-conf', join(dir, 'Corefile')], { stdio: 'ignore' });
        await waitForDns(theirPort, 'svc-0.default.svc.clusterset.local');
        theirs = await dnsperf(theirPort, queries);
        console.log(`  CoreDNS (file plugin)     ${f(theirs.qps)} qps   lost ${theirs.lost}   avg latency ${theirs.avgLatencyMs.toFixed(3)} ms`);
        const ratio = ours.qps / theirs.qps;
        console.log(`  strait/CoreDNS            ${ratio.toFixed(2)}x   (goal >= 3x: ${ratio >= 3 ? 'met' : 'not met'})`);
      } else {
        console.log(`CoreDNS could not be built (scripts/build-coredns.sh): ${built.stderr.trim().split('\n').pop()}`);
      }
      // latency at an offered rate: half CoreDNS's saturated rate (half strait's without CoreDNS)
      const offered = (theirs ?? ours).qps / 2;
      const paced = await dnsperfPaced(dns.port, queries, offered);
      console.log(`offered ${f(offered)} qps (half ${theirs ? "CoreDNS's" : "strait's"} saturated rate), every answer's latency (dnsperf -v), ${SECONDS} s:`);
      const line = (who: string, r: Awaited<ReturnType<typeof dnsperfPaced>>) =>
        `  ${who.padEnd(24)}  p50 ${r.p50.toFixed(3)} ms   p99 ${r.p99.toFixed(3)} ms   max ${r.max.toFixed(3)} ms   answered ${r.answered}   lost ${r.lost}`;
      console.log(`${line('strait', paced)}   (goal p99 < 1 ms: ${paced.p99 < 1 ? 'met' : 'not met'})`);
      if (theirs) console.log(line('CoreDNS', await dnsperfPaced(theirPort, queries, offered)));
      console.log(
        `  load average ${loadBefore} -> ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
    } finally {
      child?.kill('SIGTERM');
      await dns.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function queryOnce(sock: ReturnType<typeof createSocket>, port: number, name: string, id: number): Promise<string | undefined> {
  const q = dnsQuery(name, 1, { id, rd: false });
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      sock.off('message', on);
      resolve(undefined);
    }, 200);
    const on = (msg: Buffer) => {
      if (msg.readUInt16BE(0) !== id) return;
      clearTimeout(t);
      sock.off('message', on);
      const r = Packet.parse(msg);
      resolve((r.answers[0] as { address?: string } | undefined)?.address);
    };
    sock.on('message', on);
    sock.send(q, port, '127.0.0.1');
  });
}

/** nearest-rank percentile of a sorted sample (p99 of 200 samples is the 198th) */
const pctOf = (sorted: number[], p: number): number => sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;

/**
 * Export -> answer latency on one kind of store: the ServiceExport write in cluster-b until
 * cluster-a's DNS server answers the name. Each sample starts from a quiet system (both
 * agents idle): it is the latency of one export, not of a queue of them.
 */
async function exportLatency(durable: boolean): Promise<number[]> {
  const mk = () => (durable ? newTestStore() : new MemoryStore());
  const broker = mk();
  const a = mk();
  const b = mk();
  const agents = [new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker }), new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker })];
  agents.forEach((x) => x.start());
  const zone = new ClustersetZone('cluster-a');
  const source = new ZoneSource(a, zone);
  source.start();
  const dns = await startClustersetDns({ zone, port: 0, rateLimit: { qps: 1e9, burst: 1e9 } });
  const sock = createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const samples: number[] = [];
  let id = 1;
  try {
    // one export first, not counted: the broker and the clusters' namespaces are created by it
    for (let i = -1; i < LAT_RUNS; i++) {
      const name = i < 0 ? 'warm-up' : `lat-${i}`;
      const ip = ipOf(i + 1);
      await b.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'default' },
        spec: { type: 'ClusterIP', clusterIP: ip, ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] },
      });
      await Promise.all(agents.map((x) => x.idle()));
      await new Promise((r) => setTimeout(r, 10));
      const t0 = performance.now();
      await b.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name, namespace: 'default' } });
      for (;;) {
        const ans = await queryOnce(sock, dns.port, `${name}.default.svc.clusterset.local`, (id = (id + 1) & 0xffff));
        if (ans === ip) break;
        if (performance.now() - t0 > 5000) throw new Error(`no answer for ${name} after 5 s`);
        await new Promise((r) => setImmediate(r));
      }
      if (i >= 0) samples.push(performance.now() - t0);
    }
  } finally {
    sock.close();
    await dns.close();
    source.stop();
    for (const x of agents) await x.stop();
    await Promise.all([broker.close(), a.close(), b.close()]);
  }
  return samples.sort((x, y) => x - y);
}

/** One durable write on a quiet embedded store (a commit = one fsync), the floor of each hop. */
async function commitTime(): Promise<number[]> {
  const s = newTestStore();
  const out: number[] = [];
  try {
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      await s.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'default' }, data: { i: String(i) } });
      out.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    await s.close();
  }
  return out.sort((x, y) => x - y);
}

async function latency(): Promise<void> {
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`export -> answer in the other cluster (${LAT_RUNS} exports each; controllers, broker, zone feed and DNS server in one process):`);
  const loadBefore = load();
  const durable = await exportLatency(true);
  const commits = await commitTime();
  const memory = await exportLatency(false);
  const f = (x: number) => x.toFixed(2).padStart(7);
  console.log(
    `  embedded stores (durable, synchronous=FULL)  p50 ${f(pctOf(durable, 50))} ms   p99 ${f(pctOf(durable, 99))} ms   max ${f(durable[durable.length - 1]!)} ms   (goal p99 < 100 ms)`,
  );
  console.log(
    `  in-memory stores (controller cost only)      p50 ${f(pctOf(memory, 50))} ms   p99 ${f(pctOf(memory, 99))} ms   max ${f(memory[memory.length - 1]!)} ms`,
  );
  console.log(
    `  one durable commit (fsync) on its own        p50 ${f(pctOf(commits, 50))} ms   p99 ${f(pctOf(commits, 99))} ms   (the path has 3: the export, the broker slice, the imported slice)`,
  );
  console.log(`  ratio durable/in-memory p50 ${(pctOf(durable, 50) / pctOf(memory, 50)).toFixed(1)}x; load average ${loadBefore} -> ${load()}`);
}

if (!process.argv.includes('--no-throughput')) await throughput();
await latency();
process.exit(0);
