// Attack regressions for signed GitOps (docs/gitops.md).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { checkToken, issueToken, RepoCache, renderManifests, startGitOpsService, type GitOpsService } from '../../src/gitops/control/index.js';
import { Keyring, readPublicKeys, verifyCommitSignature, verifyTagSignature } from '../../src/platform/signatures/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../helpers/signed-repo.js';

let world: GpgWorld;
let repo: TestRepo;
let keyring: Keyring;
let dir: string;
const cat = (type: string, sha: string): Buffer => execFileSync('git', ['cat-file', type, sha], { cwd: repo.dir });

before(async () => {
  world = createGpgWorld();
  repo = createRepo(world);
  keyring = await Keyring.fromKeys(await readPublicKeys(world.keys.bob.armored + world.keys.alice.armored));
  dir = mkdtempSync(join(tmpdir(), 'strait-sec-'));
});
after(() => {
  world?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test('a signature transplanted from one commit onto another is a bad signature', async () => {
  const a = repo.commit({ 'f.yaml': 'a: 1\n' }, 'good', world.keys.bob);
  const b = repo.commit({ 'f.yaml': 'a: 2\n' }, 'evil');
  const sig = /\ngpgsig ([\s\S]*?-----END PGP SIGNATURE-----)\n/.exec(cat('commit', a).toString())![1]!;
  const raw = cat('commit', b)
    .toString()
    .replace(/\ncommitter ([^\n]*)\n/, (m) => `${m}gpgsig ${sig}\n`);
  const r = await verifyCommitSignature(Buffer.from(raw), keyring);
  assert.equal(r.status, 'bad-signature', r.message);
});

test('extra headers or a second gpgsig header cannot change what was signed', async () => {
  const a = repo.commit({ 'f.yaml': 'a: 3\n' }, 'good', world.keys.bob);
  const raw = cat('commit', a).toString();
  const withTree = raw.replace(/^tree [0-9a-f]+/, 'tree 0000000000000000000000000000000000000000');
  assert.equal((await verifyCommitSignature(Buffer.from(withTree), keyring)).status, 'bad-signature');
  const extraHeader = raw.replace(/\n\n/, '\nencoding evil\n\n');
  assert.equal((await verifyCommitSignature(Buffer.from(extraHeader), keyring)).status, 'bad-signature');
  const secondSig = raw.replace(/\n\n/, '\ngpgsig-sha256 junk\n\n');
  const r = await verifyCommitSignature(Buffer.from(secondSig), keyring);
  assert.equal(r.status, 'valid', 'an extra signature header is removed from the payload like git does; the content is unchanged');
});

test('a tag signature moved onto another tag object is a bad signature', async () => {
  const c = repo.commit({}, 'c');
  repo.tag('t-good', c, { annotated: true, signer: world.keys.bob, message: 'release' });
  const raw = cat('tag', repo.git('rev-parse', 't-good')).toString().replace('tag t-good', 'tag t-evil');
  assert.equal((await verifyTagSignature(Buffer.from(raw), keyring)).status, 'bad-signature');
});

test('repoURL cannot run commands through git (ext:: transport, option injection)', async () => {
  const cache = new RepoCache(join(dir, 'repos'));
  const marker = join(dir, 'pwned');
  for (const url of [`ext::sh -c touch% ${marker}`, `--upload-pack=touch ${marker}`]) {
    await assert.rejects(cache.sync(url), (e: unknown) => isStraitError(e, 'STRAIT_ERR_GITOPS_FETCH'));
  }
  assert.equal(existsSync(marker), false);
  await cache.sync(repo.dir);
  for (const rev of ['--output=/tmp/x', 'main;touch x', '../../etc', '@{-1}']) {
    await assert.rejects(cache.resolve(repo.dir, rev), (e: unknown) => isStraitError(e, 'STRAIT_ERR_GITOPS_REVISION_NOT_FOUND'), rev);
  }
});

test('kustomization resources cannot leave the repository', () => {
  const files = [{ path: 'app/kustomization.yaml', content: 'resources:\n- ../../etc/passwd\n' }];
  assert.throws(
    () => renderManifests(files, 'app'),
    (e: unknown) => isStraitError(e, 'STRAIT_ERR_MANIFEST_INVALID') && /inside the repository/.test(e.message),
  );
});

test('session tokens: forged, re-signed, expired or alg=none tokens are refused', () => {
  const account = { password: 'pw', secretKey: Buffer.alloc(32, 7) };
  const other = { password: 'pw', secretKey: Buffer.alloc(32, 8) };
  const t = issueToken(account, 'admin');
  assert.equal(checkToken(account, t), 'admin');
  assert.equal(checkToken(account, issueToken(other, 'admin')), undefined);
  const [h, b] = t.split('.');
  const body = JSON.parse(Buffer.from(b!, 'base64url').toString());
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...body, sub: 'root' })).toString('base64url')}.${t.split('.')[2]}`;
  assert.equal(checkToken(account, forged), undefined);
  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${b}.`;
  assert.equal(checkToken(account, none), undefined);
  assert.equal(checkToken(account, issueToken(account, 'admin', Date.now() - 2 * 86400_000)), undefined);
});

test('the API refuses oversized bodies and unauthenticated key changes', async () => {
  const store = tempEmbeddedStore();
  const svc: GitOpsService = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false });
  try {
    const big = await fetch(`${svc.api.url}/api/v1/session`, { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) }).catch(() => undefined);
    assert.ok(big === undefined || big.status === 413);
    const add = await fetch(`${svc.api.url}/api/v1/gpgkeys`, { method: 'POST', body: JSON.stringify({ keyData: world.keys.eve.armored }) });
    assert.equal(add.status, 401);
    const del = await fetch(`${svc.api.url}/api/v1/gpgkeys?keyID=${world.keys.eve.keyID}`, { method: 'DELETE' });
    assert.equal(del.status, 401);
    assert.equal(svc.controller.keys.keyring.size, 0);
  } finally {
    await svc.close();
    await store.close();
  }
});
