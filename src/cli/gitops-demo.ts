// `strait demo`: signed GitOps (docs/gitops.md, Demo) walked end to end on this machine, with the real
// tools: gpg makes a key, git commits and pushes over HTTP to the code-hosting server
// (users and token through its API), the `strait` CLI logs in and imports the key,
// a project enforces it, and the control module shows both outcomes: the unsigned
// revision refused, the signed one synced. Everything listens on 127.0.0.1 and lives
// in a temporary directory that is removed at the end (unless --keep).
// The steps that make an account's repository, key, working copy, pushes, AppProject and
// Application are exported: `strait demo gitops --world` (gitops-demo-world.ts) runs them in
// the running world.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { E } from '../base/errors/index.js';
import type { GithostServer } from '../githost/server/index.js';
import type { KubeObject, openEmbeddedStore } from '../platform/store/index.js';
import { shellWord } from './world-file.js';

export interface DemoOptions {
  keep: boolean;
  out: (line: string) => void;
}

interface Proc {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runTool(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', (err) => reject(E.systemTool(cmd, 'not started', err.message)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => undefined); // the program may exit without reading its input
    child.stdin.end(opts.input ?? '');
  });
}

async function must(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<string> {
  const r = await runTool(cmd, args, opts);
  if (r.code !== 0) throw E.systemTool(`${cmd} ${args.join(' ')}`, r.code ?? 'signal', r.stderr || r.stdout);
  return r.stdout;
}

async function http(
  method: string,
  url: string,
  opts: { basic?: [string, string]; token?: string; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.basic) headers['authorization'] = `Basic ${Buffer.from(opts.basic.join(':')).toString('base64')}`;
  if (opts.token) headers['authorization'] = `token ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Poll `fn` until it returns a value; STRAIT_ERR_INTERNAL naming `what` after `ms`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw E.internal(`demo: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A code-hosting account and the identity its commits and OpenPGP key carry. */
export interface DemoAccount {
  username: string;
  password: string;
  fullName: string;
  email: string;
}

const DEVELOPER: DemoAccount = { username: 'developer', password: 'developer-pass', fullName: 'Developer', email: 'developer@example.com' };

/** What every step of a demo shares: its directory, the tools' environment, the output, what to close at the end. */
export interface DemoRun {
  dir: string;
  env: NodeJS.ProcessEnv;
  say: (line: string) => void;
  cleanups: (() => Promise<void> | void)[];
}

/** The tools' environment under `dir`: their own HOME, GnuPG home and git configuration, none of the user's. */
export function demoToolEnv(dir: string): NodeJS.ProcessEnv {
  const home = join(dir, 'home');
  const gnupg = join(dir, 'gnupg');
  mkdirSync(home, { recursive: true });
  mkdirSync(gnupg, { recursive: true, mode: 0o700 });
  return {
    PATH: process.env['PATH'],
    HOME: home,
    GNUPGHOME: gnupg,
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    XDG_CONFIG_HOME: join(home, '.config'),
  };
}

/** Stop the gpg-agent the demo's GnuPG home started (it outlives gpg otherwise). */
export async function stopDemoGpgAgent(env: NodeJS.ProcessEnv): Promise<void> {
  await runTool('gpgconf', ['--kill', 'all'], { env }).catch(() => undefined);
}

type Store = ReturnType<typeof openEmbeddedStore>;

/**
 * Steps 1-3: the code-hosting server, its first admin made locally (never through the API:
 * docs/githost.md), a token, a user and a repository through the API.
 */
async function demoGithost(d: DemoRun): Promise<{ gh: GithostServer; ghURL: string; cloneURL: string }> {
  const { GithostDb, GithostServer, createUser, githostPaths } = await import('../githost/server/index.js');
  const ghDir = join(d.dir, 'githost-state');
  const paths = githostPaths(ghDir);
  mkdirSync(paths.root, { recursive: true });
  const db = new GithostDb(paths.db);
  await createUser(db, { username: 'gitea_admin', password: 'demo-admin-pass', email: 'admin@example.com', admin: true });
  db.close();
  const gh = new GithostServer({ stateDir: ghDir, settings: { port: 0 } });
  const ghURL = await gh.listen();
  d.cleanups.push(() => gh.close());
  d.say(`[1] code-hosting server on ${ghURL} (first admin gitea_admin created with the local admin tool)`);

  // token, user, user id, repository through the API
  const tok = await http('POST', `${ghURL}/api/v1/users/gitea_admin/tokens`, {
    basic: ['gitea_admin', 'demo-admin-pass'],
    body: { name: 'demo', scopes: ['all'] },
  });
  const adminToken = String(tok.body['sha1'] ?? '');
  if (!adminToken) throw E.internal(`demo: token creation answered ${tok.status}`);
  d.say(`[2] POST /api/v1/users/gitea_admin/tokens -> token ${adminToken.slice(0, 8)}...`);
  const created = await http('POST', `${ghURL}/api/v1/admin/users`, {
    token: adminToken,
    body: {
      email: DEVELOPER.email,
      login_name: DEVELOPER.username,
      must_change_password: false,
      password: DEVELOPER.password,
      send_notify: false,
      username: DEVELOPER.username,
    },
  });
  const user = await http('GET', `${ghURL}/api/v1/users/${DEVELOPER.username}`, { token: adminToken });
  d.say(`[3] POST /api/v1/admin/users -> ${created.status}; GET /api/v1/users/${DEVELOPER.username} -> id ${String(user.body['id'])}`);
  return { gh, ghURL, cloneURL: await createDemoRepo(ghURL, DEVELOPER, 'guestbook') };
}

/** A repository of the account, made through the code-hosting API; its clone_url. */
export async function createDemoRepo(ghURL: string, account: DemoAccount, name: string): Promise<string> {
  const repo = await http('POST', `${ghURL}/api/v1/user/repos`, { basic: [account.username, account.password], body: { name } });
  if (repo.status !== 201) throw E.internal(`demo: creating repository ${account.username}/${name} answered ${repo.status} ${JSON.stringify(repo.body)}`);
  return String(repo.body['clone_url']);
}

/**
 * An OpenPGP key (ed25519) made by gpg for the account, its public key written to
 * `publicKeyFile` and added to the account on the code-hosting server.
 */
export async function makeDemoKey(
  d: DemoRun,
  ghURL: string,
  account: DemoAccount,
  publicKeyFile: string,
): Promise<{ fpr: string; keyID: string; githostStatus: number }> {
  const env = d.env;
  const uid = `${account.fullName} <${account.email}>`;
  await must('gpg', ['--batch', '--pinentry-mode', 'loopback', '--passphrase', '', '--quick-gen-key', uid, 'ed25519', 'sign', '1y'], { env });
  const colons = await must('gpg', ['--batch', '--with-colons', '--fingerprint', '--list-keys', account.email], { env });
  const fpr = /^fpr:+([0-9A-F]{40}):/m.exec(colons)?.[1] ?? '';
  const armored = await must('gpg', ['--batch', '--armor', '--export', fpr], { env });
  writeFileSync(publicKeyFile, armored);
  const gk = await http('POST', `${ghURL}/api/v1/user/gpg_keys`, { basic: [account.username, account.password], body: { armored_public_key: armored } });
  return { fpr, keyID: fpr.slice(24), githostStatus: gk.status };
}

/** Step 4: the developer's key. */
async function demoKey(d: DemoRun, ghURL: string): Promise<{ fpr: string; keyID: string }> {
  const key = await makeDemoKey(d, ghURL, DEVELOPER, join(d.dir, 'developer.asc'));
  d.say(`[4] gpg made key ${key.keyID} for ${DEVELOPER.email}; added to the code-hosting server (${key.githostStatus})`);
  return key;
}

/** `git` in the working copy `work`, with the demo's tools' environment. */
export type DemoGit = (...args: string[]) => Promise<string>;

/**
 * A working copy in `work` for the repository at `cloneURL`: branch main, the account's name
 * and e-mail, `origin` the clone URL, the password in a git credential store beside it (0600),
 * so `git push` works there as it is.
 */
export async function initDemoWork(d: DemoRun, work: string, account: DemoAccount, cloneURL: string): Promise<DemoGit> {
  mkdirSync(work, { recursive: true });
  const git: DemoGit = (...args) => must('git', args, { cwd: work, env: d.env });
  const u = new URL(cloneURL);
  const credentials = join(d.dir, 'git-credentials');
  writeFileSync(credentials, `${u.protocol}//${encodeURIComponent(account.username)}:${encodeURIComponent(account.password)}@${u.host}\n`, {
    mode: 0o600,
  });
  await git('init', '-q', '-b', 'main');
  await git('config', 'user.name', account.fullName);
  await git('config', 'user.email', account.email);
  await git('config', 'credential.helper', `store --file ${shellWord(credentials)}`);
  await git('remote', 'add', 'origin', cloneURL);
  return git;
}

/** The demo's manifest: the ConfigMap guestbook-ui with the release in its data. */
export const guestbookManifest = (release: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook-ui\ndata:\n  release: "${release}"\n`;

/** Write guestbook/ui.yaml for `release`, commit it (signed with `signingKey`, a fingerprint, when given) and push main; the commit's SHA. */
export async function pushRelease(git: DemoGit, work: string, release: string, signingKey?: string): Promise<string> {
  mkdirSync(join(work, 'guestbook'), { recursive: true });
  writeFileSync(join(work, 'guestbook', 'ui.yaml'), guestbookManifest(release));
  await git('add', '-A');
  if (signingKey) await git('-c', `user.signingkey=${signingKey}`, 'commit', '-q', '-S', '-m', `release ${release}`);
  else await git('commit', '-q', '-m', `release ${release}`);
  const sha = (await git('rev-parse', 'HEAD')).trim();
  await git('push', '-q', '--set-upstream', 'origin', 'main');
  return sha;
}

/** Steps 5-6: the control module with its own store (TLS, a self-signed certificate), pushes notified; the `strait` CLI logs in and imports the key. */
async function demoControl(d: DemoRun, gh: GithostServer, ghURL: string): Promise<Store> {
  const { startGitOpsService, ADMIN_SECRET } = await import('../gitops/control/index.js');
  const { openEmbeddedStore } = await import('../platform/store/index.js');
  const { Kinds } = await import('../platform/resources/index.js');
  const store = openEmbeddedStore({ dir: join(d.dir, 'store') });
  d.cleanups.push(() => store.close());
  const svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: join(d.dir, 'control'), port: 0, tls: true, pollIntervalMs: 3_600_000 });
  d.cleanups.push(() => svc.close());
  gh.onPush((e) => svc.controller.notifyPush(`${ghURL}/${e.owner}/${e.repo}.git`));
  const secret = await store.get<{ data: Record<string, string> } & { apiVersion: string; kind: string; metadata: { name: string } }>(
    Kinds.Secret,
    ADMIN_SECRET,
    'argocd',
  );
  const password = Buffer.from(secret?.data['admin.password'] ?? '', 'base64').toString();
  const server = `127.0.0.1:${svc.api.port}`;
  d.say(`[5] control module API on ${svc.api.url}; admin password read from Secret argocd/${ADMIN_SECRET} field admin.password`);

  // key import through the CLI
  const strait = fileURLToPath(new URL('../../../bin/strait.js', import.meta.url));
  const cli = async (...args: string[]): Promise<string> => {
    const r = await runTool(process.execPath, [strait, ...args], { env: d.env });
    if (r.code !== 0) throw E.systemTool(`strait ${args.join(' ')}`, r.code ?? 'signal', r.stderr);
    return r.stdout.trim();
  };
  d.say(`[6] $ strait login ${server} --username admin --password ****** --insecure --grpc-web`);
  d.say(`    ${(await cli('login', server, '--username', 'admin', '--password', password, '--insecure', '--grpc-web')).split('\n').join('\n    ')}`);
  d.say(`    $ strait gpg add --from developer.asc`);
  d.say(`    ${await cli('gpg', 'add', '--from', join(d.dir, 'developer.asc'))}`);
  d.say(`    $ strait gpg list`);
  d.say(`    ${(await cli('gpg', 'list')).split('\n').join('\n    ')}`);
  return store;
}

type App = {
  status?: {
    sync?: { status?: string; revision?: string };
    operationState?: { message?: string; syncResult?: { signer?: string } };
    conditions?: { type: string; message: string }[];
  };
};

/** The demo's AppProject `signed`: only revisions signed by `keyID`, into namespace guestbook of the control module's own cluster. */
export function signedProject(api: string, keyID: string, owner: string): KubeObject {
  return {
    apiVersion: api,
    kind: 'AppProject',
    metadata: { name: 'signed', namespace: 'argocd' },
    spec: {
      description: `only revisions signed by ${owner}'s key`,
      sourceRepos: ['*'],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'guestbook' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      signatureKeys: [{ keyID }],
    },
  };
}

