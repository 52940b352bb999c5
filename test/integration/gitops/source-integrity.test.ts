// AppProject spec.sourceIntegrity (Argo CD 3.5) end to end with real git and real gpg:
// head and strict modes, an unsigned commit in the middle of the history, a force-push
// that rewrites history, a merge of an unsigned branch, seal commits, signer identity
// rules (strait's extension), and the refusal of signatureKeys and sourceIntegrity in one
// project through every write path (docs/gitops.md, "Source integrity").
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GitOpsController, type Application, type AppProject } from '../../../src/gitops/control/index.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { listEvents } from '../../helpers/events.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestKey, type TestRepo } from '../../helpers/signed-repo.js';
import { waitFor } from '../../helpers/wait.js';

const NS = 'argocd';
const API = `${GROUPS.gitops}/v1alpha1`;
let world: GpgWorld;
let repo: TestRepo;
let store: ResourceStore;
let controller: GitOpsController;
let stateDir: string;
const c: Record<string, string> = {};

const cm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  value: "${value}"\n`;

/** A commit on the current branch (files under app/), signed by `signer` or not; committer e-mail as given. */
function commit(value: string, message: string, signer?: TestKey, committerEmail?: string): string {
  if (!committerEmail || !signer) return repo.commit({ 'app/cm.yaml': cm(value) }, message, signer);
  writeFileSync(join(repo.dir, 'app', 'cm.yaml'), cm(value));
  repo.git('add', '-A');
  execFileSync('git', ['-c', `user.signingkey=${signer.fingerprint}`, 'commit', '-q', '-m', message, '-S'], {
    cwd: repo.dir,
    env: { ...world.env, GIT_COMMITTER_EMAIL: committerEmail },
    stdio: 'pipe',
  });
  return repo.git('rev-parse', 'HEAD');
}

const policy = (
  url: string,
  mode: 'none' | 'head' | 'strict',
  keys: TestKey[],
  strait?: Record<string, unknown>,
): NonNullable<NonNullable<AppProject['spec']>['sourceIntegrity']>['git'] => ({
  policies: [{ repos: [{ url }], gpg: { mode, keys: keys.map((k) => k.keyID) }, ...(strait ? { strait } : {}) }],
});

async function project(name: string, spec: AppProject['spec']): Promise<void> {
  await store.apply({
    apiVersion: API,
    kind: 'AppProject',
    metadata: { name, namespace: NS },
    spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], ...spec },
  });
}

async function app(name: string, revision: string, projectName: string): Promise<void> {
  await store.apply({
    apiVersion: API,
    kind: 'Application',
    metadata: { name, namespace: NS },
    spec: {
      project: projectName,
      source: { repoURL: repo.dir, path: 'app', targetRevision: revision },
      destination: { server: 'https://kubernetes.default.svc', namespace: `ns-${name}` },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
}

const getApp = async (name: string): Promise<Application> => (await store.get<Application>(Kinds.Application, name, NS))!;
const waitStatus = (name: string, pred: (a: Application) => boolean, what: string): Promise<Application> =>
  waitFor(
    async () => {
      const a = await getApp(name);
      return a && pred(a) ? a : undefined;
    },
    20_000,
    `${name}: ${what}`,
  );
const settled = (name: string, revision?: () => string): Promise<Application> =>
  waitStatus(
    name,
    (a) =>
      (a.status?.sync?.status === 'Synced' || a.status?.sync?.status === 'Sync Error') &&
      (!revision || a.status?.operationState?.operation?.sync.revision === revision()),
    'a sync result',
  );
const live = async (name: string): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'demo', `ns-${name}`))?.data?.['value'];

before(async () => {
  world = createGpgWorld();
  repo = createRepo(world);
  const { alice, bob } = world.keys;
  // main: a clean signed history
  c['m1'] = commit('m1', 'm1', alice);
  c['m2'] = commit('m2', 'm2', bob);
  c['m3'] = commit('m3', 'm3', alice);
  // middle: signed, UNSIGNED, signed
  repo.git('checkout', '-q', '-b', 'middle');
  c['mid-unsigned'] = commit('mid-unsigned', 'an unsigned change in the middle');
  c['mid-top'] = commit('mid-top', 'signed on top', alice);
  // merge of an unsigned branch into a signed one, the merge signed by alice
  repo.git('checkout', '-q', '-b', 'side', c['m3']!);
  c['side-unsigned'] = repo.commit({ 'app/side.yaml': cm('side').replace('name: demo', 'name: side') }, 'unsigned work on a side branch');
  repo.git('checkout', '-q', '-b', 'merged', c['m3']!);
  c['merged-base'] = commit('merged-base', 'signed on the main line', alice);
  execFileSync('git', ['-c', `user.signingkey=${alice.fingerprint}`, 'merge', '-q', '--no-ff', '-S', '-m', 'merge side', 'side'], {
    cwd: repo.dir,
    env: world.env,
    stdio: 'pipe',
  });
  c['merge'] = repo.git('rev-parse', 'HEAD');
  // sealed: the unsigned middle commit reviewed and sealed by alice
  repo.git('checkout', '-q', '-b', 'sealed', c['mid-top']!);
  c['seal'] = commit('sealed', 'seal\n\nArgocd-gpg-seal: reviewed the unsigned change', alice);
  c['after-seal'] = commit('after-seal', 'signed after the seal', bob);
  // force-push target: starts clean
  repo.git('checkout', '-q', '-b', 'fp', c['m3']!);
  c['fp1'] = commit('fp1', 'fp1', alice);
  c['fp2'] = commit('fp2', 'fp2', bob);
  // identity rules
  repo.git('checkout', '-q', '-b', 'by-bob', c['m3']!);
  c['by-bob'] = commit('by-bob', 'bob signs', bob);
  repo.git('checkout', '-q', '-b', 'committer-alice', c['m3']!);
  c['committer-alice'] = commit('committer-alice', 'alice signs as herself', alice, alice.email);
  repo.git('checkout', '-q', 'main');
  repo.tag('v-middle', c['mid-top']!, { annotated: true, signer: world.keys.bob });
  repo.tag('v-main', c['m3']!, { annotated: true, signer: world.keys.bob });
  repo.tag('v-main-plain', c['m3']!, { annotated: true });

  store = tempEmbeddedStore();
  await store.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: GPG_KEYS_CM, namespace: NS },
    data: Object.fromEntries([world.keys.alice, world.keys.bob, world.keys.carol].map((k) => [k.keyID, k.armored])),
  });
  const url = repo.dir;
  await project('head', { sourceIntegrity: { git: policy(url, 'head', [alice, bob]) } });
  await project('strict', { sourceIntegrity: { git: policy(url, 'strict', [alice, bob]) } });
  await project('strict-alice-only', { sourceIntegrity: { git: policy(url, 'strict', [alice]) } });
  await project('none', { sourceIntegrity: { git: policy(url, 'none', []) } });
  await project('other-repos', { sourceIntegrity: { git: policy('https://git.example/*', 'strict', [alice]) } });
  await project('two-policies', {
    sourceIntegrity: {
      git: {
        policies: [
          { repos: [{ url: '*' }], gpg: { mode: 'head', keys: [alice.keyID] } },
          { repos: [{ url: `${url.slice(0, -2)}*` }], gpg: { mode: 'strict', keys: [alice.keyID] } },
        ],
      },
    },
  });
  await project('identity', { sourceIntegrity: { git: policy(url, 'head', [alice, bob], { signerIdentities: ['* <alice@example.com>'] }) } });
  await project('committer', { sourceIntegrity: { git: policy(url, 'head', [alice, bob], { committerEmailMatchesSigner: true }) } });

  stateDir = mkdtempSync(join(tmpdir(), 'strait-si-state-'));
  controller = new GitOpsController({ store, namespace: NS, stateDir, pollIntervalMs: 3_600_000, waitingRetryMs: 200 });
  await controller.start();
});

after(async () => {
  await controller?.stop();
  await store?.close();
  world?.cleanup();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('head and strict modes', () => {
  const cases: { name: string; revision: () => string; project: string; synced: boolean; reason?: string; message?: () => RegExp; checked?: number }[] = [
    { name: 'head-clean', revision: () => 'main', project: 'head', synced: true },
    { name: 'strict-clean', revision: () => 'main', project: 'strict', synced: true, checked: 3 },
    { name: 'head-middle', revision: () => 'middle', project: 'head', synced: true },
    {
      name: 'strict-middle',
      revision: () => 'middle',
      project: 'strict',
      synced: false,
      reason: 'SignatureHistoryUnsigned',
      message: () =>
        new RegExp(
          `^History commit ${c['mid-unsigned']} by Test Author <author@example.com> is not signed \\(strict mode: every commit down to the root must be signed by an allowed key\\)$`,
        ),
    },
    { name: 'head-merge', revision: () => 'merged', project: 'head', synced: true },
    {
      name: 'strict-merge',
      revision: () => 'merged',
      project: 'strict',
      synced: false,
      reason: 'SignatureHistoryUnsigned',
      message: () => new RegExp(`^History commit ${c['side-unsigned']} by Test Author <author@example.com> is not signed`),
    },
    { name: 'strict-sealed', revision: () => 'sealed', project: 'strict', synced: true },
    {
      name: 'strict-key-in-history',
      revision: () => 'main',
      project: 'strict-alice-only',
      synced: false,
      reason: 'SignatureKeyNotAllowed',
      message: () =>
        new RegExp(
          `^History commit ${c['m2']} by Test Author <author@example.com> is signed with key ${world.keys.bob.keyID}, which is not allowed by the project's sourceIntegrity.git.policies\\[0\\].gpg.keys`,
        ),
    },
    { name: 'strict-signed-tag', revision: () => 'v-main', project: 'strict', synced: true },
    {
      name: 'strict-signed-tag-middle',
      revision: () => 'v-middle',
      project: 'strict',
      synced: false,
      reason: 'SignatureHistoryUnsigned',
      message: () => new RegExp(`^History commit ${c['mid-unsigned']} by Test Author <author@example.com> is not signed`),
    },
    {
      name: 'strict-unsigned-tag',
      revision: () => 'v-main-plain',
      project: 'strict',
      synced: false,
      reason: 'SignatureUnsigned',
      message: () => /^Revision is not signed: annotated tag v-main-plain \([0-9a-f]{40}\) carries no signature$/,
    },
    { name: 'mode-none', revision: () => 'middle', project: 'none', synced: true },
    { name: 'no-matching-policy', revision: () => 'middle', project: 'other-repos', synced: true },
    {
      name: 'two-matching-policies',
      revision: () => 'main',
      project: 'two-policies',
      synced: false,
      reason: 'SourceIntegrityPolicyConflict',
      message: () => /^multiple \(2\) git source integrity policies of project 'two-policies' match repo URL .* \(policies 0, 1\)/,
    },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      await app(tc.name, tc.revision(), tc.project);
      const a = await settled(tc.name);
      if (tc.synced) {
        assert.equal(a.status?.sync?.status, 'Synced', a.status?.operationState?.message);
        assert.ok(await live(tc.name), 'applied');
        if (tc.checked !== undefined) {
          assert.equal(a.status?.signature?.mode, 'strict');
          assert.equal(a.status?.signature?.commitsChecked, tc.checked);
        }
        return;
      }
      assert.equal(a.status?.sync?.status, 'Sync Error');
      assert.match(a.status?.operationState?.message ?? '', tc.message!());
      const cond = a.status?.conditions?.find((k) => k.type === 'ComparisonError');
      assert.equal(cond?.reason, tc.reason);
      // the status is written before the Events
      await waitFor(
        async () => (await listEvents(store)).some((e) => e.name === tc.name && e.reason === 'ResourceComparison' && e.type === 'Warning') || undefined,
        10_000,
        'the ResourceComparison Event (docs/gitops.md, "Refusals")',
      );
      await waitFor(
        async () =>
          (await listEvents(store)).some((e) => e.name === tc.name && e.reason === tc.reason && e.type === 'Warning' && tc.message!().test(e.message)) ||
          undefined,
        10_000,
        `an Event with reason ${tc.reason}`,
      );
      assert.equal(await live(tc.name), undefined, 'nothing applied');
    });
  }

  test('the refusal names the first failing commit: the oldest of several', async () => {
    // on middle: another unsigned commit on top of the signed one
    repo.git('checkout', '-q', '-b', 'two-bad', c['mid-top']!);
    const later = commit('later-unsigned', 'another unsigned change');
    repo.git('checkout', '-q', 'main');
    await app('two-bad', 'two-bad', 'strict');
    const a = await settled('two-bad');
    assert.equal(a.status?.signature?.failedCommit, c['mid-unsigned']);
    assert.match(
      a.status?.operationState?.message ?? '',
      new RegExp(`^History commit ${c['mid-unsigned']} by .* is not signed \\(strict mode: .*; 1 more commit fail\\)$`),
    );
    assert.notEqual(later, c['mid-unsigned']);
  });

  test('a seal signed by a key the policy does not allow stops the walk and is refused itself', async () => {
    await app('seal-not-allowed', 'sealed', 'strict-alice-only');
    const a = await settled('seal-not-allowed');
    // after-seal is bob's: the newest failure; the seal (alice) passes; nothing older is looked at
    assert.equal(a.status?.sync?.status, 'Sync Error');
    assert.deepEqual(a.status?.signature?.seals, [c['seal']]);
    assert.equal(a.status?.signature?.failedCommit, c['after-seal']);
    assert.match(a.status?.operationState?.message ?? '', new RegExp(`key ${world.keys.bob.keyID}, which is not allowed`));
  });
});

