// Attack: a project's sourceIntegrity policy names a repository; whoever may write an
// Application spells the same repository another way (user info, a zero-padded port,
// repeated slashes, another case, http for https) so that no policy matches and the
// unsigned revision syncs unverified. Every spelling git fetches from the real githost
// must be verified by the policy that names the repository (refused: "Revision is not
// signed", nothing applied). A repository no policy names keeps Argo CD's meaning (not
// verified) unless the project sets sourceIntegrity.git.requireMatch (refused).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { normalizeRepoURL, policyMatches, startGitOpsService, type Application, type GitOpsService } from '../../src/gitops/control/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { api, startGithost, type Started } from '../helpers/githost.js';
import { run } from '../helpers/run.js';
import { createGpgWorld, createRepo, type GpgWorld } from '../helpers/signed-repo.js';
import { waitFor } from '../helpers/wait.js';

let world: GpgWorld;
let gh: Started;
let svc: GitOpsService;
let store: ResourceStore;
let dir: string;
let hostPort = '';
let unsigned = '';
const V = `${GROUPS.gitops}/v1alpha1`;

const cm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  value: "${value}"\n`;
const getApp = async (name: string): Promise<Application> => (await store.get<Application>(Kinds.Application, name, 'argocd'))!;
const live = async (ns: string): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'demo', ns))?.data?.['value'];

async function project(name: string, git: Record<string, unknown>): Promise<void> {
  await store.apply({
    apiVersion: V,
    kind: 'AppProject',
    metadata: { name, namespace: 'argocd' },
    spec: {
      sourceRepos: ['*'],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: '*' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      sourceIntegrity: { git },
    },
  });
}

async function app(name: string, projectName: string, repoURL: string): Promise<void> {
  await store.apply({
    apiVersion: V,
    kind: 'Application',
    metadata: { name, namespace: 'argocd' },
    spec: {
      project: projectName,
      source: { repoURL, path: 'app', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: name },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
}

/** The Application's settled verdict: Synced (with what was applied) or the refusal. */
async function verdict(name: string): Promise<{ sync: string; message: string; reason: string; applied: string | undefined; condition: string }> {
  const a = await waitFor(
    async () => {
      const x = await getApp(name);
      const s = x.status?.sync?.status;
      return s === 'Synced' || s === 'Sync Error' || x.status?.conditions?.some((k) => k.type === 'ComparisonError') ? x : undefined;
    },
    20_000,
    `${name} settled`,
  );
  return {
    sync: a.status?.sync?.status ?? '',
    message: a.status?.operationState?.message ?? '',
    reason: a.status?.conditions?.find((k) => k.type === 'ComparisonError')?.reason ?? '',
    applied: await live(name),
    condition: a.status?.conditions?.find((k) => k.type === 'ComparisonError')?.message ?? '',
  };
}

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-spellings-'));
  gh = await startGithost();
  hostPort = new URL(gh.url).host;
  assert.equal(
    (
      await api(gh.url, 'POST', '/api/v1/admin/users', {
        token: gh.adminToken,
        body: { username: 'alice', email: world.keys.alice.email, password: 'alice-pass-1', must_change_password: false },
      })
    ).status,
    201,
  );
  assert.equal((await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['alice', 'alice-pass-1'], body: { name: 'app' } })).status, 201);
  const repo = createRepo(world, 'alice');
  unsigned = repo.commit({ 'app/cm.yaml': cm('unsigned') }, 'unsigned change');
  const push = await run('git', ['push', '-q', `http://alice:alice-pass-1@${hostPort}/alice/app.git`, 'main'], { cwd: repo.dir, env: world.env });
  assert.equal(push.status, 0, push.stderr);

  store = tempEmbeddedStore();
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: join(dir, 'state'), port: 0, tls: false, pollIntervalMs: 3_600_000 });
  await svc.controller.keys.add(world.keys.alice.armored);
  // the policy names the repository one way, with https (as a policy usually does)
  await project('signed', { policies: [{ repos: [{ url: `https://${hostPort}/alice/app` }], gpg: { mode: 'head', keys: [world.keys.alice.keyID] } }] });
});

