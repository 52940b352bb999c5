// Attacks on a project's signature rules through the write paths, end to end through the
// real entry points (Argo CD's ProjectService over Connect, the REST API, the store) with a
// real Application synced by the control module from a real git repository:
//   - an older argocd client (one that has no field for spec.sourceIntegrity, or an
//     unstamped build that says "argocd-client/v99.99.99+unknown") updates the project: the
//     policy it cannot carry must stay, and with it enforcement;
//   - a repo glob that does not compile ("{app,api", "[ab*") must be refused on every
//     write path, not stored to match nothing;
// and the `default` project exists as Argo CD creates it, never overwritten.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { ensureAdminSecret, startGitOpsService, type Application, type AppProject, type GitOpsService } from '../../src/gitops/control/index.js';
import { argocdMessage } from '../../src/gitops/wire/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../helpers/signed-repo.js';
import { waitFor } from '../helpers/wait.js';

let world: GpgWorld;
let repo: TestRepo;
let svc: GitOpsService;
let store: ResourceStore;
let dir: string;
let token = '';
const V = `${GROUPS.gitops}/v1alpha1`;
const OLD_CLIENTS = ['argocd-client/v99.99.99+unknown grpc-go/1.75.0', 'argocd-client/v3.2.6+8d2f3a1 grpc-go/1.75.0', 'grpc-go/1.75.0'];

const cm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  value: "${value}"\n`;
const getApp = async (name: string): Promise<Application> => (await store.get<Application>(Kinds.Application, name, 'argocd'))!;
const getProject = async (name: string): Promise<AppProject | undefined> => store.get<AppProject>(Kinds.AppProject, name, 'argocd');
const live = async (ns: string): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'demo', ns))?.data?.['value'];

/** One unary call as a Connect client sends it (JSON), with the user agent a client puts there. */
async function rpc(
  method: string,
  body: unknown,
  userAgent: string,
): Promise<{ status: number; body: { code?: string; message?: string } & Record<string, unknown> }> {
  const res = await fetch(`${svc.api.url}/${method}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', authorization: `Bearer ${token}`, 'user-agent': userAgent },
  });
  return { status: res.status, body: (await res.json()) as { code?: string; message?: string } };
}

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: { message?: string } }> {
  const res = await fetch(`${svc.api.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as { message?: string } };
}

const signedSpec = (): AppProject['spec'] => ({
  // (the Application's namespace is made below)
  sourceRepos: [repo.dir],
  destinations: [{ server: 'https://kubernetes.default.svc', namespace: '*' }],
  sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }], gpg: { mode: 'head', keys: [world.keys.alice.keyID] } }] } },
});

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-proj-writes-'));
  repo = createRepo(world, 'repo');
  repo.commit({ 'app/cm.yaml': cm('unsigned') }, 'unsigned change');
  store = tempEmbeddedStore();
  const password = (await ensureAdminSecret(store, 'argocd')).password;
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: join(dir, 'state'), port: 0, tls: false, pollIntervalMs: 3_600_000 });
  await svc.controller.keys.add(world.keys.alice.armored);
  const login = await fetch(`${svc.api.url}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  token = ((await login.json()) as { token: string }).token;
  assert.ok(token, 'logged in');
});

