// The control module's HTTP API (docs/gitops.md) (Argo CD shapes) and `strait login|gpg|app`,
// with curl as a real client and the real CLI binary.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_SECRET, startGitOpsService, type GitOpsService } from '../../../src/gitops/control/index.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { listEvents } from '../../helpers/events.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { createGpgWorld, createRepo, type GpgWorld } from '../../helpers/signed-repo.js';
import { run, type RunResult } from '../../helpers/run.js';
import { waitFor } from '../../helpers/wait.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
let world: GpgWorld;
let store: ResourceStore;
let svc: GitOpsService;
let dir: string;
let server: string;
let password: string;

function strait(...args: string[]): Promise<RunResult> {
  return run(process.execPath, [join(root, 'bin', 'strait.js'), ...args], {
    env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), STRAIT_CONFIG_DIR: '' },
  });
}

async function curl(...args: string[]): Promise<{ status: number; body: unknown }> {
  const r = await run('curl', ['-sk', '-w', '\n%{http_code}', ...args]);
  const lines = r.stdout.trimEnd().split('\n');
  const status = Number(lines.pop());
  const text = lines.join('\n');
  return { status, body: text ? JSON.parse(text) : undefined };
}

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-gitops-api-'));
  store = tempEmbeddedStore();
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: true });
  server = `127.0.0.1:${svc.api.port}`;
  const secret = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
  password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
  writeFileSync(join(dir, 'alice.asc'), world.keys.alice.armored);
  writeFileSync(join(dir, 'two.asc'), world.keys.bob.armored + world.keys.carol.armored);
  writeFileSync(join(dir, 'junk.asc'), 'hello\n');
});

after(async () => {
  await svc?.close();
  await store?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the admin Secret is generated at first start with a base64 admin.password', async () => {
  assert.match(password, /^[A-Za-z0-9_-]{16}$/);
  const again = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false });
  const secret = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
  assert.equal(Buffer.from(secret!.data['admin.password']!, 'base64').toString(), password, 'kept across restarts');
  await again.close();
});

test('POST /api/v1/session with curl: token on success, 401 with a grpc-gateway error otherwise', async () => {
  const bad = await curl(
    '-X',
    'POST',
    `https://${server}/api/v1/session`,
    '-H',
    'content-type: application/json',
    '-d',
    '{"username":"admin","password":"nope"}',
  );
  assert.equal(bad.status, 401);
  assert.deepEqual(bad.body, { error: 'Invalid username or password', code: 16, message: 'Invalid username or password' });
  const ok = await curl('-X', 'POST', `https://${server}/api/v1/session`, '-d', JSON.stringify({ username: 'admin', password }));
  assert.equal(ok.status, 200);
  const token = (ok.body as { token: string }).token;
  assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const keys = await curl('-H', `Authorization: Bearer ${token}`, `https://${server}/api/v1/gpgkeys`);
  assert.equal(keys.status, 200);
  assert.deepEqual(keys.body, { metadata: {}, items: [] });
  assert.equal((await curl(`https://${server}/api/v1/gpgkeys`)).status, 401);
  assert.equal((await curl('-H', `Authorization: Bearer ${token}x`, `https://${server}/api/v1/gpgkeys`)).status, 401);
});

test('strait login: wrong password, untrusted certificate, then success with --insecure --grpc-web', async () => {
  const wrong = await strait('login', server, '--username', 'admin', '--password', 'nope', '--insecure');
  assert.equal(wrong.status, 6, wrong.stderr);
  assert.match(wrong.stderr, /STRAIT_ERR_GITOPS_LOGIN_FAILED: Invalid username or password/);
  const untrusted = await strait('login', server, '--username', 'admin', '--password', password);
  assert.equal(untrusted.status, 5, untrusted.stderr);
  assert.match(untrusted.stderr, /use --insecure/);
  const before = await strait('gpg', 'list');
  assert.equal(before.status, 6);
  assert.match(before.stderr, /strait login/);
  const ok = await strait('login', server, '--username', 'admin', '--password', password, '--insecure', '--grpc-web');
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, `'admin:login' logged in successfully\nContext '${server}' updated\n`);
  assert.equal(statSync(join(dir, 'config', 'strait', 'session.json')).mode & 0o777, 0o600);
});