test('strict: a new signed commit is checked alone (incremental), a force-push that rewrites history is checked again', async () => {
  // a project of its own: no history-ok commits from the other tests
  await project('strict-fp', { sourceIntegrity: { git: policy(repo.dir, 'strict', [world.keys.alice, world.keys.bob]) } });
  await app('fp', 'fp', 'strict-fp');
  let a = await settled('fp', () => c['fp2']!);
  assert.equal(a.status?.sync?.status, 'Synced', a.status?.operationState?.message);
  assert.equal(a.status?.signature?.commitsChecked, 5, 'm1 m2 m3 fp1 fp2');

  repo.git('checkout', '-q', 'fp');
  c['fp3'] = commit('fp3', 'fp3', world.keys.alice);
  controller.notifyPush(repo.dir);
  a = await settled('fp', () => c['fp3']!);
  assert.equal(a.status?.sync?.status, 'Synced', a.status?.operationState?.message);
  assert.equal(a.status?.signature?.commitsChecked, 1, 'only the new commit: its parent is history-ok');

  // rewrite: fp1 replaced by an unsigned commit, everything after re-signed
  repo.git('reset', '-q', '--hard', c['m3']!);
  c['fp1-rewritten'] = commit('fp1-rewritten', 'fp1 rewritten without a signature');
  c['fp2-rewritten'] = commit('fp2-rewritten', 'fp2 again', world.keys.bob);
  c['fp3-rewritten'] = commit('fp3-rewritten', 'fp3 again', world.keys.alice);
  repo.git('checkout', '-q', 'main');
  controller.notifyPush(repo.dir);
  a = await settled('fp', () => c['fp3-rewritten']!);
  assert.equal(a.status?.sync?.status, 'Sync Error');
  assert.equal(a.status?.signature?.failedCommit, c['fp1-rewritten']);
  assert.match(a.status?.operationState?.message ?? '', new RegExp(`^History commit ${c['fp1-rewritten']} by Test Author <author@example.com> is not signed`));
  assert.equal(await live('fp'), 'fp3', 'the last synced state is kept');
});

