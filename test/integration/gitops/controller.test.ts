// Signed-commit enforcement and sync (docs/gitops.md), end to end with real git and gpg.
// Keys are made by gpg, commits by `git commit -S`; the controller verifies in process
// and a fake gpg first on PATH proves it never runs gpg.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { createGitOpsMetrics, GitOpsController, type Application, type AppProject } from '../../../src/gitops/control/index.js';
import { run } from '../../helpers/run.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { installFakeGpg } from '../../helpers/fake-gpg.js';
import { listEvents } from '../../helpers/events.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../../helpers/signed-repo.js';
import { waitFor } from '../../helpers/wait.js';

const NS = 'argocd';
const API = `${GROUPS.gitops}/v1alpha1`;
let world: GpgWorld;
let repo: TestRepo;
let store: ResourceStore;
let controller: GitOpsController;
let stateDir: string;
let fakeGpg: ReturnType<typeof installFakeGpg>;
const registry = new Registry();
const c: Record<string, string> = {};

const cm = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: ${value}\n`;

async function project(name: string, spec: AppProject['spec']): Promise<void> {
  await store.apply({ apiVersion: API, kind: 'AppProject', metadata: { name, namespace: NS }, spec });
}

async function app(name: string, spec: Application['spec']): Promise<void> {
  await store.apply({ apiVersion: API, kind: 'Application', metadata: { name, namespace: NS }, spec });
}

const getApp = async (name: string): Promise<Application> => (await store.get<Application>(Kinds.Application, name, NS))!;

function waitStatus(name: string, pred: (a: Application) => boolean, what: string, timeoutMs = 15_000): Promise<Application> {
  return waitFor(
    async () => {
      const a = await getApp(name);
      return a && pred(a) ? a : undefined;
    },
    timeoutMs,
    `${name}: ${what}`,
  );
}

const liveCM = async (ns: string, name: string): Promise<(KubeObject & { data?: Record<string, string> }) | undefined> => store.get(Kinds.ConfigMap, name, ns);

const spec = (revision: string, ns: string, projectName = 'secure', extra: Partial<NonNullable<Application['spec']>> = {}): Application['spec'] => ({
  project: projectName,
  source: { repoURL: repo.dir, path: 'app', targetRevision: revision },
  destination: { server: 'https://kubernetes.default.svc', namespace: ns },
  syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
  ...extra,
});

before(async () => {
  world = createGpgWorld();
  repo = createRepo(world);
  c['unsigned'] = repo.commit({ 'app/cm.yaml': cm('demo', 'unsigned') }, 'unsigned');
  c['alice'] = repo.commit({ 'app/cm.yaml': cm('demo', 'alice'), 'app/more.yaml': `${cm('second', 'x')}---\n${cm('third', 'y')}` }, 'alice', world.keys.alice);
  c['bob'] = repo.commit({ 'app/cm.yaml': cm('demo', 'bob') }, 'bob', world.keys.bob);
  c['carol'] = repo.commit({ 'app/cm.yaml': cm('demo', 'carol') }, 'carol', world.keys.carol, { gpgProgram: world.fakedTimeGpg });
  c['dave'] = repo.commit({ 'app/cm.yaml': cm('demo', 'dave') }, 'dave', world.keys.dave);
  c['eve'] = repo.commit({ 'app/cm.yaml': cm('demo', 'eve') }, 'eve', world.keys.eve);
  c['svc'] = repo.commit(
    { 'app/svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n' },
    'service',
    world.keys.alice,
  );
  repo.git('branch', 'signed-alice', c['alice']!);
  repo.git('branch', 'unsigned-branch', c['unsigned']!);
  repo.tag('light-alice', c['alice']!);
  repo.tag('v1-signed-tag', c['unsigned']!, { annotated: true, signer: world.keys.bob });
  repo.tag('v1-plain-tag', c['alice']!, { annotated: true });
  // a commit whose signature does not match its content
  const raw = repo.git('cat-file', 'commit', c['bob']!).replace('\nbob', '\nmallory');
  c['tampered'] = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: repo.dir, input: raw + '\n', encoding: 'utf8' }).trim();
  repo.git('branch', 'tampered', c['tampered']!);
  repo.git('checkout', '-q', 'main');
  world.revokeDave();

  store = tempEmbeddedStore();
  await store.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: GPG_KEYS_CM, namespace: NS },
    data: Object.fromEntries([world.keys.alice, world.keys.bob, world.keys.carol, world.keys.dave].map((k) => [k.keyID, k.armored])),
  });
  await project('secure', {
    sourceRepos: ['*'],
    destinations: [{ server: '*', namespace: '*' }],
    clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
    signatureKeys: [world.keys.alice, world.keys.bob, world.keys.carol, world.keys.dave].map((k) => ({ keyID: k.keyID })),
  });
  await project('only-bob', { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], signatureKeys: [{ keyID: world.keys.bob.keyID }] });
  await project('open', { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] });
  await project('eve-proj', { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], signatureKeys: [{ keyID: world.keys.eve.fingerprint }] });
  await project('strict-rules', {
    sourceRepos: ['https://git.example/allowed/*'],
    destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'team-*' }],
    namespaceResourceWhitelist: [{ group: '', kind: 'ConfigMap' }],
  });
  await project('cm-only', {
    sourceRepos: [repo.dir],
    destinations: [{ server: '*', namespace: 'team-*' }],
    namespaceResourceWhitelist: [{ group: '', kind: 'ConfigMap' }],
  });

  fakeGpg = installFakeGpg(world.dir);
  stateDir = mkdtempSync(join(tmpdir(), 'strait-gitops-state-'));
  controller = new GitOpsController({ store, namespace: NS, stateDir, pollIntervalMs: 3_600_000, waitingRetryMs: 200, metrics: createGitOpsMetrics(registry) });
  await controller.start();
});

after(async () => {
  await controller?.stop();
  await store?.close();
  fakeGpg?.restore();
  world?.cleanup();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('refusals under enforcement (nothing applied)', () => {
  const cases: { name: string; revision: () => string; project?: string; message: (w: GpgWorld) => RegExp }[] = [
    { name: 'unsigned', revision: () => c['unsigned']!, message: () => /^Revision is not signed$/ },
    { name: 'unknown-key', revision: () => c['eve']!, message: (w) => new RegExp(`key ${w.keys.eve.keyID}, which is not imported`) },
    {
      name: 'not-allowed',
      revision: () => 'signed-alice',
      project: 'only-bob',
      message: (w) => new RegExp(`key ${w.keys.alice.signingSubkeyID} \\(subkey of ${w.keys.alice.keyID}\\), which is not allowed`),
    },
    { name: 'bad-signature', revision: () => 'tampered', message: (w) => new RegExp(`bad signature from key ${w.keys.bob.keyID}`) },
    { name: 'expired', revision: () => c['carol']!, message: (w) => new RegExp(`key ${w.keys.carol.keyID}, which expired on`) },
    { name: 'revoked', revision: () => c['dave']!, message: (w) => new RegExp(`key ${w.keys.dave.keyID}, which has been revoked`) },
    { name: 'unsigned-annotated-tag', revision: () => 'v1-plain-tag', message: () => /^Revision is not signed: annotated tag v1-plain-tag/ },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const name = `refuse-${tc.name}`;
      await app(name, spec(tc.revision(), `ns-${name}`, tc.project ?? 'secure'));
      const a = await waitStatus(name, (x) => x.status?.sync?.status === 'Sync Error', 'Sync Error');
      assert.match(a.status?.operationState?.message ?? '', tc.message(world));
      assert.equal(a.status?.operationState?.phase, 'Error');
      const cond = a.status?.conditions?.find((x) => x.type === 'ComparisonError');
      assert.ok(cond, 'a ComparisonError condition');
      assert.match(cond.message, tc.message(world));
      const ev = (await listEvents(store)).find((e) => e.name === name && e.reason === 'ResourceComparison');
      assert.ok(ev, 'an Event with reason ResourceComparison');
      assert.equal(ev.type, 'Warning');
      assert.equal(await liveCM(`ns-${name}`, 'demo'), undefined, 'nothing applied');
      assert.equal(await store.get(Kinds.Namespace, `ns-${name}`), undefined, 'not even the namespace');
    });
  }
});

describe('valid signatures sync', () => {
  const cases: { name: string; revision: () => string; value: string; signer: RegExp; object: 'commit' | 'tag' }[] = [
    { name: 'branch, signing subkey', revision: () => 'signed-alice', value: 'alice', signer: /Alice Tester/, object: 'commit' },
    { name: 'full sha, rsa key', revision: () => c['bob']!, value: 'bob', signer: /Bob Tester/, object: 'commit' },
    { name: 'short sha', revision: () => c['bob']!.slice(0, 10), value: 'bob', signer: /Bob Tester/, object: 'commit' },
    { name: 'lightweight tag', revision: () => 'light-alice', value: 'alice', signer: /Alice Tester/, object: 'commit' },
    { name: 'annotated tag signed by bob over an unsigned commit', revision: () => 'v1-signed-tag', value: 'unsigned', signer: /Bob Tester/, object: 'tag' },
    { name: 'HEAD', revision: () => 'HEAD', value: 'eve', signer: /Alice Tester/, object: 'commit' },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const name = `ok-${tc.name.toLowerCase().replace(/[^a-z]+/g, '-')}`.slice(0, 50).replace(/-$/, '');
      const ns = `ns-${name}`;
      await app(name, spec(tc.revision(), ns));
      const a = await waitStatus(name, (x) => x.status?.sync?.status === 'Synced' || x.status?.sync?.status === 'Sync Error', 'a sync result');
      assert.equal(a.status?.sync?.status, 'Synced', a.status?.operationState?.message);
      assert.equal(a.status?.operationState?.phase, 'Succeeded');
      assert.match(a.status?.operationState?.syncResult?.signer ?? '', tc.signer);
      assert.equal(a.status?.signature?.status, 'valid');
      assert.equal(a.status?.signature?.verifiedObject, tc.object);
      assert.match(a.status?.sync?.revision ?? '', /^[0-9a-f]{40}$/);
      assert.equal((await liveCM(ns, 'demo'))?.data?.['value'], tc.value);
      assert.ok(await store.get(Kinds.Namespace, ns), 'CreateNamespace=true made the namespace');
    });
  }
});

test('a refusal after a sync leaves the synced state as it was', async () => {
  const name = 'keep-state';
  await app(name, spec('signed-alice', 'ns-keep'));
  const ok = await waitStatus(name, (x) => x.status?.sync?.status === 'Synced', 'Synced');
  await app(name, spec(c['unsigned']!, 'ns-keep'));
  const bad = await waitStatus(name, (x) => x.status?.sync?.status === 'Sync Error', 'Sync Error');
  assert.equal(bad.status?.operationState?.message, 'Revision is not signed');
  assert.equal((await liveCM('ns-keep', 'demo'))?.data?.['value'], 'alice');
  assert.ok(await liveCM('ns-keep', 'second'));
  // the status speaks of the refused revision; the last synced one stays the last sync result
  assert.equal(bad.status?.sync?.revision, c['unsigned'], 'the refused revision is the one shown');
  assert.deepEqual(bad.status?.operationState?.syncResult, ok.status?.operationState?.syncResult);
  assert.equal(bad.status?.operationState?.syncResult?.revision, ok.status?.sync?.revision, 'the last good revision is kept, as the last sync result');
});

test('retargeting from a refused revision to a lightweight tag on a signed commit: status and last sync agree', async () => {
  const name = 'retarget-light';
  await app(name, spec('signed-alice', 'ns-retarget'));
  await waitStatus(name, (x) => x.status?.operationState?.phase === 'Succeeded', 'Succeeded');
  await app(name, spec(c['unsigned']!, 'ns-retarget'));
  await waitStatus(name, (x) => x.status?.sync?.status === 'Sync Error', 'Sync Error');
  // the live state already matches the tag's commit (alice): nothing differs, yet the refusal must not linger
  await app(name, spec('light-alice', 'ns-retarget'));
  const a = await waitStatus(
    name,
    (x) => x.status?.sync?.status === 'Synced' && x.status?.operationState?.phase === 'Succeeded',
    'Synced with a Succeeded last sync',
  );
  assert.equal(a.status?.sync?.revision, c['alice']);
  assert.equal(a.status?.operationState?.operation?.sync.revision, c['alice']);
  assert.equal(a.status?.signature?.status, 'valid');
  assert.equal(a.status?.signature?.verifiedObject, 'commit', "a lightweight tag: the commit's signature counts");
  assert.match(a.status?.operationState?.syncResult?.signer ?? '', /Alice Tester/);
  assert.equal((a.status?.conditions ?? []).filter((k) => k.type === 'ComparisonError').length, 0);
});

test('a manual sync that cannot run records an Error operation for its revision, not the last result', async () => {
  const name = 'manual-missing-ns';
  await app(name, { ...spec('signed-alice', 'ns-never-made'), syncPolicy: {} });
  await waitStatus(name, (x) => x.status?.sync?.status === 'OutOfSync', 'OutOfSync');
  const outcome = await controller.syncNow(name);
  assert.equal(outcome?.result, 'refused');
  const a = await getApp(name);
  assert.equal(a.status?.operationState?.phase, 'Error');
  assert.match(a.status?.operationState?.message ?? '', /namespaces "ns-never-made" not found/);
  assert.equal(a.status?.operationState?.operation?.sync.revision, c['alice']);
});

test('not enforced by default: an unsigned commit syncs in a project without signatureKeys', async () => {
  await app('open-unsigned', spec(c['unsigned']!, 'ns-open', 'open'));
  const a = await waitStatus('open-unsigned', (x) => x.status?.sync?.status === 'Synced', 'Synced');
  assert.equal(a.status?.signature?.status, 'unsigned');
  assert.equal(a.status?.signature?.enforced, false);
  assert.equal((await liveCM('ns-open', 'demo'))?.data?.['value'], 'unsigned');
});

test('a Helm source in an enforcing project is refused: verification works for Git repositories only', async () => {
  await app('helm', { ...spec('1.0.0', 'ns-helm'), source: { repoURL: 'https://charts.example/', chart: 'nginx', targetRevision: '1.0.0' } });
  const a = await waitStatus('helm', (x) => x.status?.sync?.status === 'Sync Error', 'Sync Error');
  assert.match(a.status?.operationState?.message ?? '', /Signature verification works for Git repositories only/);
  assert.ok((await listEvents(store)).find((e) => e.name === 'helm' && e.reason === 'ResourceComparison'));
});

describe('project rules', () => {
  const cases: { name: string; spec: () => Application['spec']; type: string; message: RegExp }[] = [
    {
      name: 'source repo not permitted',
      spec: () => spec('main', 'team-a', 'strict-rules'),
      type: 'InvalidSpecError',
      message: /application repo .* is not permitted in project 'strict-rules'/,
    },
    {
      name: 'destination not permitted',
      spec: () => spec('main', 'prod', 'cm-only'),
      type: 'InvalidSpecError',
      message: /application destination \{https:\/\/kubernetes.default.svc prod\} is not permitted/,
    },
    {
      name: 'kind not in namespaceResourceWhitelist',
      spec: () => spec(c['svc']!, 'team-b', 'cm-only'),
      type: 'SyncError',
      message: /resource :Service "web" is not permitted in project cm-only/,
    },
    {
      name: 'project missing',
      spec: () => spec('main', 'team-c', 'no-such-project'),
      type: 'InvalidSpecError',
      message: /project no-such-project which does not exist/,
    },
    {
      name: 'unknown destination cluster',
      spec: () => ({ ...spec('main', 'x', 'open'), destination: { server: 'https://elsewhere:6443', namespace: 'x' } }),
      type: 'InvalidSpecError',
      message: /not a known cluster/,
    },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const name = `rules-${tc.name.toLowerCase().replace(/[^a-z]+/g, '-')}`.slice(0, 50).replace(/-$/, '');
      await app(name, tc.spec());
      const a = await waitStatus(name, (x) => (x.status?.conditions ?? []).some((k) => k.type === tc.type), tc.type);
      assert.match(a.status?.conditions?.find((k) => k.type === tc.type)?.message ?? '', tc.message);
      assert.equal((await store.list(Kinds.Service, { namespace: 'team-b' })).items.length, 0);
    });
  }
});

test('importing a key through the key store makes it effective at once', async () => {
  await app('eve-app', spec(c['eve']!, 'ns-eve', 'eve-proj'));
  await waitStatus('eve-app', (x) => x.status?.sync?.status === 'Sync Error', 'Sync Error');
  const t0 = Date.now();
  const r = await controller.keys.add(world.keys.eve.armored);
  assert.deepEqual(
    r.created.map((k) => k.keyID),
    [world.keys.eve.keyID],
  );
  await waitStatus('eve-app', (x) => x.status?.sync?.status === 'Synced', 'Synced after import', 5000);
  console.log(`# key import -> Application synced in ${Date.now() - t0} ms`);
  assert.equal((await liveCM('ns-eve', 'demo'))?.data?.['value'], 'eve');
  const again = await controller.keys.add(world.keys.eve.armored);
  assert.deepEqual(again.skipped, [world.keys.eve.keyID]);
  await controller.keys.remove(world.keys.eve.keyID);
});

