// Web console benchmark (docs/console.md, Benchmark), in Debian's Chromium (playwright-core):
//   1. first load: a new browser context (empty cache) with a session cookie, from navigation
//      to the first data on screen (the page, its bundle and style sheet, the clusters list
//      and the stream's first lists rendered as the topology tables); and the same page
//      loaded again with a warm cache (304s) beside it;
//   2. store change -> view updated: a ServiceImport written to cluster-a's store until its
//      row is in the services view (stream, live copy, render), beside the floor: the same
//      write seen by a watch of the store itself (what the CLI's client sees);
//   3. the bundle's size against its budget.
// The server is the control module's API server with the console mounted, over embedded
// stores (cluster-a, cluster-b, broker) seeded like a two-cluster world.
// Run: node dist/bench/console.js [--loads 10] [--changes 30]
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createConsole } from '../src/console/server/index.js';
import { ADMIN_SECRET, startGitOpsService } from '../src/gitops/control/index.js';
import { Kinds } from '../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../src/platform/store/index.js';
import { browserMissing, launchBrowser } from '../test/helpers/browser.js';
import { tempEmbeddedStore } from '../test/helpers/embedded-store.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const LOADS = arg('loads', 10);
const CHANGES = arg('changes', 30);
/** the budget of the bundle (app.js): Preact, Cytoscape.js and the views */
export const BUDGET = { rawBytes: 600 * 1024, gzipBytes: 200 * 1024, firstLoadMs: 1500, changeMs: 1000 };

