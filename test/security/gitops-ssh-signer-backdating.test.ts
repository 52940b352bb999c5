// Attack: an SSH signer's permission ended (allowed_signers valid-before="20200101Z", or a
// certificate that expired in 2020), but the signer still holds the key. The committer date
// is whatever the signer writes, so a commit signed today and dated 2019 would be judged
// "valid at its commit time" and sync under enforcement. The key (and certificate) must also
// be valid when the controller verifies, as OpenPGP keys are.
// End to end: real ssh-keygen and git (gpg.format=ssh) with a backdated GIT_COMMITTER_DATE,
// the allowed signers added through the control API, a real Application synced by the
// control module; the certificate case through the same verifier with ssh-keygen's certificate.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureAdminSecret, startGitOpsService, type Application, type GitOpsService } from '../../src/gitops/control/index.js';
import { AllowedSigners, verifyDetached } from '../../src/platform/signatures/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import type { ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { hasSshKeygen, sshKey, sshWorkTree, type SshTestKey } from '../helpers/ssh-signing.js';
import { waitFor } from '../helpers/wait.js';

const skip = hasSshKeygen() ? false : 'ssh-keygen is not installed';
let svc: GitOpsService;
let store: ResourceStore;
let dir: string;
let bob: SshTestKey;
let token = '';
const V = `${GROUPS.gitops}/v1alpha1`;

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'strait-ssh-backdate-'));
  bob = sshKey(dir, 'bob');
  store = tempEmbeddedStore();
  const password = (await ensureAdminSecret(store, 'argocd')).password;
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: join(dir, 'state'), port: 0, tls: false, pollIntervalMs: 3_600_000 });
  const r = await fetch(`${svc.api.url}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  token = ((await r.json()) as { token: string }).token;
});

after(async () => {
  await svc?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a commit signed today by a key whose allowed_signers line ended in 2020, dated 2019, is refused (expired), nothing applied', { skip }, async () => {
  const added = await fetch(`${svc.api.url}/api/v1/sshsigners`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ allowedSigners: `bob@example.com valid-before="20200101Z" ${bob.pub}\n` }),
  });
  assert.equal(added.status, 200, await added.text());
  const wt = sshWorkTree(dir, bob, { name: 'Bob', email: 'bob@example.com' });
  mkdirSync(join(wt.dir, 'app'));
  writeFileSync(join(wt.dir, 'app', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  value: "backdated"\n');
  const sha = wt.commit('backdated', { date: '2019-06-01T12:00:00Z' });
  await store.apply({
    apiVersion: V,
    kind: 'AppProject',
    metadata: { name: 'ssh', namespace: 'argocd' },
    spec: {
      sourceRepos: ['*'],
      destinations: [{ server: '*', namespace: '*' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      sshSigners: [{ principal: '*@example.com' }],
    },
  });
  await store.apply({
    apiVersion: V,
    kind: 'Application',
    metadata: { name: 'backdated', namespace: 'argocd' },
    spec: {
      project: 'ssh',
      source: { repoURL: wt.dir, path: 'app', targetRevision: sha },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'backdated' },
      syncPolicy: { automated: {}, syncOptions: ['CreateNamespace=true'] },
    },
  });
  const a = await waitFor(
    async () => {
      const x = await store.get<Application>(Kinds.Application, 'backdated', 'argocd');
      return x?.status?.sync?.status === 'Synced' || x?.status?.sync?.status === 'Sync Error' ? x : undefined;
    },
    20_000,
    'settled',
  );
  assert.equal(a.status?.sync?.status, 'Sync Error', JSON.stringify(a.status?.signature));
  assert.equal(a.status?.signature?.status, 'expired');
  assert.match(
    a.status?.operationState?.message ?? '',
    /valid before 2020-01-01T00:00:00Z only \(checked when verified, 20\d\d-.*the commit is dated 2019-06-01T12:00:00Z/,
  );
  assert.equal(await store.get(Kinds.ConfigMap, 'demo', 'backdated'), undefined, 'nothing applied');
});

test('a certificate that expired in 2020 signing data dated 2019 is expired when verified now, valid only when verified in its window', { skip }, async () => {
  // ssh-keygen signs with a certificate through an agent holding its key
  const sock = join(dir, 'agent.sock');
  const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100 && spawnSync('test', ['-S', sock]).status !== 0; i++) await new Promise((r) => setTimeout(r, 20));
    const ca = sshKey(dir, 'ca');
    const carol = sshKey(dir, 'carol');
    execFileSync('ssh-keygen', ['-q', '-s', ca.path, '-I', 'carol', '-n', 'carol@example.com', '-V', '20190101:20200101', `${carol.path}.pub`]);
    execFileSync('ssh-add', ['-q', carol.path], { env: { ...process.env, SSH_AUTH_SOCK: sock } });
    const data = Buffer.from('tree 0\n');
    const armored = execFileSync('ssh-keygen', ['-Y', 'sign', '-q', '-f', `${carol.path}-cert.pub`, '-n', 'git'], {
      input: data,
      encoding: 'utf8',
      env: { ...process.env, SSH_AUTH_SOCK: sock },
    });
    const signers = AllowedSigners.parse(`*@example.com cert-authority ${ca.pub}\n`);
    const now = await verifyDetached(data, armored, [], { sshSigners: signers, signedAt: new Date('2019-06-01T00:00:00Z') });
    assert.equal(now.status, 'expired', now.message);
    assert.match(now.message, /certificate expired at 2020-01-01T00:00:00Z \(checked when verified/);
    const then = await verifyDetached(data, armored, [], {
      sshSigners: signers,
      signedAt: new Date('2019-06-01T00:00:00Z'),
      now: new Date('2019-07-01T00:00:00Z'),
    });
    assert.equal(then.status, 'valid', then.message);
    assert.equal(then.keyExpires, '2020-01-01T00:00:00.000Z', 'a cached verdict is re-judged when the certificate ends');
  } finally {
    if (agent.pid) process.kill(agent.pid);
  }
});
