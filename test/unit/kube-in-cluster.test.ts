// A pod's in-cluster configuration read without @kubernetes/client-node (platform/kube-preload/
// in-cluster.ts): taken exactly when client-node's loadFromDefault would take it (no $KUBECONFIG,
// no ~/.kube/config, the service account's token file present), with the same server URL, CA
// file and bearer token; the store's loadKubeConfig takes it when nothing else is given.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { InClusterConfig, inClusterConfig } from '../../src/platform/kube-preload/index.js';
import { loadKubeConfig } from '../../src/platform/store/kubernetes/index.js';

function serviceAccount(): { dir: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), 'strait-sa-'));
  const dir = join(root, 'sa');
  mkdirSync(dir);
  writeFileSync(join(dir, 'token'), 'tok-1');
  writeFileSync(join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n');
  const home = join(root, 'home');
  mkdirSync(home);
  return { dir, home };
}

const env = (home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  HOME: home,
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  ...extra,
});

test('in-cluster: taken only where client-node would take it', () => {
  const { dir, home } = serviceAccount();
  assert.ok(inClusterConfig(env(home), dir) instanceof InClusterConfig);
  assert.equal(inClusterConfig(env(home, { KUBECONFIG: '/some/file' }), dir), undefined, '$KUBECONFIG first');
  assert.equal(inClusterConfig(env(home), join(dir, 'missing')), undefined, 'no token file: not in a pod');
  assert.equal(inClusterConfig({ HOME: home }, dir), undefined, 'no KUBERNETES_SERVICE_HOST');
  mkdirSync(join(home, '.kube'));
  writeFileSync(join(home, '.kube', 'config'), 'apiVersion: v1\n');
  assert.equal(inClusterConfig(env(home), dir), undefined, '~/.kube/config before the service account');
});

test('in-cluster: the server, CA file and bearer token client-node would use', async () => {
  const { dir, home } = serviceAccount();
  const kc = inClusterConfig(env(home), dir);
  assert.ok(kc);
  assert.deepEqual(kc.getCurrentCluster(), { name: 'inCluster', server: 'https://10.96.0.1:443', caFile: join(dir, 'ca.crt'), skipTLSVerify: false });
  assert.equal(kc.getCurrentUser().name, 'inClusterUser');
  const opts: RequestOptions = { headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(opts);
  assert.deepEqual(opts.headers, { Accept: 'application/json', Authorization: 'Bearer tok-1' });
  assert.match(String(opts.ca), /BEGIN CERTIFICATE/);
  // an IPv6 service address in brackets
  assert.equal(inClusterConfig(env(home, { KUBERNETES_SERVICE_HOST: 'fd00::1' }), dir)?.getCurrentCluster().server, 'https://[fd00::1]:443');
  // client-node's plain-HTTP ports (where it refuses to send the token): left to it
  assert.equal(inClusterConfig(env(home, { KUBERNETES_SERVICE_PORT: '8080' }), dir), undefined);
  // a missing CA fails naming the file (never the system's CAs)
  rmSync(join(dir, 'ca.crt'));
  await assert.rejects(new InClusterConfig('10.96.0.1', '443', dir).applyToHTTPSOptions({}), /ca\.crt/);
});

const GIVEN =
  'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n';

test("in-cluster: the store's loadKubeConfig takes it when nothing is given, and client-node's loader otherwise", async () => {
  const { dir, home } = serviceAccount();
  // (the real service-account directory is not on this machine: the default path finds no token)
  const none = await loadKubeConfig({ kubeconfig: GIVEN }, env(home), dir);
  assert.ok(!(none.kc instanceof InClusterConfig), 'a given kubeconfig is client-node’s');
  assert.equal(none.kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
  const inCluster = await loadKubeConfig({}, env(home), dir);
  assert.ok(inCluster.kc instanceof InClusterConfig, 'nothing given, in a pod: in-cluster without client-node');
  assert.equal(inCluster.source, '(in-cluster)');
  // a context asked for is client-node's (the in-cluster configuration has one context only)
  await assert.rejects(loadKubeConfig({ kubeconfig: GIVEN, context: 'other' }, env(home), dir), /no context "other"/);
});
