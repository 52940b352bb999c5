// Numbers for people: RTTs from Go duration text in one unit with 3 significant digits
// (src/base/units, and the console's copy src/console/web/units.ts held to the same table),
// and tunnel throughput from counter deltas over the counters' own reading times (the
// publisher's CounterRates, the console's rateOf), never over the times records are written
// or a page updates.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { formatMs, formatRtt, parseGoDuration } from '../../src/base/units/index.js';
import { CounterRates, MIN_WINDOW_MS } from '../../src/multicluster/control/clusterset/index.js';
import { root } from '../helpers/world.js';

/** a file of the browser bundle, compiled here (the bundle is not part of the Node build) */
async function webModule<T>(file: string): Promise<T> {
  const src = readFileSync(join(root, 'src', 'console', 'web', file), 'utf8');
  const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  return import(`data:text/javascript;base64,${Buffer.from(js).toString('base64')}`) as Promise<T>;
}

const RTT: { name: string; go: string; ms: number | undefined; shown: string }[] = [
  { name: 'subctl-style milliseconds', go: '3.265366ms', ms: 3.265366, shown: '3.27 ms' },
  { name: 'microseconds (µ)', go: '945µs', ms: 0.945, shown: '0.945 ms' },
  { name: 'microseconds (us)', go: '945us', ms: 0.945, shown: '0.945 ms' },
  { name: 'nanoseconds', go: '12345ns', ms: 0.012345, shown: '0.0123 ms' },
  { name: 'tens of ms', go: '12.5ms', ms: 12.5, shown: '12.5 ms' },
  { name: 'trailing zero kept (3 digits)', go: '3.2ms', ms: 3.2, shown: '3.20 ms' },
  { name: 'hundreds of ms', go: '200.4ms', ms: 200.4, shown: '200 ms' },
  { name: 'seconds in ms', go: '1.234s', ms: 1234, shown: '1234 ms' },
  { name: 'compound', go: '1m2.5s', ms: 62_500, shown: '62500 ms' },
  { name: 'zero', go: '0s', ms: 0, shown: '0 ms' },
  { name: 'bare zero', go: '0', ms: 0, shown: '0 ms' },
  { name: 'not a duration', go: 'n/a', ms: undefined, shown: 'n/a' },
  { name: 'number without unit', go: '12', ms: undefined, shown: '12' },
  { name: 'trailing junk', go: '3msx', ms: undefined, shown: '3msx' },
];

type Units = { parseGoDuration: typeof parseGoDuration; formatRtt: typeof formatRtt; formatMs: typeof formatMs };

for (const [where, load] of [
  ['src/base/units', async (): Promise<Units> => ({ parseGoDuration, formatRtt, formatMs })],
  ['console copy', () => webModule<Units>('units.ts')],
] as const) {
  for (const c of RTT) {
    test(`RTT (${where}): ${c.name}: ${c.go} -> ${c.shown}`, async () => {
      const u = await load();
      const ms = u.parseGoDuration(c.go);
      if (c.ms === undefined) assert.equal(ms, undefined);
      else assert.ok(Math.abs((ms as number) - c.ms) < 1e-9, `${ms}`);
      assert.equal(u.formatRtt(c.go), c.shown);
    });
  }
}