test('key store entries with a wrong name, no key or several keys are reported and ignored', async () => {
  const current = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.ConfigMap, GPG_KEYS_CM, NS);
  await store.update({
    ...current!,
    data: {
      ...current!.data,
      [world.keys.bob.keyID.replace(/.$/, '0')]: world.keys.eve.armored,
      '0123456789ABCDEF': 'not a key',
      [world.keys.eve.keyID]: world.keys.eve.armored + world.keys.bob.armored,
      'not-an-id': world.keys.eve.armored,
    },
  });
  await waitFor(() => controller.keys.problems.length === 4, 5000, 'four problems');
  const reasons = controller.keys.problems.map((p) => p.reason).join('\n');
  assert.match(reasons, /differs from its key's ID/);
  assert.match(reasons, /holds no public key/);
  assert.match(reasons, /holds 2 keys/);
  assert.match(reasons, /is not a 16-hex key ID/);
  assert.equal(controller.keys.keyring.find(world.keys.eve.keyID), undefined, 'eve stays unknown');
  assert.ok(controller.keys.keyring.get(world.keys.alice.keyID), 'valid entries still load');
  assert.ok((await listEvents(store)).some((e) => e.reason === 'InvalidKeyEntry' && e.name === GPG_KEYS_CM));
  await store.update({ ...current!, metadata: { ...current!.metadata, resourceVersion: undefined as unknown as string } });
});