/** The demo's Application `guestbook`: the repository's guestbook/ on main, synced automatically into namespace guestbook. */
export function guestbookApplication(api: string, repoURL: string): KubeObject {
  return {
    apiVersion: api,
    kind: 'Application',
    metadata: { name: 'guestbook', namespace: 'argocd' },
    spec: {
      project: 'signed',
      source: { repoURL, path: 'guestbook', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  };
}

/**
 * Steps 7-9: the project enforces the key, the Application follows main; an unsigned commit is
 * refused, then a signed one syncs. True when both outcomes are as documented.
 */
async function demoOutcomes(d: DemoRun, store: Store, cloneURL: string, key: { fpr: string; keyID: string }): Promise<boolean> {
  const { GROUPS, Kinds } = await import('../platform/resources/index.js');
  const api = `${GROUPS.gitops}/v1alpha1`;
  await store.apply(signedProject(api, key.keyID, DEVELOPER.fullName));
  d.say(`[7] AppProject signed: signatureKeys [${key.keyID}]`);

  // an unsigned commit, pushed
  const work = join(d.dir, 'work');
  const git = await initDemoWork(d, work, DEVELOPER, cloneURL);
  const unsigned = await pushRelease(git, work, '1-unsigned');
  await store.apply(guestbookApplication(api, cloneURL));
  const getApp = async (): Promise<App | undefined> => store.get(Kinds.Application, 'guestbook', 'argocd') as Promise<App | undefined>;
  const refused = await until('Sync Error', async () => {
    const a = await getApp();
    return a?.status?.sync?.status === 'Sync Error' ? a : undefined;
  });
  const liveAfterRefusal = await store.get(Kinds.ConfigMap, 'guestbook-ui', 'guestbook');
  const cond = refused.status?.conditions?.find((c) => c.type === 'ComparisonError');
  const events = (await store.list(Kinds.Event)).items.filter((e) => (e as unknown as { reason: string }).reason === 'ResourceComparison');
  d.say(
    `[8] unsigned commit ${unsigned.slice(0, 12)} pushed -> Application guestbook: ${refused.status?.sync?.status}; ` +
      `last sync: "${refused.status?.operationState?.message}"; condition ${cond?.type ?? '(none)'}; Event ResourceComparison x${events.length}; ` +
      `applied: ${liveAfterRefusal ? 'yes (WRONG)' : 'nothing'}`,
  );

  // a signed commit, pushed: the push notification syncs at once
  const signed = await pushRelease(git, work, '2-signed', key.fpr);
  const synced = await until('Synced', async () => {
    const a = await getApp();
    return a?.status?.sync?.status === 'Synced' ? a : undefined;
  });
  const live = await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'guestbook-ui', 'guestbook');
  d.say(
    `[9] signed commit ${signed.slice(0, 12)} pushed -> Application guestbook: ${synced.status?.sync?.status} to ${synced.status?.sync?.revision?.slice(0, 12)}, ` +
      `signed by ${synced.status?.operationState?.syncResult?.signer}; ConfigMap guestbook/guestbook-ui release=${live?.data?.['release']}`,
  );
  return (
    refused.status?.operationState?.message === 'Revision is not signed' &&
    !liveAfterRefusal &&
    synced.status?.sync?.revision === signed &&
    live?.data?.['release'] === '2-signed'
  );
}

export async function runGitopsDemo(opts: DemoOptions): Promise<boolean> {
  const say = opts.out;
  const dir = mkdtempSync(join(tmpdir(), 'strait-demo-'));
  const env = demoToolEnv(dir);
  const d: DemoRun = { dir, env, say, cleanups: [] };
  say(`strait demo: signed GitOps (docs/gitops.md) in ${dir}`);
  try {
    const { gh, ghURL, cloneURL } = await demoGithost(d);
    const key = await demoKey(d, ghURL);
    const store = await demoControl(d, gh, ghURL);
    const ok = await demoOutcomes(d, store, cloneURL, key);
    say(ok ? 'demo: both outcomes as docs/gitops.md describes' : 'demo: an outcome differs from docs/gitops.md (see above)');
    return ok;
  } finally {
    for (const c of d.cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
    await stopDemoGpgAgent(env);
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    else say(`kept ${dir}`);
  }
}
