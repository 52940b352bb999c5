// The control module process in local-world mode (docs/gitops.md): it reaches the world's
// stores through the store API (unix socket + token), watches its own cluster
// (cluster-a) and applies to another cluster (https://cluster-b). A fake gpg first on
// the process's PATH proves the controller process never runs gpg.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Application } from '../../../src/gitops/control/index.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import { serveStores, type KubeObject, type ResourceStore } from '../../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { installFakeGpg } from '../../helpers/fake-gpg.js';
import { createGpgWorld, createRepo, type GpgWorld } from '../../helpers/signed-repo.js';
import { waitFor } from '../../helpers/wait.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
let world: GpgWorld;
let dir: string;
let a: ResourceStore;
let b: ResourceStore;
let api: { close(): Promise<void> };
let child: ChildProcess;
let fake: ReturnType<typeof installFakeGpg>;
let stderr = '';

before(async () => {
  world = createGpgWorld();
  const repo = createRepo(world);
  repo.commit({ 'web/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {where: cluster-b}\n' }, 'signed', world.keys.bob);
  repo.commit({ 'web/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {where: unsigned}\n' }, 'unsigned');
  dir = mkdtempSync(join(tmpdir(), 'strait-world-mode-'));
  a = tempEmbeddedStore();
  b = tempEmbeddedStore();
  const socketPath = join(dir, 'store.sock');
  writeFileSync(join(dir, 'store.token'), 'test-token\n', { mode: 0o600 });
  api = await serveStores({
    socketPath,
    token: 'test-token',
    stores: new Map([
      ['cluster-a', a],
      ['cluster-b', b],
    ]),
  });
  const v = `${GROUPS.gitops}/v1alpha1`;
  await a.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: GPG_KEYS_CM, namespace: 'argocd' },
    data: { [world.keys.bob.keyID]: world.keys.bob.armored },
  });
  await a.apply({
    apiVersion: v,
    kind: 'AppProject',
    metadata: { name: 'p', namespace: 'argocd' },
    spec: {
      sourceRepos: ['*'],
      destinations: [{ server: 'https://cluster-b', namespace: 'web' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      signatureKeys: [{ keyID: world.keys.bob.keyID }],
    },
  });
  for (const [name, rev] of [
    ['web', 'HEAD~1'],
    ['web-unsigned', 'main'],
  ] as const) {
    await a.apply({
      apiVersion: v,
      kind: 'Application',
      metadata: { name, namespace: 'argocd' },
      spec: {
        project: 'p',
        source: { repoURL: repo.dir, path: 'web', targetRevision: rev === 'HEAD~1' ? repo.git('rev-parse', 'HEAD~1') : rev },
        destination: { server: 'https://cluster-b', namespace: 'web' },
        syncPolicy: { automated: { prune: true }, syncOptions: ['CreateNamespace=true'] },
      },
    });
  }
  fake = installFakeGpg(dir);
  child = spawn(
    process.execPath,
    [
      join(root, 'dist', 'daemon', 'control', 'main.js'),
      '--state-dir',
      join(dir, 'control'),
      '--store-socket',
      socketPath,
      '--store-token-file',
      join(dir, 'store.token'),
      '--cluster',
      'cluster-a',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--metrics-listen',
      '127.0.0.1:0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } },
  );
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
});

after(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  fake?.restore();
  await api?.close();
  await a?.close();
  await b?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a signed revision lands in cluster-b; the unsigned one is refused; no gpg ran', async () => {
  await waitFor(
    async () => (await b.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'web', 'web'))?.data?.['where'] === 'cluster-b',
    20_000,
    'cluster-b applied',
  ).catch(async (err: Error) => {
    const st = (await a.get<Application>(Kinds.Application, 'web', 'argocd'))?.status;
    throw new Error(`${err.message}; status ${JSON.stringify(st)}; daemon stderr: ${stderr}`);
  });
  assert.ok(await b.get(Kinds.Namespace, 'web'), 'CreateNamespace in cluster-b');
  assert.equal(await a.get(Kinds.ConfigMap, 'web', 'web'), undefined, 'nothing in cluster-a');
  const refused = await waitFor(
    async () => {
      const x = await a.get<Application>(Kinds.Application, 'web-unsigned', 'argocd');
      return x?.status?.sync?.status === 'Sync Error' ? x : undefined;
    },
    20_000,
    'Sync Error',
  );
  assert.equal(refused.status?.operationState?.message, 'Revision is not signed');
  // the objects land before the one status patch at the end of the reconcile: wait for it
  const synced = await waitFor(
    async () => {
      const x = await a.get<Application>(Kinds.Application, 'web', 'argocd');
      return x?.status?.sync?.status === 'Synced' ? x : undefined;
    },
    20_000,
    'Synced',
  );
  assert.equal(synced.status?.sync?.status, 'Synced');
  assert.deepEqual(fake.calls(), [], 'the control module process never ran gpg');
});