describe('signer identity rules (strait extension)', () => {
  test('a signer whose key is known and listed but whose user ID matches no identity is refused', async () => {
    await app('id-bob', 'by-bob', 'identity');
    const a = await settled('id-bob');
    assert.equal(a.status?.sync?.status, 'Sync Error');
    assert.equal(a.status?.conditions?.find((k) => k.type === 'ComparisonError')?.reason, 'SignatureSignerNotAllowed');
    assert.match(
      a.status?.operationState?.message ?? '',
      new RegExp(
        `key ${world.keys.bob.keyID} of "Bob Tester <bob@example.com>", which matches none of the allowed signer identities \\("\\* <alice@example.com>"\\)`,
      ),
    );
    await waitFor(
      async () => (await listEvents(store)).some((e) => e.name === 'id-bob' && e.reason === 'SignatureSignerNotAllowed') || undefined,
      10_000,
      'a SignatureSignerNotAllowed Event',
    );
  });

  test('the same rule lets alice through', async () => {
    await app('id-alice', 'main', 'identity');
    assert.equal((await settled('id-alice')).status?.sync?.status, 'Synced');
  });

  test('committerEmailMatchesSigner: refused when the committer is not the signer, synced when it is', async () => {
    await app('committer-other', 'main', 'committer');
    const bad = await settled('committer-other');
    assert.equal(bad.status?.sync?.status, 'Sync Error');
    assert.match(
      bad.status?.operationState?.message ?? '',
      /but its committer e-mail "author@example.com" is not the signer's verified e-mail \("alice@example.com"\)/,
    );
    await app('committer-self', 'committer-alice', 'committer');
    const ok = await settled('committer-self');
    assert.equal(ok.status?.sync?.status, 'Synced', ok.status?.operationState?.message);
  });
});