test('selfHeal restores drift, prune removes what left Git, push triggers an immediate sync', async () => {
  const name = 'heal';
  const ns = 'ns-heal';
  await app(name, { ...spec('main', ns, 'open'), source: { repoURL: repo.dir, path: 'app', targetRevision: 'main' } });
  await waitStatus(name, (x) => x.status?.sync?.status === 'Synced', 'Synced');
  assert.ok(await liveCM(ns, 'second'));
  // drift: someone edits the live object
  const live = await liveCM(ns, 'demo');
  await store.update({ ...live!, data: { value: 'drifted' } });
  await controller.refresh(name);
  assert.equal((await liveCM(ns, 'demo'))?.data?.['value'], 'eve', 'selfHeal restored the value');
  // prune: a new commit drops more.yaml; the push hook syncs at once
  repo.commit({ 'app/more.yaml': null }, 'drop second and third', world.keys.alice);
  controller.notifyPush(repo.dir);
  await waitFor(async () => (await liveCM(ns, 'second')) === undefined, 10_000, 'second pruned');
  assert.equal(await liveCM(ns, 'third'), undefined);
  assert.ok(await liveCM(ns, 'demo'));
});

test('without automated sync the Application is compared only, and syncNow applies it', async () => {
  const name = 'manual';
  await app(name, { ...spec('signed-alice', 'ns-manual'), syncPolicy: { syncOptions: ['CreateNamespace=true'] } });
  const a = await waitStatus(name, (x) => x.status?.sync?.status === 'OutOfSync', 'OutOfSync');
  assert.equal(a.status?.signature?.status, 'valid');
  assert.equal(await liveCM('ns-manual', 'demo'), undefined);
  await controller.syncNow(name);
  assert.equal((await getApp(name)).status?.sync?.status, 'Synced');
  assert.equal((await liveCM('ns-manual', 'demo'))?.data?.['value'], 'alice');
});

