// `strait demo gitops --world`: the signed-GitOps scenario of README.md ("Signed GitOps") set up
// in the running world, with the steps of `strait demo` (gitops-demo.ts) and the real gpg and
// git: a githost user `alice` (made with the local admin tool, as `strait admin user create`)
// and her repository `guestbook` with a manifest, an OpenPGP key in a directory of its own
// (<state dir>/gitops-demo unless --dir) whose public key goes to ./alice.asc, a signed commit
// pushed, and in the control module's cluster the AppProject `signed` that requires that key
// and the Application `guestbook` following the repository's clone_url (the host URL the world
// keeps working across restarts, docs/world.md). The key is not imported: that, the login and
// the sync are the README's own lines, printed at the end. It sets up once: when anything it
// would make is already there it changes nothing and says what (STRAIT_ERR_GITOPS_DEMO_EXISTS).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { E } from '../base/errors/index.js';
import { stateFiles } from '../platform/cli-kit/index.js';
import { GROUPS, Kinds } from '../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../platform/store/index.js';
import {
  createDemoRepo,
  demoToolEnv,
  guestbookApplication,
  initDemoWork,
  makeDemoKey,
  pushRelease,
  signedProject,
  stopDemoGpgAgent,
  type DemoAccount,
  type DemoRun,
  until,
} from './gitops-demo.js';
import { runningWorld, shellWord } from './world-file.js';

export interface WorldSetupOptions {
  stateDir: string;
  /** where the GnuPG home, the working copy and the git credentials go (default <state dir>/gitops-demo) */
  dir?: string;
  /** the public key's file, as the user wrote it (default alice.asc, in the working directory) */
  publicKey: string;
  out: (line: string) => void;
  /** how long to wait for the controller's first verdict on the Application (it is printed, not required) */
  verdictWaitMs?: number;
}

export interface WorldSetup {
  dir: string;
  publicKeyFile: string;
  keyID: string;
  fingerprint: string;
  repoURL: string;
  /** the working copy (git push works there as it is; GNUPGHOME=<dir>/gnupg to sign) */
  work: string;
  signedCommit: string;
  /** the README's lines that follow, for this world */
  next: string[];
}

const NAMESPACE = 'argocd';
const PROJECT = 'signed';
const APP = 'guestbook';
const REPO = 'guestbook';

type App = KubeObject & { status?: { sync?: { status?: string; revision?: string }; conditions?: { type: string; message: string }[] } };

/** `~/…` for a path under the home directory (as the README writes it), else the path as a shell word. */
function homePath(p: string): string {
  const home = homedir();
  const rest = p.startsWith(`${home}/`) ? p.slice(home.length + 1) : undefined;
  return rest !== undefined && shellWord(rest) === rest ? `~/${rest}` : shellWord(p);
}

/** What of the setup is already there (githost user or e-mail, objects, directory, key file), in words. */
async function existing(
  stateDir: string,
  store: ResourceStore,
  cluster: string,
  account: DemoAccount,
  dir: string,
  publicKey: string,
  publicKeyFile: string,
): Promise<string[]> {
  const found: string[] = [];
  const { GithostDb, githostPaths } = await import('../githost/server/index.js');
  const db = new GithostDb(githostPaths(stateDir).db);
  try {
    if (db.userByName(account.username)) found.push(`githost user ${JSON.stringify(account.username)}`);
    else if (db.userByEmail(account.email)) found.push(`a githost user with e-mail ${account.email}`);
  } finally {
    db.close();
  }
  for (const [kind, name] of [
    [Kinds.Application, APP],
    [Kinds.AppProject, PROJECT],
  ] as const) {
    if (await store.get(kind, name, NAMESPACE)) found.push(`${kind.kind} ${NAMESPACE}/${name} in ${cluster}`);
  }
  if (existsSync(dir)) found.push(`directory ${dir}`);
  if (existsSync(publicKeyFile)) found.push(`file ${publicKey} (pass --public-key FILE for another)`);
  return found;
}

/** The controller's first verdict on the Application (undefined when none came within `ms`). */
function firstVerdict(store: ResourceStore, ms: number): Promise<App | undefined> {
  return until(
    'the first verdict',
    async () => {
      const a = await store.get<App>(Kinds.Application, APP, NAMESPACE);
      return a?.status?.sync?.status && a.status.sync.status !== 'Unknown' ? a : undefined;
    },
    ms,
  ).catch(() => undefined);
}

/** The githost user, as `strait admin user create --state-dir` makes one (the world has no githost admin to ask). */
async function createGithostUser(stateDir: string, account: DemoAccount): Promise<void> {
  const { GithostDb, createUser, githostPaths } = await import('../githost/server/index.js');
  const db = new GithostDb(githostPaths(stateDir).db);
  try {
    await createUser(db, { username: account.username, password: account.password, email: account.email, fullName: account.fullName });
  } finally {
    db.close();
  }
}