describe('signatureKeys and sourceIntegrity in one project are refused', () => {
  const both = (): AppProject['spec'] => ({
    sourceRepos: ['*'],
    destinations: [{ server: '*', namespace: '*' }],
    signatureKeys: [{ keyID: world.keys.alice.keyID }],
    sourceIntegrity: { git: policy('*', 'strict', [world.keys.alice]) },
  });
  const RULE = /AppProject "argocd\/both": spec.sourceIntegrity: cannot be used together with spec.signatureKeys/;

  test('store API', async () => {
    await assert.rejects(store.apply({ apiVersion: API, kind: 'AppProject', metadata: { name: 'both', namespace: NS }, spec: both() }), RULE);
  });

  test('strait apply (CLI): refused before anything is sent, exit 2', () => {
    const file = join(stateDir, 'both.yaml');
    writeFileSync(file, JSON.stringify({ apiVersion: API, kind: 'AppProject', metadata: { name: 'both', namespace: NS }, spec: both() }));
    const root = process.env['STRAIT_ROOT'] ?? process.cwd();
    const r = spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'apply', '-f', file, '--state-dir', join(stateDir, 'no-world')], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error STRAIT_ERR_MANIFEST_INVALID: .*both.yaml document 1: spec.sourceIntegrity: cannot be used together with spec.signatureKeys \(Argo CD 3.5\); move the key IDs into a policy/,
    );
  });

  test('adding signatureKeys to a project that has sourceIntegrity (an update that merges)', async () => {
    await project('si-only', { sourceIntegrity: { git: policy('*', 'head', [world.keys.alice]) } });
    await assert.rejects(
      store.apply({
        apiVersion: API,
        kind: 'AppProject',
        metadata: { name: 'si-only', namespace: NS },
        spec: { signatureKeys: [{ keyID: world.keys.bob.keyID }] },
      }),
      /AppProject "argocd\/si-only": spec.sourceIntegrity: cannot be used together with spec.signatureKeys/,
    );
  });

  test('GitOps content: an Application that would apply such a project is refused before anything is applied', async () => {
    repo.git('checkout', '-q', '-b', 'ships-project', c['m3']!);
    const yaml =
      `apiVersion: ${API}\nkind: AppProject\nmetadata:\n  name: both\nspec:\n  sourceRepos: ["*"]\n  signatureKeys: [{keyID: ${world.keys.alice.keyID}}]\n` +
      `  sourceIntegrity: {git: {policies: [{repos: [{url: "*"}], gpg: {mode: head, keys: [${world.keys.alice.keyID}]}}]}}\n`;
    c['ships'] = repo.commit({ 'app/project.yaml': yaml }, 'ships a project', world.keys.alice);
    repo.git('checkout', '-q', 'main');
    await project('open', {});
    await app('ships-project', 'ships-project', 'open');
    const a = await waitStatus('ships-project', (x) => (x.status?.conditions ?? []).some((k) => k.reason === 'ManifestInvalid'), 'ManifestInvalid');
    assert.match(
      a.status?.conditions?.find((k) => k.reason === 'ManifestInvalid')?.message ?? '',
      /spec.sourceIntegrity: cannot be used together with spec.signatureKeys/,
    );
    assert.equal(await store.get(Kinds.AppProject, 'both', `ns-ships-project`), undefined);
  });
});