/** A loopback TCP relay to `port` that keeps the first bytes a client sent on each connection. */
async function recordingRelay(port: number): Promise<{ port: number; firsts: string[]; close(): void }> {
  const firsts: string[] = [];
  const server = createServer((c) => {
    const up = createConnection({ host: '127.0.0.1', port });
    c.once('data', (d: Buffer) => firsts.push(d.subarray(0, 60).toString('latin1')));
    c.pipe(up).pipe(c);
    const drop = (): void => {
      c.destroy();
      up.destroy();
    };
    c.on('error', drop);
    up.on('error', drop);
    c.on('close', drop);
    up.on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    firsts,
    close: () => {
      server.close();
    },
  };
}

test('strait login speaks gRPC over HTTP/2 (h2c with --plaintext), gRPC-web over HTTP/1.1 with --grpc-web', async () => {
  const plain = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false });
  const relay = await recordingRelay(plain.api.port);
  try {
    const at = `127.0.0.1:${relay.port}`;
    const grpc = await strait('login', at, '--username', 'admin', '--password', password, '--plaintext');
    assert.equal(grpc.status, 0, grpc.stderr);
    assert.match(relay.firsts.at(-1)!, /^PRI \* HTTP\/2\.0\r\n/, 'the HTTP/2 connection preface');
    const web = await strait('login', at, '--username', 'admin', '--password', password, '--plaintext', '--grpc-web');
    assert.equal(web.status, 0, web.stderr);
    assert.match(relay.firsts.at(-1)!, /^POST \/session\.SessionService\/Create HTTP\/1\.1\r\n/);
    const rooted = await strait('login', at, '--username', 'admin', '--password', password, '--plaintext', '--grpc-web-root-path', '/argo-cd/');
    assert.equal(rooted.status, 0, rooted.stderr);
    assert.match(relay.firsts.at(-1)!, /^POST \/argo-cd\/session\.SessionService\/Create HTTP\/1\.1\r\n/);
    const wrong = await strait('login', at, '--username', 'admin', '--password', 'nope', '--plaintext');
    assert.equal(wrong.status, 6, wrong.stderr);
    assert.match(wrong.stderr, /STRAIT_ERR_GITOPS_LOGIN_FAILED/);
    // TLS client against a plain server: argocd's advice
    const tlsToPlain = await strait('login', at, '--username', 'admin', '--password', password, '--insecure');
    assert.equal(tlsToPlain.status, 5, tlsToPlain.stderr);
    assert.match(tlsToPlain.stderr, /--plaintext/);
  } finally {
    relay.close();
    await plain.close();
  }
  // gRPC over TLS (ALPN h2) with the self-signed certificate
  const tls = await strait('login', server, '--username', 'admin', '--password', password, '--insecure');
  assert.equal(tls.status, 0, tls.stderr);
});

