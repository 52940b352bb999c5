// Failures are visible at once in the console's topology (Chromium against the control
// API's port with the console mounted over embedded stores): a tunnel that is down, a
// cluster whose only gateway is passive, a cluster that has not joined, and a join the
// broker refused for a CIDR overlap (the real join's Warning Event).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createConsole } from '../../../src/console/server/index.js';
import { ADMIN_SECRET, startGitOpsService, type GitOpsService } from '../../../src/gitops/control/index.js';
import { deployBroker, joinCluster } from '../../../src/multicluster/control/clusterset/index.js';
import { Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { browserMissing, launchBrowser } from '../../helpers/browser.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';

const shots = process.env['STRAIT_CONSOLE_SCREENSHOTS'];

describe('console topology: failures at once', { skip: browserMissing() }, () => {
  let dir: string;
  let svc: GitOpsService;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  const stores = new Map<string, ResourceStore>();

  const gateway = async (s: ResourceStore, haStatus: string, connections: unknown[], summary: string) => {
    await s.apply({ apiVersion: Kinds.Gateway.apiVersion, kind: 'Gateway', metadata: { name: 'gateway', namespace: 'submariner-operator' } });
    const gw = await s.get<KubeObject>(Kinds.Gateway, 'gateway', 'submariner-operator');
    await s.updateStatus({ ...gw!, status: { node: 'gateway', haStatus, summary, connections } });
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strait-console-problems-'));
    for (const c of ['cluster-a', 'cluster-b', 'cluster-c', 'broker']) stores.set(c, tempEmbeddedStore());
    const broker = stores.get('broker')!;
    const info = await deployBroker(broker, { brokerURL: 'unix:///x.sock#broker', cluster: 'cluster-a', token: 't' });
    const net = (clusterId: string, c: string, s: string) => ({ clusterId, networkPlugin: 'generic', clusterCIDRs: [c], serviceCIDRs: [s] });
    await joinCluster({ broker, local: stores.get('cluster-a')!, info, source: 'b.subm', network: net('cluster-a', '10.1.0.0/16', '100.1.0.0/16') });
    await joinCluster({ broker, local: stores.get('cluster-b')!, info, source: 'b.subm', network: net('cluster-b', '10.2.0.0/16', '100.2.0.0/16') });
    // cluster-c's join is refused: its cluster CIDR overlaps cluster-a's
    await assert.rejects(
      joinCluster({ broker, local: stores.get('cluster-c')!, info, source: 'b.subm', network: net('cluster-c', '10.1.128.0/17', '100.3.0.0/16') }),
    );
    for (const c of ['cluster-a', 'cluster-b', 'cluster-c']) {
      await stores.get(c)!.apply({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'gateway', labels: { 'node-role.kubernetes.io/gateway': '' } } });
    }
    await gateway(
      stores.get('cluster-a')!,
      'active',
      [{ cluster: 'cluster-b', remoteIP: '198.18.2.1', status: 'connecting', statusMessage: 'no handshake answer for 12 s', rttAvg: '' }],
      '1 connection(s) of 1 are not established',
    );
    await gateway(stores.get('cluster-b')!, 'passive', [], 'Lease not confirmed for 900 ms past its deadline: fenced, sending nothing into the tunnel');
    svc = await startGitOpsService({
      store: stores.get('cluster-a')!,
      namespace: 'argocd',
      stateDir: join(dir, 'state'),
      port: 0,
      tls: false,
      mounts: [createConsole({ stores, home: 'cluster-a', namespace: 'argocd' })],
    });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
    for (const s of stores.values()) await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('Problems lists the tunnel down, the passive gateway, the cluster not joined and the refused join; the graph and tables say it in words', async () => {
    const secret = await stores.get('cluster-a')!.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
    const password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
    const page = await browser.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${svc.api.url}/console/`);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    const problems = page.getByTestId('problems');
    await problems.waitFor({ timeout: 15_000 });
    for (const text of [
      'tunnel cluster-a → cluster-b is connecting',
      'cluster-b has no active gateway',
      'gateway cluster-b/gateway is passive',
      'cluster-c has not joined the broker',
      'CIDROverlap: Cluster cluster-c',
    ]) {
      await problems.getByText(text, { exact: false }).first().waitFor({ timeout: 10_000 });
    }
    assert.match(await problems.innerText(), /"10\.1\.128\.0\/17".*"10\.1\.0\.0\/16"/);
    assert.match(await problems.innerText(), /no handshake answer for 12 s/);
    await page
      .getByTestId('tunnels')
      .getByRole('row', { name: /^cluster-a/ })
      .getByText('connecting')
      .waitFor();
    await page
      .getByTestId('clusters')
      .getByRole('row', { name: /^cluster-c/ })
      .getByText('not joined')
      .waitFor();
    if (shots) {
      mkdirSync(shots, { recursive: true });
      await page.waitForTimeout(500);
      await page.screenshot({ path: join(shots, 'topology-problems.png'), fullPage: true });
    }
  });

  test("keyboard only: the skip link, the views' navigation (aria-current) and a labelled form, without a mouse", async () => {
    const secret = await stores.get('cluster-a')!.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
    const password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
    const page = await browser.browser.newPage();
    await page.goto(`${svc.api.url}/console/`);
    await page.getByLabel('Username').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Views' }).waitFor({ timeout: 15_000 });
    // the first Tab reaches the skip link; then the views, in order
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to the view');
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      names.push(String(await page.evaluate('document.activeElement.textContent')));
    }
    assert.deepEqual(names, ['Topology', 'Services', 'Mesh', 'GitOps']);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'GitOps' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'GitOps' }).getAttribute('aria-current'), 'page');
    // the services view's export form is reachable and every control has a name
    await page.goto(`${svc.api.url}/console/#/services`);
    await page.getByRole('form', { name: 'Export a service' }).waitFor();
    for (const label of ['Cluster', 'Service'])
      assert.equal(await page.getByRole('form', { name: 'Export a service' }).getByLabel(label, { exact: true }).count(), 1);
  });
});
