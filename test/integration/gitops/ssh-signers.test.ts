// SSH-signed commits through the control module (docs/gitops.md "SSH signatures"):
// allowed signers managed with the real `strait ssh-signers` CLI and curl against the
// REST API, stored in their ConfigMap, and Applications of projects with spec.sshSigners
// synced or refused with real `git commit -S` (gpg.format=ssh) commits.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  ADMIN_SECRET,
  ALLOWED_SIGNERS_KEY,
  startGitOpsService,
  type Application,
  type AppProject,
  type GitOpsService,
} from '../../../src/gitops/control/index.js';
import { GROUPS, Kinds, SSH_SIGNERS_CM } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { listEvents } from '../../helpers/events.js';
import { run, type RunResult } from '../../helpers/run.js';
import { hasSshKeygen, sshKey, sshWorkTree, type SshTestKey } from '../../helpers/ssh-signing.js';
import { waitFor } from '../../helpers/wait.js';

const skip = hasSshKeygen() ? false : 'ssh-keygen is not installed';
const NS = 'argocd';
const API = `${GROUPS.gitops}/v1alpha1`;
const root = process.env['STRAIT_ROOT'] ?? process.cwd();
let dir: string;
let store: ResourceStore;
let svc: GitOpsService;
let server: string;
let token: string;
let alice: SshTestKey;
let bob: SshTestKey;
let eve: SshTestKey;
let wt: ReturnType<typeof sshWorkTree>;
const c: Record<string, string> = {};

const cm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  value: ${value}\n`;

function strait(...args: string[]): Promise<RunResult> {
  return run(process.execPath, [join(root, 'bin', 'strait.js'), ...args], {
    env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), STRAIT_CONFIG_DIR: '' },
  });
}

async function project(name: string, spec: AppProject['spec']): Promise<void> {
  await store.apply({
    apiVersion: API,
    kind: 'AppProject',
    metadata: { name, namespace: NS },
    spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], ...spec },
  });
}

async function app(name: string, projectName: string, revision: string): Promise<void> {
  await store.apply({
    apiVersion: API,
    kind: 'Application',
    metadata: { name, namespace: NS },
    spec: {
      project: projectName,
      source: { repoURL: wt.dir, path: 'app', targetRevision: revision },
      destination: { server: 'https://kubernetes.default.svc', namespace: name },
      syncPolicy: { automated: {}, syncOptions: ['CreateNamespace=true'] },
    },
  });
}

function waitApp(name: string, pred: (a: Application) => boolean, what: string): Promise<Application> {
  return waitFor(
    async () => {
      const a = await store.get<Application>(Kinds.Application, name, NS);
      return a && pred(a) ? a : undefined;
    },
    20_000,
    `${name}: ${what}`,
  );
}

const condition = (a: Application): string => a.status?.conditions?.find((x) => x.type === 'ComparisonError')?.message ?? '';

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'strait-gitops-ssh-'));
  alice = sshKey(dir, 'alice');
  bob = sshKey(dir, 'bob', 'ecdsa', 256);
  eve = sshKey(dir, 'eve');
  wt = sshWorkTree(dir, alice);
  wt.commit('base', { sign: false });
  const mk = (value: string, opts: Parameters<typeof wt.commit>[1] = {}) => {
    mkdirSync(join(wt.dir, 'app'), { recursive: true });
    writeFileSync(join(wt.dir, 'app', 'cm.yaml'), cm(value));
    return wt.commit(value, opts);
  };
  c['alice'] = mk('alice');
  c['bob2025'] = mk('bob', { key: bob });
  c['eve'] = mk('eve', { key: eve });
  c['unsigned'] = mk('unsigned', { sign: false });

  store = tempEmbeddedStore();
  svc = await startGitOpsService({ store, namespace: NS, stateDir: dir, port: 0, tls: false });
  server = `127.0.0.1:${svc.api.port}`;
  const secret = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, NS);
  const password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
  const login = await strait('login', server, '--username', 'admin', '--password', password, '--plaintext');
  assert.equal(login.status, 0, login.stderr);
  const r = await fetch(`http://${server}/api/v1/session`, { method: 'POST', body: JSON.stringify({ username: 'admin', password }) });
  token = ((await r.json()) as { token: string }).token;
});