/** The controller's first verdict in one line: before the key is imported, a refusal that names it. */
function verdictLine(verdict: App | undefined): string {
  const sync = verdict?.status?.sync;
  if (!sync) return '[6] the control module has not compared the Application yet (strait app get guestbook shows it)';
  const why = verdict?.status?.conditions?.find((c) => /Error$/.test(c.type))?.message;
  return (
    `[6] the control module says: ${sync.status}${sync.revision ? ` to ${sync.revision.slice(0, 12)}` : ''}${why ? ` (${why})` : ''}` +
    `${sync.status === 'Synced' ? '' : ': the key is not imported yet; the commands below import it'}`
  );
}

/** The README's lines for this world, then how to push from the working copy. */
function sayNext(say: (line: string) => void, next: string[], work: string, gnupg: string): void {
  say('');
  say('Next, the lines of README.md ("Signed GitOps"):');
  for (const l of next) say(`  ${l}`);
  say('');
  say(`Then push from ${work} (git push works there as it is); unsigned, refused (Sync Error, nothing applied):`);
  say(`  cd ${shellWord(work)} && sed -i 's/"1"/"2"/' guestbook/ui.yaml && git commit -qam unsigned && git push -q`);
  say('signed with the key, synced at once:');
  say(`  sed -i 's/"2"/"3"/' guestbook/ui.yaml && GNUPGHOME=${shellWord(gnupg)} git commit -S -qam signed && git push -q`);
}

export async function setUpGitopsInWorld(opts: WorldSetupOptions): Promise<WorldSetup> {
  const say = opts.out;
  const rec = runningWorld(opts.stateDir);
  if (!rec.githost) throw E.demoNoServer(opts.stateDir, 'code-hosting server (githost)');
  if (!rec.control) throw E.demoNoServer(opts.stateDir, 'control module API');
  const cluster = rec.clusters[0]?.name;
  if (!cluster) throw E.demoNoServer(opts.stateDir, 'control module API');
  const ghURL = rec.githost;
  const dir = resolve(opts.dir ?? join(opts.stateDir, 'gitops-demo'));
  const publicKeyFile = resolve(opts.publicKey);
  const account: DemoAccount = { username: 'alice', password: randomBytes(12).toString('base64url'), fullName: 'Alice', email: 'alice@example.com' };

  const { connectStoreFromFiles } = await import('../platform/store/index.js');
  const files = stateFiles(opts.stateDir);
  const store = connectStoreFromFiles({ socketPath: files.storeSocket, tokenFile: files.storeToken, cluster });
  try {
    const found = await existing(opts.stateDir, store, cluster, account, dir, opts.publicKey, publicKeyFile);
    if (found.length > 0) throw E.demoExists(opts.stateDir, found);

    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const d: DemoRun = { dir, env: demoToolEnv(dir), say, cleanups: [] };
    say(`strait demo gitops --world: the signed-GitOps scenario of README.md in the world of ${opts.stateDir}; files in ${dir}`);
    try {
      await createGithostUser(opts.stateDir, account);
      say(`[1] githost user ${account.username} <${account.email}> made with the local admin tool; password in ${join(dir, 'git-credentials')}`);
      const repoURL = await createDemoRepo(ghURL, account, REPO);
      say(`[2] POST ${ghURL}/api/v1/user/repos -> ${account.username}/${REPO}, clone_url ${repoURL}`);

      const key = await makeDemoKey(d, ghURL, account, publicKeyFile);
      say(
        `[3] gpg made key ${key.keyID} for ${account.fullName} <${account.email}> (GnuPG home ${join(dir, 'gnupg')}); ` +
          `public key written to ${opts.publicKey}; added to githost (${key.githostStatus})`,
      );

      const work = join(dir, REPO);
      const git = await initDemoWork(d, work, account, repoURL);
      await git('config', 'user.signingkey', key.fpr);
      const signedCommit = await pushRelease(git, work, '1', key.fpr);
      say(`[4] signed commit ${signedCommit.slice(0, 12)} (guestbook/ui.yaml: ConfigMap guestbook-ui, release "1") pushed to main from ${work}`);

      const api = `${GROUPS.gitops}/v1alpha1`;
      await store.apply(signedProject(api, key.keyID, account.fullName));
      await store.apply(guestbookApplication(api, repoURL));
      say(
        `[5] in ${cluster}: AppProject ${NAMESPACE}/${PROJECT} (signatureKeys [${key.keyID}]) and Application ${NAMESPACE}/${APP} ` +
          `(${repoURL}, path guestbook, main -> namespace guestbook, automated)`,
      );
      say(verdictLine(await firstVerdict(store, opts.verdictWaitMs ?? 20_000)));
      const next = [
        `PW=$(cat ${homePath(join(opts.stateDir, 'control', 'initial-admin-password'))})`,
        `strait login ${new URL(rec.control).host} --username admin --password "$PW" --plaintext --grpc-web`,
        `strait gpg add --from ${shellWord(opts.publicKey)} && strait gpg list`,
        `strait app sync ${APP} && strait app get ${APP} -o json`,
      ];
      sayNext(say, next, work, join(dir, 'gnupg'));
      return { dir, publicKeyFile, keyID: key.keyID, fingerprint: key.fpr, repoURL, work, signedCommit, next };
    } finally {
      await stopDemoGpgAgent(d.env);
    }
  } finally {
    await store.close();
  }
}