after(async () => {
  await svc?.close();
  await store?.close();
  await gh?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the normalization table: every spelling of one repository is one repository', () => {
  const same: [string, string][] = [
    ['https://x@host/team/app', 'https://host/team/app'],
    ['https://x:secret@host/team/app', 'https://host/team/app'],
    ['https://host./team/app', 'https://host/team/app'],
    ['https://host...:443/team/app', 'https://host/team/app'],
    ['https://host:0443/team/app', 'https://host/team/app'],
    ['https://host:00443/team/app/', 'https://host/team/app'],
    ['http://host:080/team/app', 'http://host/team/app'],
    ['https://host:08443/team/app', 'https://host:8443/team/app'],
    ['https://host//team///app', 'https://host/team/app'],
    ['HTTPS://HOST/Team/App.git/', 'https://host/team/app'],
    ['https://host/team/app.git', 'https://host/team/app'],
    ['http://2130706433:8080/team/app', 'http://127.0.0.1:8080/team/app'],
    ['http://0x7f.1:8080/team/app', 'http://127.0.0.1:8080/team/app'],
    ['ssh://git@host:0022/team/app', 'ssh://host/team/app'],
    ['git@host:team/app.git', 'ssh://host/team/app'],
    ['ssh://host./team//app', 'ssh://host/team/app'],
  ];
  for (const [spelling, want] of same) assert.equal(normalizeRepoURL(spelling).url, want, spelling);
  // a policy naming the https URL applies to every spelling, http included; another repository stays outside
  const pol = { repos: [{ url: 'https://host/team/app' }], gpg: { mode: 'head' as const, keys: [] } };
  for (const [spelling] of same.filter(([, w]) => /\/\/host\/team\/app$/.test(w) && w.startsWith('http')))
    assert.equal(policyMatches(pol, spelling), true, spelling);
  for (const url of ['http://host/team/app', 'http://anything@host/team/app', 'http://host:80/team/app.git', 'http://host.:0080//team/app'])
    assert.equal(policyMatches(pol, url), true, url);
  for (const url of ['https://host/team/app2', 'https://host:8443/team/app', 'https://other/team/app', 'ssh://host/team/app'])
    assert.equal(policyMatches(pol, url), false, url);
  // an exclusion cannot be reached by user info either
  const excl = { repos: [{ url: '*' }, { url: '!*legacy*' }], gpg: { mode: 'head' as const, keys: [] } };
  assert.equal(policyMatches(excl, 'https://legacy@host/team/app'), true);
});

test('every spelling of the repository the policy names is verified: the unsigned revision is refused, nothing applied', async () => {
  const [host, port] = hostPort.split(':') as [string, string];
  // the spellings git fetches from githost (it answers Not found for repeated slashes; those and trailing dots are in the table above)
  const spellings: [string, string][] = [
    ['plain', `http://${hostPort}/alice/app.git`],
    ['userinfo', `http://anything@${hostPort}/alice/app.git`],
    ['zero-padded-port', `http://${host}:0${port}/alice/app`],
    ['upper-case', `http://${hostPort}/ALICE/App.git/`],
  ];
  for (const [name, url] of spellings) await app(name, 'signed', url);
  for (const [name, url] of spellings) {
    const v = await verdict(name);
    assert.equal(v.sync, 'Sync Error', `${url}: ${JSON.stringify(v)}`);
    assert.match(v.message, /^Revision is not signed/, url);
    assert.equal(v.reason, 'SignatureUnsigned', url);
    assert.equal(v.applied, undefined, `${url}: nothing applied`);
  }
});

test('a repository no policy names: not verified (Argo CD), or refused when the project sets requireMatch', async () => {
  await project('open', { policies: [{ repos: [{ url: 'https://elsewhere.example/*' }], gpg: { mode: 'head', keys: [world.keys.alice.keyID] } }] });
  await project('closed', {
    requireMatch: true,
    policies: [{ repos: [{ url: 'https://elsewhere.example/*' }], gpg: { mode: 'head', keys: [world.keys.alice.keyID] } }],
  });
  await app('open', 'open', `http://${hostPort}/alice/app.git`);
  await app('closed', 'closed', `http://${hostPort}/alice/app.git`);
  const open = await verdict('open');
  assert.equal(open.sync, 'Synced', JSON.stringify(open));
  assert.equal(open.applied, 'unsigned');
  assert.equal((await getApp('open')).status?.signature?.enforced, false);
  const closed = await verdict('closed');
  assert.equal(closed.sync, 'Sync Error', JSON.stringify(closed));
  assert.equal(closed.reason, 'SourceIntegrityNoMatchingPolicy');
  assert.match(closed.message, /no source integrity policy of project 'closed' matches repo URL .*requireMatch/);
  assert.equal(closed.applied, undefined);
  assert.equal((await getApp('closed')).status?.sync?.revision ?? unsigned, unsigned);
});