after(async () => {
  await svc?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("strait ssh-signers add|list|rm and the REST API keep git's allowed_signers text in its ConfigMap", { skip }, async () => {
  const add = await strait('ssh-signers', 'add', '--principals', 'alice@example.com', '--key', `${alice.path}.pub`, '--namespaces', 'git');
  assert.equal(add.status, 0, add.stderr);
  assert.equal(add.stdout, 'Created 1 allowed signer line(s).\n');
  writeFileSync(join(dir, 'allowed_signers'), `# the team\nbob@example.com valid-before="20250101Z" ${bob.pub}\n`);
  const file = await strait('ssh-signers', 'add', '-f', join(dir, 'allowed_signers'));
  assert.equal(file.status, 0, file.stderr);
  const again = await strait('ssh-signers', 'add', '-f', join(dir, 'allowed_signers'));
  assert.match(again.stdout, /skipped 1 key\(s\) that are listed already/);
  const bad = await strait('ssh-signers', 'add', '--principals', 'x@example.com', '--key', `${alice.path}.pub`, '--valid-before', '2025');
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /STRAIT_ERR_ALLOWED_SIGNERS_INVALID|valid-before="2025" is not YYYYMMDD/);
  const list = await strait('ssh-signers', 'list');
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /^FINGERPRINT\s+TYPE\s+PRINCIPALS\s+OPTIONS\n/);
  assert.match(list.stdout, new RegExp(`${alice.fingerprint.replace(/[+/]/g, '.')}\\s+ED25519\\s+alice@example.com\\s+namespaces="git"`));
  assert.match(list.stdout, /ECDSA-256\s+bob@example.com\s+valid-before=2025-01-01T00:00:00Z/);
  const cmap = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.ConfigMap, SSH_SIGNERS_CM, NS);
  assert.equal(cmap!.data[ALLOWED_SIGNERS_KEY], `alice@example.com namespaces="git" ${alice.pub}\nbob@example.com valid-before="20250101Z" ${bob.pub}\n`);
  // REST: unauthenticated changes refused; eve added and removed by fingerprint
  assert.equal((await fetch(`http://${server}/api/v1/sshsigners`, { method: 'POST', body: JSON.stringify({ allowedSigners: `e@x ${eve.pub}` }) })).status, 401);
  const auth = { authorization: `Bearer ${token}` };
  const created = await fetch(`http://${server}/api/v1/sshsigners`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ allowedSigners: `eve@example.com ${eve.pub}` }),
  });
  assert.equal(created.status, 200);
  assert.equal(((await created.json()) as { created: { items: { fingerprint: string }[] } }).created.items[0]!.fingerprint, eve.fingerprint);
  const rm = await strait('ssh-signers', 'rm', eve.fingerprint);
  assert.equal(rm.status, 0, rm.stderr);
  const gone = await strait('ssh-signers', 'rm', eve.fingerprint);
  assert.equal(gone.status, 3, gone.stderr);
  assert.match(gone.stderr, /no SSH allowed signer with key fingerprint/);
  const json = JSON.parse((await strait('ssh-signers', 'list', '-o', 'json')).stdout) as { fingerprint: string }[];
  assert.deepEqual(
    json.map((s) => s.fingerprint),
    [alice.fingerprint, bob.fingerprint],
  );
});

test('a bad line in the ConfigMap is reported as a Warning Event and the other lines still work', { skip }, async () => {
  const cmap = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.ConfigMap, SSH_SIGNERS_CM, NS);
  await store.update({ ...cmap!, data: { [ALLOWED_SIGNERS_KEY]: `${cmap!.data[ALLOWED_SIGNERS_KEY]}nobody@example.com frobnicate ${eve.pub}\n` } });
  await waitFor(
    async () => (await listEvents(store)).find((e) => e.reason === 'InvalidSshSignerEntry' && /line 3: unknown option "frobnicate"/.test(e.message)),
    10_000,
    'InvalidSshSignerEntry event',
  );
  assert.equal(svc.controller.sshSigners.signers.entries.length, 2);
});

