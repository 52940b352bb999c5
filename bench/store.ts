// Store benchmark: write throughput (apply/s) and watch delivery (events/s, latency),
// embedded in-process vs through the store API (server in a child process), with a plain
// better-sqlite3 insert loop (same pragmas: WAL, synchronous=FULL) as the peer, all in one run.
//   node dist/bench/store.js [N] [ROUNDS]     (default 1000 writes per case, 3 rounds)
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectStore, openEmbeddedStore, type KubeObject, type ResourceStore } from '../src/platform/store/index.js';

const N = Number(process.argv[2] ?? 1000);
const ROUNDS = Number(process.argv[3] ?? 3);
const median = (xs: number[]): number => pct(xs, 50);
const CONCURRENCY = 8;
const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'strait-bench-store-'));

const obj = (name: string, i: number): KubeObject => ({
  ...CM,
  metadata: { name, namespace: 'default', labels: { app: 'bench', shard: String(i % 8) } },
  data: { value: `v${i}`, payload: 'x'.repeat(200) },
});

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const fmt = (n: number, d = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function sqlitePeer(round: number): number {
  const db = new Database(join(dir, `peer-${round}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, rv INTEGER, body TEXT) WITHOUT ROWID');
  const ins = db.prepare('INSERT INTO t (k, rv, body) VALUES (?, ?, ?)');
  const t0 = performance.now();
  for (let i = 0; i < N; i++) ins.run(`default/p${i}`, i, JSON.stringify(obj(`p${i}`, i)));
  const ms = performance.now() - t0;
  db.close();
  return (N / ms) * 1000;
}

async function writes(store: ResourceStore, prefix: string, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < N) {
        const i = next++;
        await store.apply(obj(`${prefix}${i}`, i));
      }
    }),
  );
  return (N / (performance.now() - t0)) * 1000;
}

/** Sequential writes with a watcher: latency from issuing the write to the event's arrival; then a burst for events/s. */
async function watchDelivery(writer: ResourceStore, watcher: ResourceStore, prefix: string): Promise<{ p50: number; p99: number; eventsPerSec: number }> {
  const { resourceVersion } = await watcher.list(CM, { namespace: 'watched' });
  const sentAt = new Map<string, number>();
  const lat: number[] = [];
  let got = 0;
  let wake: (() => void) | undefined;
  const w = watcher.watch(CM, { namespace: 'watched', resourceVersion }, (ev) => {
    const t = sentAt.get(ev.object.metadata.name);
    if (t !== undefined) lat.push(performance.now() - t);
    got++;
    wake?.();
  });
  const waitFor = async (n: number) => {
    while (got < n)
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 100);
      });
  };
  const seq = Math.min(N, 300);
  for (let i = 0; i < seq; i++) {
    const name = `${prefix}l${i}`;
    sentAt.set(name, performance.now());
    await writer.apply({ ...obj(name, i), metadata: { name, namespace: 'watched' } });
    await waitFor(i + 1);
  }
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const i = next++;
        await writer.apply({ ...obj(`${prefix}b${i}`, i), metadata: { name: `${prefix}b${i}`, namespace: 'watched' } });
      }
    }),
  );
  await waitFor(seq + N);
  const eventsPerSec = (N / (performance.now() - t0)) * 1000;
  w.stop();
  return { p50: pct(lat, 50), p99: pct(lat, 99), eventsPerSec };
}

async function main(): Promise<void> {
  console.log(
    `strait store benchmark: N=${N} writes per case, ~300-byte ConfigMaps, WAL + synchronous=FULL (an acknowledged write is on disk; concurrent writes share one commit)`,
  );
  // rounds interleave the cases so that a busy neighbour on the machine hits them alike; medians are reported
  const loadAtStart = loadavg()[0]!;
  const peers: number[] = [];
  const embSeqs: number[] = [];
  const embPars: number[] = [];
  const embWatches: { p50: number; p99: number; eventsPerSec: number }[] = [];
  const apiSeqs: number[] = [];
  const apiPars: number[] = [];
  const apiWatches: { p50: number; p99: number; eventsPerSec: number }[] = [];
  const socketPath = join(dir, 'store.sock');
  const server = spawn(process.execPath, [join(root, 'test', 'fixtures', 'store-server.js'), join(dir, 'served'), socketPath, 'bench'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
  const client = connectStore({ socketPath, token: 'bench', cluster: 'cluster-a' });
  const watchClient = connectStore({ socketPath, token: 'bench', cluster: 'cluster-a' });
  try {
    for (let r = 0; r < ROUNDS; r++) {
      peers.push(sqlitePeer(r));
      const embedded = openEmbeddedStore({ dir: join(dir, `embedded-${r}`) });
      embSeqs.push(await writes(embedded, 'e', 1));
      embPars.push(await writes(embedded, 'p', CONCURRENCY));
      embWatches.push(await watchDelivery(embedded, embedded, 'e'));
      await embedded.close();
      apiSeqs.push(await writes(client, `a${r}-`, 1));
      apiPars.push(await writes(client, `c${r}-`, CONCURRENCY));
      apiWatches.push(await watchDelivery(client, watchClient, `w${r}-`));
    }
  } finally {
    await client.close();
    await watchClient.close();
    server.kill('SIGTERM');
  }
  const peer = median(peers);
  const embSeq = median(embSeqs);
  const embPar = median(embPars);
  const apiSeq = median(apiSeqs);
  const apiPar = median(apiPars);
  const mw = (ws: typeof embWatches) => ({
    p50: median(ws.map((w) => w.p50)),
    p99: median(ws.map((w) => w.p99)),
    eventsPerSec: median(ws.map((w) => w.eventsPerSec)),
  });
  const embWatch = mw(embWatches);
  const apiWatch = mw(apiWatches);
  console.log(
    `medians of ${ROUNDS} interleaved rounds (load average at start: ${loadAtStart.toFixed(1)}, at end: ${loadavg()[0]!.toFixed(1)}, on ${availableParallelism()} CPUs)`,
  );

  const rows: [string, string, string][] = [
    ['peer: better-sqlite3 INSERT loop (1 txn/row)', `${fmt(peer)} writes/s`, '1.00x'],
    ['embedded apply, in-process, sequential', `${fmt(embSeq)} apply/s`, `${fmt(embSeq / peer, 2)}x peer`],
    [`embedded apply, in-process, ${CONCURRENCY} in flight (group commit)`, `${fmt(embPar)} apply/s`, `${fmt(embPar / peer, 2)}x peer`],
    ['store API apply, sequential', `${fmt(apiSeq)} apply/s`, `${fmt(apiSeq / peer, 2)}x peer, ${fmt(apiSeq / embSeq, 2)}x embedded`],
    [`store API apply, ${CONCURRENCY} in flight`, `${fmt(apiPar)} apply/s`, `${fmt(apiPar / peer, 2)}x peer, ${fmt(apiPar / embSeq, 2)}x embedded`],
    ['embedded watch: write->event p50 / p99', `${fmt(embWatch.p50, 3)} / ${fmt(embWatch.p99, 3)} ms`, ''],
    ['store API watch: write->event p50 / p99', `${fmt(apiWatch.p50, 3)} / ${fmt(apiWatch.p99, 3)} ms`, `${fmt(apiWatch.p50 / embWatch.p50, 2)}x embedded p50`],
    ['embedded watch delivery (burst)', `${fmt(embWatch.eventsPerSec)} events/s`, ''],
    [
      `store API watch delivery (burst, ${CONCURRENCY} writers)`,
      `${fmt(apiWatch.eventsPerSec)} events/s`,
      `${fmt(apiWatch.eventsPerSec / embWatch.eventsPerSec, 2)}x embedded`,
    ],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  for (const [a, b, c] of rows) console.log(`${a.padEnd(w0 + 3)}${b.padStart(w1)}   ${c}`);
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
