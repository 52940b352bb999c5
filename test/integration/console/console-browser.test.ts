// The web console in a real browser (Debian's Chromium, headless, driven by playwright-core)
// against a running local world (`strait up`): log in (a wrong password is refused), both
// clusters and a connected tunnel, an export in cluster-b seen in cluster-a's services
// within 2 s, an unexport from the console, a sync of an unsigned revision refused with
// `Revision is not signed`, and the mesh view. STRAIT_CONSOLE_SCREENSHOTS=DIR saves a
// screenshot of each view there (docs/console holds the ones the README shows).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import { connectStoreFromFiles, type ResourceStore } from '../../../src/platform/store/index.js';
import { browserMissing, launchBrowser } from '../../helpers/browser.js';
import { strait, upWorld, type TestWorld } from '../../helpers/world.js';

const missing = browserMissing() ?? (process.getuid?.() === 0 ? undefined : 'the local world needs root here');
const shots = process.env['STRAIT_CONSOLE_SCREENSHOTS'];

describe('web console in Chromium against a running world', { skip: missing }, () => {
  let world: TestWorld;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let url: string;
  let password: string;
  let storeA: ResourceStore;
  let repoDir: string;

  const shot = async (name: string) => {
    if (!shots) return;
    mkdirSync(shots, { recursive: true });
    await page.waitForTimeout(600); // the graph settles and a throughput reading arrives
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  };
  const view = async (name: string) => {
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
  };

  before(async () => {
    world = upWorld();
    const rec = world.record() as unknown as { console?: string };
    assert.ok(rec.console, 'strait status -o json reports the console URL');
    url = rec.console;
    password = readFileSync(join(world.stateDir, 'control', 'initial-admin-password'), 'utf8').trim();
    storeA = connectStoreFromFiles({ socketPath: join(world.stateDir, 'store.sock'), tokenFile: join(world.stateDir, 'store.token'), cluster: 'cluster-a' });
    browser = await launchBrowser();
    page = await browser.browser.newPage({ viewport: { width: 1280, height: 900 } });
  });

  after(async () => {
    await browser?.close();
    await storeA?.close();
    world?.cleanup();
    if (repoDir) rmSync(repoDir, { recursive: true, force: true });
  });

  test('`strait console` prints the URL that `strait status -o json` reports', () => {
    const r = strait(['console', '--state-dir', world.stateDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), url);
    const st = strait(['status', '-o', 'json', '--state-dir', world.stateDir]);
    assert.equal(JSON.parse(st.stdout).console, url);
  });

  test('a wrong password is refused; the admin password logs in', async () => {
    await page.goto(url);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill(`${password}-wrong`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid username or password' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.getByRole('navigation', { name: 'Views' }).count(), 0);
    if (shots) await shot('login');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation', { name: 'Views' }).waitFor({ timeout: 10_000 });
    await page.getByTestId('live-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
  });

  test('topology: both clusters, joined, and a connected tunnel each way', async () => {
    await view('Topology');
    const clusters = page.getByTestId('clusters');
    await clusters
      .getByRole('row', { name: /cluster-a/ })
      .filter({ hasText: 'joined' })
      .waitFor({ timeout: 15_000 });
    await clusters
      .getByRole('row', { name: /cluster-b/ })
      .filter({ hasText: 'joined' })
      .waitFor();
    const tunnels = page.getByTestId('tunnels');
    for (const [from, to] of [
      ['cluster-a', 'cluster-b'],
      ['cluster-b', 'cluster-a'],
    ]) {
      await tunnels
        .getByRole('row', { name: new RegExp(`^${from}`) })
        .filter({ hasText: to })
        .filter({ hasText: 'connected' })
        .waitFor({ timeout: 15_000 });
    }
    await page.getByTestId('no-problems').waitFor();
    await shot('topology');
  });

  test("services: an export in cluster-b shows in cluster-a's services within 2 s; unexport from the console removes it", async () => {
    await view('Services');
    const imports = page.getByTestId('imports-cluster-a');
    assert.equal(await imports.getByText('default/echo').count(), 0);
    const r = strait(['export', 'service', 'echo', '--cluster', 'cluster-b', '--state-dir', world.stateDir]);
    assert.equal(r.status, 0, r.stderr);
    const t0 = Date.now();
    await page
      .getByTestId('imports-cluster-a')
      .getByRole('row', { name: /default\/echo/ })
      .filter({ hasText: 'cluster-b' })
      .waitFor({ timeout: 10_000 });
    const ms = Date.now() - t0;
    console.log(`# export in cluster-b → visible in cluster-a's services view: ${ms} ms`);
    assert.ok(ms <= 2000, `the import showed after ${ms} ms`);
    const row = page.getByTestId('clusterset-services').getByRole('row', { name: /default\/echo/ });
    await row.getByText('Valid=True').waitFor();
    await row.getByText('echo.default.svc.clusterset.local', { exact: true }).waitFor();
    await shot('services');
    await row.getByRole('button', { name: 'Unexport default/echo from cluster-b' }).click();
    await page
      .getByTestId('imports-cluster-a')
      .getByRole('row', { name: /default\/echo/ })
      .waitFor({ state: 'detached', timeout: 10_000 });
  });

  test('gitops: syncing an unsigned revision of a project that enforces signatures shows `Revision is not signed`', async () => {
    repoDir = mkdtempSync(join(tmpdir(), 'strait-console-repo-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repoDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    git('init', '-q', '-b', 'main');
    mkdirSync(join(repoDir, 'web'));
    writeFileSync(join(repoDir, 'web', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {from: console-test}\n');
    git('add', '-A');
    git('-c', 'user.name=Tester', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'unsigned');
    const v = `${GROUPS.gitops}/v1alpha1`;
    await storeA.apply({
      apiVersion: v,
      kind: 'AppProject',
      metadata: { name: 'signed-only', namespace: 'argocd' },
      spec: {
        sourceRepos: ['*'],
        destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'web' }],
        clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
        signatureKeys: [{ keyID: '4AEE18F83AFDEB23' }],
      },
    });
    await storeA.apply({
      apiVersion: v,
      kind: 'Application',
      metadata: { name: 'web', namespace: 'argocd' },
      spec: {
        project: 'signed-only',
        source: { repoURL: repoDir, path: 'web', targetRevision: 'main' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
        syncPolicy: { syncOptions: ['CreateNamespace=true'] },
      },
    });
    await view('GitOps');
    const card = page.getByTestId('app-web');
    await card.waitFor({ timeout: 10_000 });
    await card.getByRole('button', { name: 'Sync application web' }).click();
    await page.getByTestId('signature-web').filter({ hasText: 'Revision is not signed' }).waitFor({ timeout: 20_000 });
    assert.match(await page.getByTestId('signature-web').innerText(), /refused/);
    assert.equal(await storeA.get(Kinds.ConfigMap, 'web', 'web'), undefined, 'nothing of the unsigned revision was applied');
    await page
      .getByTestId('projects')
      .getByRole('row', { name: /signed-only/ })
      .getByText('4AEE18F83AFDEB23')
      .waitFor();
    await shot('gitops');
  });

  test('mesh: mode and why per workload; the out-of-mesh client is what STRICT would reset, and is reset once STRICT is applied', async () => {
    await view('Mesh');
    await page
      .getByTestId('workloads-cluster-a-mesh')
      .getByRole('row', { name: /outsider/ })
      .getByText('no sidecar', { exact: false })
      .waitFor({ timeout: 10_000 });
    // the sidecars' observed traffic (MeshTrafficObservation): a plaintext client outside the mesh
    // in-mesh clients originate mTLS to the mesh namespace (auto mTLS is off in the world's control plane)
    await storeA.apply({
      apiVersion: Kinds.DestinationRule.apiVersion,
      kind: 'DestinationRule',
      metadata: { name: 'default', namespace: 'mesh' },
      spec: { host: '*.mesh.svc.cluster.local', trafficPolicy: { tls: { mode: 'ISTIO_MUTUAL' } } },
    });
    // both clients reach echo (the in-mesh client once its sidecar has its certificate), a bounded number of tries
    const reach = async (pod: string): Promise<boolean> => {
      for (let i = 0; i < 30; i++) {
        const r = world.exec(`cluster-a/mesh/${pod}`, [
          'curl',
          '-s',
          '-m',
          '5',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          'http://echo.mesh.svc.cluster.local:8080/',
        ]);
        if (r.stdout.trim() === '200') return true;
        await new Promise((ok) => setTimeout(ok, 500));
      }
      return false;
    };
    assert.ok((await reach('outsider')) && (await reach('client')), 'both clients reach echo');
    const flagged = page.getByTestId('strict-would-break').getByRole('row', { name: /echo/ }).filter({ hasText: 'outsider' });
    await flagged.waitFor({ timeout: 10_000 });
    // the in-mesh client: mTLS, with its SPIFFE identity, and not on the STRICT list
    await page
      .getByTestId('flows-cluster-a-mesh')
      .getByRole('row', { name: /^spiffe:\/\/[^ ]*\/ns\/mesh\/sa\/[^ ]* → echo/ })
      .filter({ hasText: 'mtls' })
      .waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId('strict-would-break').getByRole('row').filter({ hasText: 'mtls' }).count(), 0);
    assert.equal(
      await page
        .getByTestId('strict-would-break')
        .getByRole('row', { name: /mesh\/client/ })
        .count(),
      0,
      'the in-mesh client is not on the STRICT list',
    );
    await shot('mesh');
    const form = page.getByRole('form', { name: 'PeerAuthentication mode of cluster-a/mesh' });
    await form.getByLabel('Namespace-wide mode').selectOption('STRICT');
    await form.getByRole('button', { name: /Apply mode STRICT/ }).click();
    world.exec('cluster-a/mesh/outsider', ['curl', '-s', '-m', '5', '-o', '/dev/null', 'http://echo.mesh.svc.cluster.local:8080/']);
    await page
      .getByTestId('flows-cluster-a-mesh')
      .getByRole('row', { name: /outsider/ })
      .filter({ hasText: 'reset by STRICT' })
      .waitFor({ timeout: 15_000 });
    await shot('mesh-strict');
  });
});
