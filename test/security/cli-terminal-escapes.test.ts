// Terminal escapes from Git metadata: a collaborator commits under an author name carrying
// ESC sequences (git takes them), so that the admin's `strait app get`
// or `strait app sync` would erase the refusal line and paint `Synced` over it. The real CLI
// binary against a real control API and a real repository in strict mode (the refusal names
// the unsigned commit's author): every text output shows the control characters (`^[`, `^G`),
// none reaches the terminal; `-o json` and `-o yaml` still give the exact author.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ADMIN_SECRET, startGitOpsService, type GitOpsService } from '../../src/gitops/control/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { run, type RunResult } from '../helpers/run.js';
import { createGpgWorld, createRepo, type GpgWorld } from '../helpers/signed-repo.js';
import { waitFor } from '../helpers/wait.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
// erase the line, back to its first column, print a green "Synced"; set the window title; a C1 CSI
const AUTHOR = 'Eve\x1b[2K\x1b[1G\x1b[32mSynced\x1b[0m\x1b]0;pwned\x07\u009b2J';
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("control characters from Git metadata in the CLI's output", () => {
  let world: GpgWorld;
  let store: ResourceStore;
  let svc: GitOpsService;
  let dir: string;
  let unsigned: string;

  const strait = (...args: string[]): Promise<RunResult> =>
    run(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), STRAIT_CONFIG_DIR: '' } });

  before(async () => {
    world = createGpgWorld();
    dir = mkdtempSync(join(tmpdir(), 'strait-sec-escapes-'));
    store = tempEmbeddedStore();
    svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false });
    await svc.controller.keys.add(world.keys.alice.armored, false);
    const repo = createRepo(world, 'app-repo');
    repo.commit({ 'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\ndata: {v: "1"}\n' }, 'first', world.keys.alice);
    execFileSync('git', ['-c', `user.name=${AUTHOR}`, '-c', 'user.email=eve@example.com', 'commit', '-q', '--allow-empty', '-m', 'innocent'], {
      cwd: repo.dir,
      env: world.env,
    });
    unsigned = repo.git('rev-parse', 'HEAD');
    repo.commit({ 'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\ndata: {v: "2"}\n' }, 'signed on top', world.keys.alice);
    const api = `${GROUPS.gitops}/v1alpha1`;
    await store.apply({
      apiVersion: api,
      kind: 'AppProject',
      metadata: { name: 'p', namespace: 'argocd' },
      spec: {
        sourceRepos: ['*'],
        destinations: [{ server: '*', namespace: '*' }],
        sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }], gpg: { mode: 'strict', keys: [world.keys.alice.keyID] } }] } },
      },
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
      15_000,
      'first reconcile',
    );
    const secret = await store.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
    const password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
    const login = await strait('login', `127.0.0.1:${svc.api.port}`, '--username', 'admin', '--password', password, '--plaintext');
    assert.equal(login.status, 0, login.stderr);
  });

  after(async () => {
    await svc?.close();
    await store?.close();
    world?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("strait app sync and app get show the author's escapes as text; no control character is printed", async () => {
    const sync = await strait('app', 'sync', 'guestbook');
    assert.equal(sync.status, 1, sync.stderr);
    const get = await strait('app', 'get', 'guestbook');
    assert.equal(get.status, 0, get.stderr);
    const list = await strait('app', 'list');
    assert.equal(list.status, 0, list.stderr);
    for (const [what, text] of [
      ['app sync stdout', sync.stdout],
      ['app sync stderr', sync.stderr],
      ['app get', get.stdout],
      ['app list', list.stdout],
    ] as const) {
      assert.doesNotMatch(text, RAW, `${what} printed a raw control character: ${JSON.stringify(text)}`);
    }
    // the refusal names the commit and its author, visibly
    assert.match(
      get.stdout,
      new RegExp(
        `History commit ${unsigned} by Eve\\^\\[\\[2K\\^\\[\\[1G\\^\\[\\[32mSynced\\^\\[\\[0m\\^\\[\\]0;pwned\\^G\\\\u009b2J <eve@example.com> is not signed`,
      ),
    );
    assert.match(sync.stderr, /by Eve\^\[\[2K\^\[\[1G/);
  });

  test('-o json and -o yaml stay exact: the author comes back byte for byte', async () => {
    const json = await strait('app', 'get', 'guestbook', '-o', 'json');
    assert.equal(json.status, 0, json.stderr);
    assert.doesNotMatch(json.stdout, RAW);
    const a = JSON.parse(json.stdout) as { status: { operationState: { message: string } } };
    assert.ok(a.status.operationState.message.includes(`by ${AUTHOR} <eve@example.com>`), a.status.operationState.message);
    const yaml = await strait('app', 'get', 'guestbook', '-o', 'yaml');
    assert.equal(yaml.status, 0, yaml.stderr);
    assert.doesNotMatch(yaml.stdout, RAW);
    assert.deepEqual(parseYaml(yaml.stdout), a);
  });
});