test('strait gpg add|list|get|rm with argocd texts, and the ConfigMap entries', async () => {
  const add = await strait('gpg', 'add', '--from', join(dir, 'alice.asc'));
  assert.equal(add.status, 0, add.stderr);
  assert.equal(add.stdout, 'Created 1 key(s) from input file.\n');
  const again = await strait('gpg', 'add', '--from', join(dir, 'alice.asc'));
  assert.equal(again.stdout, 'Created 0 key(s) from input file, and 1 key(s) were skipped because they exist already.\n');
  assert.equal((await strait('gpg', 'add', '--from', join(dir, 'two.asc'))).stdout, 'Created 2 key(s) from input file.\n');
  const junk = await strait('gpg', 'add', '--from', join(dir, 'junk.asc'));
  assert.equal(junk.status, 2);
  assert.match(junk.stderr, /no usable ASCII-armored OpenPGP public key/);

  const list = await strait('gpg', 'list');
  assert.equal(list.status, 0, list.stderr);
  const lines = list.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^KEYID\s{3,}TYPE\s{3,}IDENTITY$/);
  const rows = new Map(lines.slice(1).map((l) => [l.split(/\s{3,}/)[0], l.split(/\s{3,}/)]));
  assert.deepEqual(rows.get(world.keys.alice.keyID), [world.keys.alice.keyID, 'ED25519', 'Alice Tester <alice@example.com>']);
  assert.deepEqual(rows.get(world.keys.bob.keyID), [world.keys.bob.keyID, 'RSA2048', 'Bob Tester <bob@example.com>']);
  assert.equal(rows.size, 3);

  const cm = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.ConfigMap, GPG_KEYS_CM, 'argocd');
  assert.deepEqual(Object.keys(cm!.data).sort(), [world.keys.alice.keyID, world.keys.bob.keyID, world.keys.carol.keyID].sort());
  assert.match(cm!.data[world.keys.alice.keyID]!, /^-----BEGIN PGP PUBLIC KEY BLOCK-----/);

  const get = await strait('gpg', 'get', world.keys.alice.fingerprint);
  assert.equal(get.status, 0, get.stderr);
  assert.match(
    get.stdout,
    new RegExp(
      `^Key ID:          ${world.keys.alice.keyID}\nKey fingerprint: ${world.keys.alice.fingerprint}\nKey subtype:     ED25519\nKey owner:       Alice Tester <alice@example.com>\nKey data follows until EOF:\n-----BEGIN PGP PUBLIC KEY BLOCK-----`,
    ),
  );
  const json = JSON.parse((await strait('gpg', 'get', world.keys.alice.keyID.toLowerCase(), '-o', 'json')).stdout);
  assert.deepEqual(Object.keys(json).sort(), ['fingerprint', 'keyData', 'keyID', 'owner', 'subType', 'trust']);

  for (const bad of ['1234', 'XYZ0123456789ABC', `${world.keys.alice.fingerprint}00`]) {
    const r = await strait('gpg', 'get', bad);
    assert.equal(r.status, 2, bad);
    assert.match(r.stderr, new RegExp(`: ${bad} is not a valid GnuPG key ID\\n$`));
    assert.equal((await strait('gpg', 'rm', bad)).status, 2);
  }
  const rm = await strait('gpg', 'rm', world.keys.carol.keyID);
  assert.equal(rm.stdout, `Deleted key with key ID ${world.keys.carol.keyID}\n`);
  const gone = await strait('gpg', 'get', world.keys.carol.keyID);
  assert.equal(gone.status, 3);
  assert.match(gone.stderr, /no GnuPG public key with ID/);
  assert.equal(svc.controller.keys.keyring.get(world.keys.carol.keyID), undefined, 'removed from the keyring at once');
});

test('strait app sync / get -o json show the refusal of an unsigned revision', async () => {
  const repo = createRepo(world, 'app-repo');
  repo.commit({ 'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\ndata: {v: "1"}\n' }, 'unsigned');
  const api = `${GROUPS.gitops}/v1alpha1`;
  await store.apply({
    apiVersion: api,
    kind: 'AppProject',
    metadata: { name: 'p', namespace: 'argocd' },
    spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], signatureKeys: [{ keyID: world.keys.alice.keyID }] },
  });
  await store.apply({
    apiVersion: api,
    kind: 'Application',
    metadata: { name: 'guestbook', namespace: 'argocd' },
    spec: {
      project: 'p',
      source: { repoURL: repo.dir, path: 'app', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'default' },
    },
  });
  await waitFor(
    async () => (await store.get<KubeObject & { status?: { sync?: { status: string } } }>(Kinds.Application, 'guestbook', 'argocd'))?.status?.sync?.status,
    10_000,
    'first reconcile',
  );
  const sync = await strait('app', 'sync', 'guestbook');
  assert.equal(sync.status, 1, sync.stderr);
  // why, on stderr (a refused sync used to exit 1 with nothing there)
  assert.match(sync.stderr, /^error STRAIT_ERR_GITOPS_SYNC_FAILED: sync of Application "guestbook" to [0-9a-f]{12} did not succeed: Revision is not signed\n$/);
  assert.match(sync.stdout, /Sync Status:\s+Sync Error/);
  assert.match(sync.stdout, /Last Sync:\s+Error at [0-9a-f]{12}: Revision is not signed/);
  assert.match(sync.stdout, /ComparisonError\s{3,}Revision is not signed/);
  const get = await strait('app', 'get', 'guestbook', '-o', 'json');
  assert.equal(get.status, 0, get.stderr);
  const app = JSON.parse(get.stdout);
  assert.equal(app.status.sync.status, 'Sync Error');
  assert.equal(app.status.operationState.message, 'Revision is not signed');
  assert.equal((await listEvents(store)).filter((e) => e.reason === 'ResourceComparison').length >= 1, true);
  const missing = await strait('app', 'get', 'nope');
  assert.equal(missing.status, 3);
});