test('metrics: syncs by result, verifications by outcome, latency; promtool accepts them', async () => {
  const text = await registry.metrics();
  for (const outcome of ['unsigned', 'valid', 'unknown-key', 'not-allowed', 'bad-signature', 'expired', 'revoked']) {
    assert.match(text, new RegExp(`strait_gitops_signature_verifications_total\\{outcome="${outcome}"\\} [1-9]`), outcome);
  }
  assert.match(text, /strait_gitops_syncs_total\{result="synced"\} [1-9]/);
  assert.match(text, /strait_gitops_syncs_total\{result="refused"\} [1-9]/);
  assert.match(text, /strait_gitops_signature_verification_seconds_count [1-9]/);
  const r = await run('promtool', ['check', 'metrics'], { input: text });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the controller never ran gpg (and the trap does catch gpg)', () => {
  assert.deepEqual(fakeGpg.calls(), []);
  // prove the trap works: git verify-commit runs "gpg" from PATH, which records the call
  spawnSync('git', ['verify-commit', c['bob']!], { cwd: repo.dir, env: { ...process.env, GNUPGHOME: world.gnupgHome } });
  assert.ok(fakeGpg.calls().length > 0, 'the fake gpg recorded git verify-commit');
});

test('a verdict cached while the key was valid is refused once the key has expired (head mode re-checks expiry as strict mode does)', async () => {
  const own = tempEmbeddedStore();
  const dir = mkdtempSync(join(tmpdir(), 'strait-gitops-expiry-'));
  let clock = new Date('2020-07-01T00:00:00Z'); // carol's key: made 2020-01-01, expires in 2021
  const ctl = new GitOpsController({ store: own, namespace: NS, stateDir: dir, pollIntervalMs: 3_600_000, waitingRetryMs: 200, now: () => clock });
  try {
    await own.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: GPG_KEYS_CM, namespace: NS },
      data: { [world.keys.carol.keyID]: world.keys.carol.armored },
    });
    await own.apply({
      apiVersion: API,
      kind: 'AppProject',
      metadata: { name: 'carol', namespace: NS },
      spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], signatureKeys: [{ keyID: world.keys.carol.keyID }] },
    });
    await own.apply({ apiVersion: API, kind: 'Application', metadata: { name: 'expiry', namespace: NS }, spec: spec(c['carol']!, 'expiry', 'carol') });
    await ctl.start();
    const get = async (): Promise<Application> => (await own.get<Application>(Kinds.Application, 'expiry', NS))!;
    await waitFor(async () => ((await get())?.status?.signature?.status === 'valid' ? true : undefined), 15_000, 'valid while the key is');
    clock = new Date('2022-01-01T00:00:00Z');
    await ctl.refresh('expiry');
    const a = await waitFor(
      async () => {
        const x = await get();
        return x?.status?.signature?.status === 'expired' ? x : undefined;
      },
      15_000,
      "expired after the clock passed the key's expiry",
    );
    assert.match(a.status?.conditions?.find((x) => x.type === 'ComparisonError')?.message ?? '', new RegExp(`key ${world.keys.carol.keyID}, which expired on`));
  } finally {
    await ctl.stop();
    await own.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