// the publisher: readings every second, a publish every 30 s (the records' refresh)
const RATES: {
  name: string;
  readings: { at: number; tx: number; rx: number; publish?: boolean }[];
  first: boolean[];
  published: ({ txBps: number; rxBps: number } | undefined)[];
}[] = [
  {
    name: 'the first rate is due after one window, then each publish closes a window',
    readings: [
      { at: 0, tx: 0, rx: 0, publish: true },
      { at: 1000, tx: 1000, rx: 500 },
      { at: 1000, tx: 1000, rx: 500, publish: true },
      { at: 31_000, tx: 16_840, rx: 500, publish: true },
    ],
    first: [false, true, true, false],
    published: [undefined, undefined, { txBps: 1000, rxBps: 500 }, { txBps: 528, rxBps: 0 }],
  },
  {
    name: 'a publish sooner than a window keeps the last rate',
    readings: [
      { at: 0, tx: 0, rx: 0 },
      { at: 2000, tx: 2000, rx: 0, publish: true },
      { at: 2300, tx: 9000, rx: 0, publish: true },
    ],
    first: [false, true, false],
    published: [undefined, { txBps: 1000, rxBps: 0 }, { txBps: 1000, rxBps: 0 }],
  },
  {
    name: 'counters that went back (a restarted gateway) start a new window, no negative rate',
    readings: [
      { at: 0, tx: 5000, rx: 0 },
      { at: 2000, tx: 7000, rx: 0, publish: true },
      { at: 3000, tx: 10, rx: 0, publish: true },
      { at: 5000, tx: 2010, rx: 0, publish: true },
    ],
    first: [false, true, false, true],
    published: [undefined, { txBps: 1000, rxBps: 0 }, undefined, { txBps: 1000, rxBps: 0 }],
  },
];
for (const c of RATES) {
  test(`publisher rate: ${c.name}`, () => {
    const r = new CounterRates();
    c.readings.forEach((x, i) => {
      assert.equal(r.observe('cluster-b', x.tx, x.rx, x.at), c.first[i], `reading ${i}: first rate due`);
      const got = x.publish ? r.close('cluster-b', x.tx, x.rx, x.at) : undefined;
      const want = c.published[i];
      assert.deepEqual(got ? { txBps: got.txBps, rxBps: got.rxBps } : undefined, want, `reading ${i}`);
    });
  });
}
test('publisher rate: a window is at least MIN_WINDOW_MS', () => assert.equal(MIN_WINDOW_MS, 1000));

type Rates = {
  rateOf: (c: Record<string, unknown>, prev: { tx: number; rx: number; at: number } | undefined) => { txBps: number; rxBps: number; at: number } | undefined;
};
const T0 = Date.parse('2026-11-27T12:00:00.000Z');
const iso = (ms: number): string => new Date(T0 + ms).toISOString();
const CONSOLE: {
  name: string;
  reading: Record<string, unknown>;
  prev?: { tx: number; rx: number; at: number };
  want: { txBps: number; rxBps: number } | undefined;
}[] = [
  {
    name: 'the publisher\'s rate is shown at once (no "measuring…")',
    reading: { countersAt: iso(0), txBytes: 1, rxBytes: 1, txBps: 528, rxBps: 12 },
    want: { txBps: 528, rxBps: 12 },
  },
  {
    name: "a 30-s counter step over the counters' 30 s, not over the page's update time",
    reading: { countersAt: iso(30_000), txBytes: 15_840, rxBytes: 0 },
    prev: { tx: 0, rx: 0, at: T0 },
    want: { txBps: 528, rxBps: 0 },
  },
  {
    name: 'the same reading again (another field changed) gives no rate',
    reading: { countersAt: iso(0), txBytes: 100, rxBytes: 0 },
    prev: { tx: 100, rx: 0, at: T0 },
    want: undefined,
  },
  { name: 'no reading time, no rate', reading: { txBytes: 100, rxBytes: 0 }, prev: { tx: 0, rx: 0, at: T0 - 30_000 }, want: undefined },
  { name: 'counters that went back give none', reading: { countersAt: iso(5000), txBytes: 10, rxBytes: 0 }, prev: { tx: 100, rx: 0, at: T0 }, want: undefined },
];
for (const c of CONSOLE) {
  test(`console rate: ${c.name}`, async () => {
    const { rateOf } = await webModule<Rates>('rates.ts');
    const r = rateOf(c.reading, c.prev);
    assert.deepEqual(r ? { txBps: r.txBps, rxBps: r.rxBps } : undefined, c.want);
  });
}

const DESTINATIONS: [string, string, string][] = [
  ['*', '*', 'any cluster, any namespace'],
  ['https://kubernetes.default.svc', 'guestbook', 'https://kubernetes.default.svc, namespace guestbook'],
  ['https://cluster-b', '*', 'https://cluster-b, any namespace'],
  ['*', '', 'any cluster, no namespace'],
];
for (const [server, ns, want] of DESTINATIONS) {
  test(`console project destination: ${server} ${ns || '""'} -> ${want}`, async () => {
    const { destinationText } = await webModule<{ destinationText: (s: string, n: string) => string }>('words.ts');
    assert.equal(destinationText(server, ns), want);
  });
}
