// The per-connection cost of recording a flow (src/mesh/dataplane/proxy/flows.ts), beside the
// counter increment the sidecar already does per connection, in the same run:
//   counter     metrics.accepted[mode].plaintext++ (what every connection costs already)
//   known       FlowTable.record of a flow already in the table (the steady state: a lookup, integers)
//   new+evict   FlowTable.record of a new client into a full table (a new entry, the oldest evicted)
// For each: ns per call and what the young generation saw (garbage collections and heap growth
// during the loop): the known-flow path must allocate nothing, like the counter.
// Usage: node --expose-gc dist/bench/mesh-flows.js [--calls 2000000] [--limit 256] [--rounds 5]
import { loadavg } from 'node:os';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { FlowTable, ProxyMetrics } from '../src/mesh/dataplane/proxy/index.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000000' }, limit: { type: 'string', default: '256' }, rounds: { type: 'string', default: '5' } },
});
const calls = Math.max(10_000, Math.min(50_000_000, Number(values.calls)));
const limit = Math.max(1, Math.min(1024, Number(values.limit)));
const rounds = Math.max(1, Math.min(15, Number(values.rounds)));
const gc = (globalThis as { gc?: () => void }).gc;

// scavenges only: the forced collection before each loop is a full one
let gcs = 0;
const minor = (e: PerformanceEntry): boolean => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
new PerformanceObserver((list) => {
  gcs += list.getEntries().filter(minor).length;
}).observe({ entryTypes: ['gc'] });

// client addresses and identities as the connection path has them: strings made once, at accept
const addresses = Array.from({ length: 4 * limit }, (_, i) => `10.1.${i >> 8}.${i & 255}`);
const identity = 'spiffe://cluster.local/ns/mesh/sa/client';

interface Result {
  nsPerCall: number;
  gcs: number;
  heapKiB: number;
}

async function measure(fn: (i: number) => void): Promise<Result> {
  gc?.();
  await new Promise((r) => setTimeout(r, 100)); // the observer hears of earlier collections before we start counting
  const g0 = gcs;
  const h0 = process.memoryUsage().heapUsed;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) fn(i);
  const ns = Number(process.hrtime.bigint() - t0);
  const h1 = process.memoryUsage().heapUsed;
  await new Promise((r) => setTimeout(r, 100)); // the observer hears of the loop's collections
  return { nsPerCall: ns / calls, gcs: gcs - g0, heapKiB: (h1 - h0) / 1024 };
}

const metrics = new ProxyMetrics();
const known = new FlowTable(limit);
// fill the table: `limit` clients on one port, so that a lookup scans real chains
for (let i = 0; i < limit; i++) known.record(addresses[i] as string, undefined, 8080, 'plaintext', 'accepted', '', 'PERMISSIVE');
const mtls = new FlowTable(limit);
mtls.record('10.1.0.7', identity, 8080, 'mtls', 'accepted', '', 'PERMISSIVE');
const churn = new FlowTable(limit);

const paths: [string, (i: number) => void][] = [
  [
    'counter',
    () => {
      metrics.accepted.PERMISSIVE.plaintext++;
    },
  ],
  ['known plaintext', (i) => known.record(addresses[i % limit] as string, undefined, 8080, 'plaintext', 'accepted', '', 'PERMISSIVE')],
  ['known mtls', () => mtls.record('10.1.0.7', identity, 8080, 'mtls', 'accepted', '', 'PERMISSIVE')],
  ['new+evict', (i) => churn.record(addresses[i % addresses.length] as string, undefined, 8080, 'plaintext', 'accepted', '', 'PERMISSIVE')],
];

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
console.log(
  `mesh flows bench: ${calls} calls per path and round, table of ${limit}, ${rounds} rounds interleaved; gc ${gc ? 'forced before each loop' : 'NOT exposed (run with --expose-gc)'}; load average ${load()}`,
);
const runs: Record<string, Result[]> = {};
for (let round = 0; round < rounds; round++) {
  const line: string[] = [];
  for (const [name, fn] of paths) {
    const r = await measure(fn);
    (runs[name] ??= []).push(r);
    line.push(`${name} ${r.nsPerCall.toFixed(1)} ns gcs ${r.gcs} heap ${r.heapKiB >= 0 ? '+' : ''}${r.heapKiB.toFixed(0)} KiB`);
  }
  console.log(`round ${round + 1}: ${line.join(' | ')}   (load ${load()})`);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log('');
for (const [name] of paths) {
  const rs = runs[name] as Result[];
  console.log(
    `${name.padEnd(16)} ${med(rs.map((r) => r.nsPerCall))
      .toFixed(1)
      .padStart(
        7,
      )} ns/call   young-generation collections during ${calls} calls: ${rs.map((r) => r.gcs).join(' ')} (per round)   heap growth ${rs.map((r) => r.heapKiB.toFixed(0)).join(' ')} KiB`,
  );
}
const known0 = runs['known plaintext'] as Result[];
console.log(
  `\nknown-flow path allocation-free (no collection in any round): ${known0.every((r) => r.gcs === 0) && (runs['known mtls'] as Result[]).every((r) => r.gcs === 0) ? 'yes' : 'NO'}   (load average ${load()})`,
);