after(async () => {
  await svc?.close();
  await store?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('an older argocd client that updates the project over gRPC does not switch enforcement off, whatever it says it is', async () => {
  await store.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'guarded' } });
  await store.apply({ apiVersion: V, kind: 'AppProject', metadata: { name: 'si', namespace: 'argocd' }, spec: signedSpec() });
  await store.apply({
    apiVersion: V,
    kind: 'Application',
    metadata: { name: 'guarded', namespace: 'argocd' },
    spec: {
      project: 'si',
      source: { repoURL: repo.dir, path: 'app', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'guarded' },
      syncPolicy: { automated: { prune: true, selfHeal: true } },
    },
  });
  const refused = await waitFor(
    async () => {
      const a = await getApp('guarded');
      return a.status?.sync?.status === 'Sync Error' ? a : undefined;
    },
    15_000,
    'unsigned refused',
  );
  assert.match(refused.status?.operationState?.message ?? '', /^Revision is not signed/);

  // `argocd proj add-source si <repo>` from a client without field 15: the message has no sourceIntegrity
  const stored = (await getProject('si'))!;
  const { sourceIntegrity: _si, ...carried } = stored.spec!;
  for (const [i, ua] of OLD_CLIENTS.entries()) {
    const project = {
      metadata: { name: 'si', resourceVersion: (await getProject('si'))!.metadata.resourceVersion },
      spec: { ...carried, sourceRepos: [repo.dir, `https://git.example/extra-${i}`] },
    };
    const r = await rpc('project.ProjectService/Update', { project }, ua);
    assert.equal(r.status, 200, `${ua}: ${JSON.stringify(r.body)}`);
    const after = (await getProject('si'))!;
    assert.deepEqual(after.spec?.sourceRepos, [repo.dir, `https://git.example/extra-${i}`], `${ua}: the update itself is applied`);
    assert.deepEqual(after.spec?.sourceIntegrity, stored.spec?.sourceIntegrity, `${ua}: the policy it cannot carry is kept`);
  }
  // a client that says it is 3.5 leaves the field out only to remove it: told how, nothing changed
  const before35 = (await getProject('si'))!;
  const r = await rpc('project.ProjectService/Update', { project: { metadata: { name: 'si' }, spec: carried } }, 'argocd-client/v3.5.7+unknown grpc-go/1.79.0');
  assert.equal(r.body.code, 'invalid_argument', JSON.stringify(r.body));
  assert.match(r.body.message ?? '', /the update leaves spec\.sourceIntegrity out.*--gpg-mode none/);
  assert.deepEqual((await getProject('si'))!.spec, before35.spec);

  // the controller re-judges on the project change: still refused, nothing applied
  await svc.controller.refresh('guarded');
  const a = await getApp('guarded');
  assert.equal(a.status?.sync?.status, 'Sync Error', JSON.stringify(a.status?.operationState));
  assert.equal(await live('guarded'), undefined, 'the unsigned revision was not applied');

  // removing it explicitly still works: REST with "sourceIntegrity": null
  const removed = await rest('PUT', '/api/v1/projects/si', { project: { metadata: { name: 'si' }, spec: { ...carried, sourceIntegrity: null } } });
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  assert.equal((await getProject('si'))!.spec?.sourceIntegrity, undefined);
});

test('a project that whitelists a core-group kind (group "") updates over gRPC, binary and JSON, and keeps the empty group', async () => {
  const core = [{ group: '', kind: 'Namespace' }];
  await store.apply({
    apiVersion: V,
    kind: 'AppProject',
    metadata: { name: 'core', namespace: 'argocd' },
    spec: {
      sourceRepos: [repo.dir],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: '*' }],
      clusterResourceWhitelist: core,
    },
  });
  const project = async (extra: string): Promise<unknown> => {
    const p = (await getProject('core'))!;
    return { metadata: { name: 'core', resourceVersion: p.metadata.resourceVersion }, spec: { ...p.spec, sourceRepos: [repo.dir, extra] } };
  };
  // the argocd CLI's way: gRPC's protobuf encoding (here Connect's unary binary form, the same bytes)
  const req = argocdMessage('project.ProjectUpdateRequest');
  const { jsonToMessage } = await import('../../src/gitops/control/index.js');
  const bytes = toBinary(req, jsonToMessage(req, { project: await project('https://git.example/bin') }));
  const bin = await fetch(`${svc.api.url}/project.ProjectService/Update`, {
    method: 'POST',
    body: bytes,
    headers: {
      'content-type': 'application/proto',
      'connect-protocol-version': '1',
      authorization: `Bearer ${token}`,
      'user-agent': 'argocd-client/v3.5.7+unknown grpc-go/1.79.0',
    },
  });
  const answer = new Uint8Array(await bin.arrayBuffer());
  assert.equal(bin.status, 200, Buffer.from(answer).toString());
  const { messageToJson } = await import('../../src/gitops/control/index.js');
  const back = messageToJson(
    argocdMessage('github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1.AppProject'),
    fromBinary(argocdMessage('github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1.AppProject'), answer),
  ) as AppProject;
  assert.deepEqual(back.spec?.clusterResourceWhitelist, core, 'the answer carries the empty group');
  assert.deepEqual((await getProject('core'))!.spec?.sourceRepos, [repo.dir, 'https://git.example/bin'], 'the binary update is applied');
  assert.deepEqual((await getProject('core'))!.spec?.clusterResourceWhitelist, core, 'the stored whitelist keeps group ""');

  const r = await rpc('project.ProjectService/Update', { project: await project('https://git.example/json') }, 'argocd-client/v3.5.7+unknown grpc-go/1.79.0');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual((r.body['spec'] as AppProject['spec'])?.clusterResourceWhitelist, core);
  const stored = (await getProject('core'))!;
  assert.deepEqual(stored.spec?.sourceRepos, [repo.dir, 'https://git.example/json']);
  assert.deepEqual(stored.spec?.clusterResourceWhitelist, core);

  // a refusal over gRPC: the status from the error's kind (NotFound), its STRAIT_ERR_* code in the metadata
  const missing = await fetch(`${svc.api.url}/project.ProjectService/Get`, {
    method: 'POST',
    body: JSON.stringify({ name: 'no-such-project' }),
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', authorization: `Bearer ${token}` },
  });
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as { code: string }).code, 'not_found');
  assert.equal(missing.headers.get('strait-error-code'), 'STRAIT_ERR_GITOPS_API_OBJECT_NOT_FOUND');
});