/** runs in the page: resolves with Date.now() when cluster-a's imports table shows the row */
const WAIT_FOR_ROW = `new Promise((resolve) => {
  const found = () => [...document.querySelectorAll('[data-testid="imports-cluster-a"] th')].some((th) => th.textContent === NAME);
  const mo = new MutationObserver(() => { if (found()) { mo.disconnect(); resolve(Date.now()); } });
  mo.observe(document.body, { subtree: true, childList: true, characterData: true });
})`;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};
const fmt = (xs: number[]): string =>
  `median ${quantile(xs, 0.5).toFixed(1)} ms, p90 ${quantile(xs, 0.9).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;

async function seed(stores: Map<string, ResourceStore>): Promise<void> {
  const clusters = ['cluster-a', 'cluster-b'];
  for (const [i, c] of clusters.entries()) {
    const s = stores.get(c)!;
    for (const n of ['gateway', 'worker']) {
      await s.apply({ apiVersion: 'v1', kind: 'Node', metadata: { name: n, labels: { [`node-role.kubernetes.io/${n}`]: '' } } });
    }
    for (let p = 0; p < 20; p++) {
      await s.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `app-${p}`, namespace: `ns-${p % 4}` },
        spec: { nodeName: 'worker', containers: [{ name: 'app', image: 'strait/echo' }] },
      });
    }
    await s.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: 'default' }, spec: { ports: [{ port: 8080 }] } });
    const peer = clusters[1 - i]!;
    await s.apply({ apiVersion: Kinds.Gateway.apiVersion, kind: 'Gateway', metadata: { name: 'gateway', namespace: 'submariner-operator' } });
    const gw = await s.get<KubeObject>(Kinds.Gateway, 'gateway', 'submariner-operator');
    await s.updateStatus({
      ...gw!,
      status: {
        node: 'gateway',
        haStatus: 'active',
        summary: 'All connections (1) are established',
        connections: [
          {
            gateway: 'gateway',
            cluster: peer,
            remoteIP: `198.18.${2 - i}.1`,
            status: 'connected',
            statusMessage: 'connection established',
            rttAvg: '1.2ms',
            txBytes: 0,
            rxBytes: 0,
          },
        ],
      },
    });
    await stores.get('broker')!.apply({
      apiVersion: Kinds.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name: c, namespace: 'submariner-k8s-broker' },
      spec: { cluster_id: c, cluster_cidr: [`10.${i + 1}.0.0/16`], service_cidr: [`100.${i + 1}.0.0/16`] },
    });
  }
}

async function main(): Promise<void> {
  const missing = browserMissing();
  if (missing) {
    console.log(`console bench skipped: ${missing}`);
    return;
  }
  const app = join(root, 'dist', 'console', 'app.js');
  const raw = statSync(app).size;
  const gz = gzipSync(readFileSync(app), { level: 9 }).length;
  const dir = mkdtempSync(join(tmpdir(), 'strait-console-bench-'));
  const stores = new Map<string, ResourceStore>([
    ['cluster-a', tempEmbeddedStore()],
    ['cluster-b', tempEmbeddedStore()],
    ['broker', tempEmbeddedStore()],
  ]);
  const a = stores.get('cluster-a')!;
  await seed(stores);
  const svc = await startGitOpsService({
    store: a,
    namespace: 'argocd',
    stateDir: dir,
    port: 0,
    tls: false,
    mounts: [createConsole({ stores, home: 'cluster-a', namespace: 'argocd' })],
  });
  const browser = await launchBrowser();
  try {
    const secret = await a.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
    const password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
    const login = await fetch(`${svc.api.url}/api/v1/session`, { method: 'POST', body: JSON.stringify({ username: 'admin', password }) });
    const token = ((await login.json()) as { token: string }).token;
    const url = `${svc.api.url}/console/`;
    const cookie = { name: 'argocd.token', value: token, url: svc.api.url };

    // 1. first load, cold (a new context each time) and warm (the same context again)
    const cold: number[] = [];
    const warm: number[] = [];
    let transferred = 0;
    for (let i = 0; i < LOADS; i++) {
      const ctx = await browser.browser.newContext();
      await ctx.addCookies([cookie]);
      const page = await ctx.newPage();
      let bytes = 0;
      page.on('response', (r) => {
        void r.body().then(
          (b) => {
            bytes += b.length;
          },
          () => undefined,
        );
      });
      for (const [k, out] of [
        ['cold', cold],
        ['warm', warm],
      ] as const) {
        const t0 = Date.now();
        await page.goto(url);
        await page
          .getByTestId('tunnels')
          .getByRole('row', { name: /^cluster-a/ })
          .filter({ hasText: 'connected' })
          .waitFor({ timeout: 30_000 });
        out.push(Date.now() - t0);
        if (k === 'cold' && i === 0) transferred = bytes;
      }
      await ctx.close();
    }

    // 2. store change -> view updated, beside the store's own watch
    const ctx = await browser.browser.newContext();
    await ctx.addCookies([cookie]);
    const page = await ctx.newPage();
    await page.goto(`${url}#/services`);
    await page.getByRole('heading', { level: 1, name: 'Services' }).waitFor();
    await page.getByTestId('live-state').filter({ hasText: 'live' }).waitFor();
    const view: number[] = [];
    const watch: number[] = [];
    let seenAt = 0;
    let want = '';
    const w = a.watch(Kinds.ServiceImport, {}, (ev) => {
      if (ev.object.metadata.name === want) seenAt = Date.now();
    });
    for (let i = 0; i < CHANGES; i++) {
      want = `svc-${i}`;
      // the page notes the moment the row appears (the same clock as this process)
      const shown = page.evaluate(WAIT_FOR_ROW.replace('NAME', JSON.stringify(`default/${want}`))) as Promise<number>;
      await page.waitForTimeout(20);
      const t0 = Date.now();
      await a.apply({
        apiVersion: Kinds.ServiceImport.apiVersion,
        kind: 'ServiceImport',
        metadata: { name: want, namespace: 'default' },
        spec: { type: 'ClusterSetIP', ports: [{ port: 80, protocol: 'TCP' }] },
      });
      const t1 = await Promise.race([shown, new Promise<number>((r) => setTimeout(() => r(NaN), 10_000))]);
      view.push(t1 - t0);
      watch.push(seenAt - t0);
    }
    w.stop();
    await ctx.close();

    const load = loadavg()
      .map((x) => x.toFixed(2))
      .join(', ');
    console.log(`load average ${load}; ${LOADS} loads, ${CHANGES} changes`);
    console.log(
      `first load, cold cache (HTML + JS + CSS + first data rendered): ${fmt(cold)}; ${(transferred / 1024).toFixed(0)} KiB of bodies (decoded; the bundle travels gzipped)`,
    );
    console.log(
      `first load, warm cache (304s):                                 ${fmt(warm)}; cold/warm ${(quantile(cold, 0.5) / quantile(warm, 0.5)).toFixed(2)}x`,
    );
    console.log(`store change -> services view updated:                          ${fmt(view)}`);
    console.log(
      `store change -> the store's own watch (the floor):              ${fmt(watch)}; view/watch ${(quantile(view, 0.5) / Math.max(quantile(watch, 0.5), 0.1)).toFixed(1)}x`,
    );
    const verdict = (ok: boolean) => (ok ? 'within budget' : 'OVER BUDGET');
    console.log(
      `bundle app.js: ${(raw / 1024).toFixed(1)} KiB (budget ${BUDGET.rawBytes / 1024} KiB: ${verdict(raw <= BUDGET.rawBytes)}), ` +
        `${(gz / 1024).toFixed(1)} KiB gzipped as served (budget ${BUDGET.gzipBytes / 1024} KiB: ${verdict(gz <= BUDGET.gzipBytes)})`,
    );
    console.log(
      `first load median ${quantile(cold, 0.5).toFixed(0)} ms (budget ${BUDGET.firstLoadMs} ms: ${verdict(quantile(cold, 0.5) <= BUDGET.firstLoadMs)}); ` +
        `change median ${quantile(view, 0.5).toFixed(0)} ms (budget ${BUDGET.changeMs} ms: ${verdict(quantile(view, 0.5) <= BUDGET.changeMs)})`,
    );
  } finally {
    await browser.close();
    await svc.close();
    for (const s of stores.values()) await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