test("Applications: SSH-signed revisions synced or refused by the project's sshSigners", { skip }, async () => {
  await project('ssh', { sshSigners: [{ principal: '*@example.com' }] });
  await project('only-bob', { sshSigners: [{ fingerprint: bob.fingerprint }] });
  await app('ssh-alice', 'ssh', c['alice']!);
  await app('ssh-eve', 'ssh', c['eve']!);
  await app('ssh-bob-late', 'ssh', c['bob2025']!);
  await app('ssh-unsigned', 'ssh', c['unsigned']!);
  await app('ssh-alice-not-bob', 'only-bob', c['alice']!);
  const ok = await waitApp('ssh-alice', (a) => a.status?.operationState?.phase === 'Succeeded', 'synced');
  assert.equal(ok.status?.signature?.status, 'valid');
  assert.equal(ok.status?.signature?.keyID, alice.fingerprint);
  assert.equal(ok.status?.operationState?.syncResult?.signer, `alice@example.com (${alice.fingerprint})`);
  assert.ok(await store.get(Kinds.ConfigMap, 'demo', 'ssh-alice'));
  const unknown = await waitApp('ssh-eve', (a) => a.status?.signature?.status === 'unknown-key', 'refused: unknown key');
  assert.match(
    condition(unknown),
    new RegExp(
      `signed with SSH key ${eve.fingerprint.replace(/[+/]/g, '.')} \\(ED25519\\), which is not in the SSH allowed signers \\(revision ${c['eve']}\\)`,
    ),
  );
  const late = await waitApp('ssh-bob-late', (a) => a.status?.signature?.status === 'expired', 'refused: expired at commit time');
  assert.match(condition(late), /valid before 2025-01-01T00:00:00Z only; the commit is dated 2025-06-01T12:00:00Z/);
  await waitApp('ssh-unsigned', (a) => a.status?.signature?.status === 'unsigned', 'refused: unsigned');
  const notBob = await waitApp('ssh-alice-not-bob', (a) => a.status?.signature?.status === 'not-allowed', 'refused: principal/key not allowed');
  assert.match(condition(notBob), /of alice@example.com, which is not allowed by the project's sshSigners/);
  assert.equal(await store.get(Kinds.ConfigMap, 'demo', 'ssh-eve'), undefined, 'nothing of a refused revision is applied');
  // removing alice from the allowed signers refuses her revision at the next reconcile
  const rm = await strait('ssh-signers', 'rm', alice.fingerprint);
  assert.equal(rm.status, 0, rm.stderr);
  await app('ssh-alice', 'ssh', c['alice']!);
  await svc.controller.refresh('ssh-alice');
  await waitApp('ssh-alice', (a) => a.status?.signature?.status === 'unknown-key', 'refused after rm');
});

test('a project whose sshSigners entry is malformed is refused with a clear message', { skip }, async () => {
  await assert.rejects(project('bad-ssh', { sshSigners: [{ fingerprint: 'MD5:00' }] }), /SHA256/);
});

test('sourceIntegrity strict with sshSigners: SSH-signed history back to a seal syncs; an unsigned commit after the seal is named', { skip }, async () => {
  const re = await strait('ssh-signers', 'add', '--principals', 'alice@example.com', '--key', `${alice.path}.pub`);
  assert.equal(re.status, 0, re.stderr);
  await waitFor(
    async () => svc.controller.sshSigners.signers.entries.some((e) => e.principals === 'alice@example.com') || undefined,
    10_000,
    'alice allowed again',
  );
  const policy = { repos: [{ url: '*' }], gpg: { mode: 'strict' as const, keys: [] } };
  await project('ssh-strict', { sourceIntegrity: { git: { policies: [policy] } }, sshSigners: [{ principal: 'alice@example.com' }] });
  const step = (value: string, opts: Parameters<typeof wt.commit>[1] = {}, message = value): string => {
    writeFileSync(join(wt.dir, 'app', 'cm.yaml'), cm(value));
    return wt.commit(message, opts);
  };
  // alice's commit has unsigned and foreign-signed ancestors: strict names the first that breaks the chain
  await app('ssh-strict-early', 'ssh-strict', c['alice']!);
  const early = await waitApp('ssh-strict-early', (a) => a.status?.signature?.failedCommit !== undefined, 'refused: history');
  assert.equal(early.status?.signature?.failedCommit, wt.git('rev-parse', `${c['alice']}^`).trim(), 'the unsigned base commit is named');
  assert.match(condition(early), /is not signed/);
  // a seal by alice vouches for what came before it; alice's next commit then syncs, the history checked in process
  step('sealed', {}, 'seal the history\n\nArgocd-gpg-seal: history reviewed');
  const good = step('after-seal');
  await app('ssh-strict', 'ssh-strict', good);
  const ok = await waitApp('ssh-strict', (a) => a.status?.operationState?.phase === 'Succeeded', 'synced in strict mode');
  assert.equal(ok.status?.signature?.status, 'valid');
  assert.equal(ok.status?.signature?.mode, 'strict');
  assert.equal(ok.status?.signature?.keyID, alice.fingerprint);
  // an unsigned commit after the seal, under a commit alice signed: refused, the unsigned commit named
  const hole = step('hole', { sign: false });
  const top = step('top');
  await app('ssh-strict', 'ssh-strict', top);
  const refused = await waitApp('ssh-strict', (a) => a.status?.signature?.failedCommit === hole, 'refused: unsigned history commit');
  assert.equal(refused.status?.signature?.status, 'history-unsigned');
  assert.match(condition(refused), new RegExp(hole));
});