test('a sourceIntegrity repo glob that does not compile is refused on every write path, naming the value', async () => {
  for (const bad of ['{app,api', '[ab*', '!https://git.example/{a,b', 'https://git.example/app\\']) {
    const spec = {
      ...signedSpec(),
      sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }, { url: bad }], gpg: { mode: 'head' as const, keys: [world.keys.alice.keyID] } }] } },
    };
    const obj = { apiVersion: V, kind: 'AppProject', metadata: { name: 'globs', namespace: 'argocd' }, spec };
    const want = /spec\.sourceIntegrity\.git\.policies\[0\]\.repos\[1\]\.url: is not a valid glob/;
    // the store (what kubectl/strait apply and the store API write through)
    await assert.rejects(
      store.apply(obj),
      (e: Error & { code?: string }) => e.code === 'STRAIT_ERR_OBJECT_INVALID' && want.test(e.message) && e.message.includes(JSON.stringify(bad)),
      bad,
    );
    // the REST API
    const viaRest = await rest('POST', '/api/v1/projects', { project: { metadata: { name: 'globs' }, spec }, upsert: true });
    assert.equal(viaRest.status, 400, `${bad}: ${JSON.stringify(viaRest.body)}`);
    assert.match(viaRest.body.message ?? '', want);
    // Argo CD's ProjectService over Connect (create, and update of an existing project)
    const viaRpc = await rpc('project.ProjectService/Create', { project: { metadata: { name: 'globs' }, spec }, upsert: true }, 'argocd-client/v3.5.7+unknown');
    assert.equal(viaRpc.body.code, 'invalid_argument', `${bad}: ${JSON.stringify(viaRpc.body)}`);
    assert.match(viaRpc.body.message ?? '', want);
    const upd = await rpc('project.ProjectService/Update', { project: { metadata: { name: 'si' }, spec } }, 'argocd-client/v3.5.7+unknown');
    assert.equal(upd.body.code, 'invalid_argument', `${bad}: ${JSON.stringify(upd.body)}`);
    assert.equal(await getProject('globs'), undefined, `${bad}: nothing stored`);
  }
});

test('the default project exists as Argo CD creates it, and an existing one is not overwritten', async () => {
  const got = await rpc('project.ProjectService/GetDetailedProject', { name: 'default' }, 'argocd-client/v3.5.7+unknown');
  assert.equal(got.status, 200, JSON.stringify(got.body));
  const spec = (got.body['project'] as AppProject).spec;
  assert.deepEqual(spec?.sourceRepos, ['*']);
  assert.deepEqual(spec?.destinations, [{ server: '*', namespace: '*' }]);
  assert.deepEqual(spec?.clusterResourceWhitelist, [{ group: '*', kind: '*' }]);
  // an admin narrows it; a restart keeps theirs
  await store.apply({
    apiVersion: V,
    kind: 'AppProject',
    metadata: { name: 'default', namespace: 'argocd' },
    spec: { sourceRepos: [repo.dir], destinations: [], ...{ sourceIntegrity: signedSpec()!.sourceIntegrity } },
  });
  await svc.close();
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: join(dir, 'state'), port: 0, tls: false, pollIntervalMs: 3_600_000 });
  const kept = (await getProject('default'))!;
  assert.deepEqual(kept.spec?.sourceRepos, [repo.dir]);
  assert.deepEqual(kept.spec?.destinations ?? [], []);
  assert.ok(kept.spec?.sourceIntegrity, 'its policy stays');
});
