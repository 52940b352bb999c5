// Faults of signed GitOps in one running local world (docs/faults.md, "GitOps, the store and
// the world"): the control module killed -9 in the middle of a sync, and the world's githost
// frozen (SIGSTOP) while the control module fetches. Each case watches every surface side by
// side — the Application in the store, the control API (`GET /api/v1/applications/NAME`),
// the console's JSON (the store API on the control port, behind the session, which the web
// page reads), `strait app get` and `strait app list` — and checks each answer against the
// objects the sync really wrote: a surface may say `Synced` at a revision only when every
// object of that revision is in the cluster. The repository is a real one on the world's
// githost, pushed with the real git and signed with the real gpg; the project enforces the key.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Application } from '../../src/gitops/control/index.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../src/platform/resources/index.js';
import { connectStoreFromFiles, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { run } from '../helpers/run.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../helpers/signed-repo.js';
import { pidsByCommandLine } from '../helpers/world-ha.js';
import { BIN, strait, upWorld, type TestWorld } from '../helpers/world.js';

/** the poll period of this world's control module (STRAIT_CONTROL_POLL_INTERVAL; the default is 180 s) */
const POLL_S = 10;
/** a repository that sends nothing for this long is not reachable (src/gitops/control/git-exec.ts) */
const FETCH_STALL_S = 10;
/** objects per revision: enough that a sync takes a while and a kill lands in the middle */
const OBJECTS = 150;
const APP = 'fleet';
const NS = 'fleet';

const WORLD = {
  tunnels: false,
  githost: true,
  mesh: false,
  clusters: [
    {
      name: 'cluster-a',
      clusterCIDR: '10.1.0.0/16',
      serviceCIDR: '100.1.0.0/16',
      nodes: [
        { name: 'gateway', role: 'gateway' },
        { name: 'worker', role: 'worker' },
      ],
    },
  ],
};

let world: TestWorld;
let tmp: string;
let gpg: GpgWorld;
let repo: TestRepo;
let store: ResourceStore;
let hosts: { control: string; githost: string };
let cliEnv: NodeJS.ProcessEnv;
let session = '';
let pushURL = '';
const revs: string[] = [];
const measured: Record<string, Record<string, number | string>> = {};
const frozen: number[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const manifests = (v: number): string =>
  Array.from({ length: OBJECTS }, (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${String(i).padStart(3, '0')}\ndata:\n  v: "${v}"\n`).join(
    '---\n',
  );

const controlPids = (): number[] => pidsByCommandLine(`daemon/control/main.js --state-dir ${join(world.stateDir, 'control')} `);
const githostPids = (): number[] => pidsByCommandLine(`world-githost.js --state-dir ${world.stateDir} `);

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'strait-gitops-faults-'));
  writeFileSync(join(tmp, 'world.json'), JSON.stringify(WORLD));
  process.env['STRAIT_CONTROL_POLL_INTERVAL'] = String(POLL_S);
  world = upWorld(['--world', join(tmp, 'world.json')]);
  const rec = JSON.parse(readFileSync(join(world.stateDir, 'world.json'), 'utf8')) as { control: string; githost: string };
  hosts = { control: rec.control, githost: rec.githost };

  // the githost user who owns the repository, and the repository
  const user = strait([
    'admin',
    'user',
    'create',
    '--username',
    'bob',
    '--password',
    'bob-pass-1234',
    '--email',
    'bob@example.com',
    '--admin',
    '--access-token',
    '-o',
    'json',
    '--state-dir',
    world.stateDir,
  ]);
  assert.equal(user.status, 0, user.stderr);
  const token = (JSON.parse(user.stdout) as { token: string }).token;
  const made = await fetch(`${hosts.githost}/api/v1/user/repos`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'fleet' }),
  });
  const madeText = await made.text();
  assert.equal(made.status, 201, madeText);
  const cloneURL = (JSON.parse(madeText) as { clone_url: string }).clone_url;
  pushURL = cloneURL.replace('://', '://bob:bob-pass-1234@');

  gpg = createGpgWorld();
  repo = createRepo(gpg);
  revs.push(repo.commit({ 'app/cms.yaml': manifests(1) }, 'one', gpg.keys.bob));
  push();

  store = connectStoreFromFiles({ socketPath: join(world.stateDir, 'store.sock'), tokenFile: join(world.stateDir, 'store.token'), cluster: 'cluster-a' });
  const v = `${GROUPS.gitops}/v1alpha1`;
  await store.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: GPG_KEYS_CM, namespace: 'argocd' },
    data: { [gpg.keys.bob.keyID]: gpg.keys.bob.armored },
  });
  await store.apply({
    apiVersion: v,
    kind: 'AppProject',
    metadata: { name: 'signed', namespace: 'argocd' },
    spec: {
      sourceRepos: ['*'],
      destinations: [{ server: '*', namespace: '*' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      signatureKeys: [{ keyID: gpg.keys.bob.keyID }],
    },
  });
  await store.apply({
    apiVersion: v,
    kind: 'Application',
    metadata: { name: APP, namespace: 'argocd' },
    spec: {
      project: 'signed',
      // the githost's clone_url, as a user copies it (the host URL; the control module's git rewrites it to the in-world one)
      source: { repoURL: cloneURL, path: 'app', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: NS },
      syncPolicy: { automated: { prune: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });

  // the CLI's session in a config dir of its own, and one for the API and the console's JSON
  const password = readFileSync(join(world.stateDir, 'control', 'initial-admin-password'), 'utf8').trim();
  cliEnv = { ...process.env, STRAIT_CONFIG_DIR: join(tmp, 'config') };
  const login = await run(
    process.execPath,
    [BIN, 'login', hosts.control.replace('http://', ''), '--plaintext', '--username', 'admin', '--password', password],
    {
      env: cliEnv,
    },
  );
  assert.equal(login.status, 0, login.stderr);
  const s = await fetch(`${hosts.control}/api/v1/session`, { method: 'POST', body: JSON.stringify({ username: 'admin', password }) });
  session = ((await s.json()) as { token: string }).token;
  await waitApplied(revs[0]!, 1, 60_000);
});

after(async () => {
  for (const pid of frozen)
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      /* gone */
    }
  await store?.close();
  world?.cleanup();
  gpg?.cleanup();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  console.log(`measured: ${JSON.stringify(measured)}`);
});

function push(): void {
  execFileSync('git', ['push', '-q', pushURL, 'main'], { cwd: repo.dir, env: gpg.env, stdio: 'pipe' });
}

/** The ConfigMaps of the destination namespace: how many carry each value of data.v. */
async function live(): Promise<{ total: number; byValue: Map<string, number>; generations: Set<number> }> {
  const items = (await store.list<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, { namespace: NS })).items.filter((o) =>
    o.metadata.name.startsWith('cm-'),
  );
  const byValue = new Map<string, number>();
  for (const o of items) byValue.set(o.data?.['v'] ?? '', (byValue.get(o.data?.['v'] ?? '') ?? 0) + 1);
  return { total: items.length, byValue, generations: new Set(items.map((o) => o.metadata.generation ?? 0)) };
}
const appliedAll = async (v: number): Promise<boolean> => (await live()).byValue.get(String(v)) === OBJECTS;

const app = async (): Promise<Application | undefined> => store.get<Application>(Kinds.Application, APP, 'argocd');

/** Synced at `rev` with every object of it in the cluster (read after the status) */
async function waitApplied(rev: string, v: number, ms: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const a = await app();
    if (a?.status?.sync?.status === 'Synced' && a.status.sync.revision === rev && (await appliedAll(v))) return Date.now() - t0;
    if (Date.now() - t0 > ms)
      throw new Error(`not Synced at ${rev} within ${ms} ms: ${JSON.stringify(a?.status)}; live ${JSON.stringify([...(await live()).byValue])}`);
    await sleep(50);
  }
}

/** What one surface says: the sync status and the revision it names, or that it did not answer (and what it said). */
interface Claim {
  surface: string;
  /** ms from the start of the watch to the answer (`start`: to the question; a CLI run takes seconds) */
  at: number;
  start?: number;
  sync?: string;
  revision?: string;
  reason?: string;
  message?: string;
  down?: string;
}

const fromStatus = (surface: string, at: number, a: Application | undefined): Claim => {
  const c = (a?.status?.conditions ?? []).find((x) => /Error$/.test(x.type));
  return {
    surface,
    at,
    ...(a?.status?.sync?.status ? { sync: a.status.sync.status } : {}),
    ...(a?.status?.sync?.revision ? { revision: a.status.sync.revision } : {}),
    ...(c ? { reason: `${c.type}/${c.reason}`, message: c.message } : {}),
  };
};

const SURFACES: Record<string, () => Promise<Omit<Claim, 'surface' | 'at'>>> = {
  store: async () => fromStatus('', 0, await app()),
  api: async () => {
    const r = await fetch(`${hosts.control}/api/v1/applications/${APP}`, {
      headers: { authorization: `Bearer ${session}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (r.status !== 200) return { down: `HTTP ${r.status}` };
    return fromStatus('', 0, (await r.json()) as Application);
  },
  console: async () => {
    const r = await fetch(`${hosts.control}/v1/clusters/cluster-a/list?apiVersion=${GROUPS.gitops}/v1alpha1&kind=Application&namespace=argocd`, {
      headers: { cookie: `argocd.token=${session}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (r.status !== 200) return { down: `HTTP ${r.status}` };
    return fromStatus(
      '',
      0,
      ((await r.json()) as { items: Application[] }).items.find((x) => x.metadata.name === APP),
    );
  },
  appGet: async () => {
    const r = await run(process.execPath, [BIN, 'app', 'get', APP, '-o', 'json'], { env: cliEnv });
    if (r.status !== 0) return { down: r.stderr.trim() };
    const text = await run(process.execPath, [BIN, 'app', 'get', APP], { env: cliEnv });
    return { ...fromStatus('', 0, JSON.parse(r.stdout) as Application), message: /Sync Status:\s*(.*)/.exec(text.stdout)?.[1] ?? text.stderr.trim() };
  },
  appList: async () => {
    const r = await run(process.execPath, [BIN, 'app', 'list'], { env: cliEnv });
    if (r.status !== 0) return { down: r.stderr.trim() };
    const row = r.stdout.split('\n').find((l) => l.startsWith(`${APP} `)) ?? '';
    const cols = row.split(/\s{2,}/);
    return { sync: cols[2] ?? '', revision: cols[3] ?? '', message: row };
  },
};

/**
 * Poll every surface side by side until `stop()` says so; after each answer read the live
 * objects, so that a `Synced` claim is checked against what the cluster holds at that moment.
 */
async function watchSurfaces(stop: () => boolean, claims: Claim[] = []): Promise<{ claims: Claim[]; lies: string[] }> {
  const lies: string[] = [];
  const t0 = Date.now();
  await Promise.all(
    Object.entries(SURFACES).map(async ([surface, read]) => {
      while (!stop()) {
        const start = Date.now() - t0;
        const said = await read().catch((err: Error) => ({ down: String(err.cause ?? err.message) }));
        const at = Date.now() - t0;
        const c: Claim = { ...said, surface, at, start };
        claims.push(c);
        if (c.sync === 'Synced') {
          const v = revs.findIndex((r) => c.revision && r.startsWith(c.revision)) + 1;
          if (v === 0) lies.push(`${surface} at ${at} ms: Synced at an unknown revision ${c.revision}`);
          else if (!(await appliedAll(v)))
            lies.push(`${surface} at ${at} ms: Synced at ${c.revision} (v${v}) while the cluster holds ${JSON.stringify([...(await live()).byValue])}`);
        }
        await sleep(surface === 'store' ? 20 : 100);
      }
    }),
  );
  return { claims, lies };
}

/** Each surface's changes of what it says, in order: "1234 ms OutOfSync 0cafbce4 (ComparisonError/FetchFailed)" or "… down: …". */
function timeline(claims: Claim[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of Object.keys(SURFACES)) {
    let last = '';
    for (const c of claims.filter((x) => x.surface === s).sort((a, b) => a.at - b.at)) {
      const what = c.down ? `down: ${c.down.slice(0, 80)}` : `${c.sync ?? '?'} ${(c.revision ?? '').slice(0, 8)}${c.reason ? ` (${c.reason})` : ''}`;
      if (what !== last) (out[s] ??= []).push(`${c.at} ms ${what}`);
      last = what;
    }
  }
  return out;
}

/** the first claim of a surface that satisfies `ok`, its time */
const firstAt = (claims: Claim[], surface: string, ok: (c: Claim) => boolean): number | undefined => claims.find((c) => c.surface === surface && ok(c))?.at;

test('the control module killed -9 in the middle of a sync: no surface says Synced at a revision not applied; after the restart the sync completes once, nothing lost', async () => {
  const before = {
    apps: (await store.list(Kinds.Application, { namespace: 'argocd' })).items.map((o) => o.metadata.name),
    projects: (await store.list(Kinds.AppProject, { namespace: 'argocd' })).items.map((o) => o.metadata.name),
    keys: Object.keys((await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, GPG_KEYS_CM, 'argocd'))?.data ?? {}),
  };
  const [pid] = controlPids();
  assert.ok(pid, 'the control module runs');
  revs.push(repo.commit({ 'app/cms.yaml': manifests(2) }, 'two', gpg.keys.bob));
  // kill at the first object of revision 2 the sync writes (the push hook starts the sync)
  let killedAt = 0;
  const w = store.watch<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, { namespace: NS }, (ev) => {
    if (killedAt || ev.object.data?.['v'] !== '2') return;
    process.kill(pid, 'SIGKILL');
    killedAt = Date.now();
  });
  const t0 = Date.now();
  push();
  while (!killedAt && Date.now() - t0 < 30_000) await sleep(5);
  w.stop();
  assert.ok(killedAt, 'the sync of revision 2 started');
  const appliedAtKill = (await live()).byValue.get('2') ?? 0;
  assert.ok(appliedAtKill < OBJECTS, `the kill landed in the middle of the sync (${appliedAtKill} of ${OBJECTS} objects at revision 2)`);

  let done = false;
  const watching = watchSurfaces(() => done);
  const converged = await waitApplied(revs[1]!, 2, 60_000).finally(() => {
    done = true;
  });
  const { claims, lies } = await watching;
  const newPid = controlPids()[0];
  assert.ok(newPid && newPid !== pid, 'the world restarted the control module');
  assert.deepEqual(lies, [], 'no surface said Synced at a revision whose objects were not all applied');

  // applied once and consistently: every object at revision 2, changed once (generation 2), no extra or missing object
  const l = await live();
  assert.equal(l.total, OBJECTS);
  assert.deepEqual([...l.generations], [2], 'each object was changed exactly once');
  const a = (await app())!;
  assert.equal(a.status?.operationState?.phase, 'Succeeded', JSON.stringify(a.status?.operationState));
  assert.equal(a.status?.operationState?.syncResult?.revision, revs[1]);
  assert.deepEqual(
    (a.status?.history ?? []).map((h) => h.revision),
    [revs[0], revs[1]],
    'the interrupted sync is in the history once',
  );
  // nothing lost
  assert.deepEqual(
    (await store.list(Kinds.Application, { namespace: 'argocd' })).items.map((o) => o.metadata.name),
    before.apps,
  );
  assert.deepEqual(
    (await store.list(Kinds.AppProject, { namespace: 'argocd' })).items.map((o) => o.metadata.name),
    before.projects,
  );
  assert.deepEqual(
    Object.keys((await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, GPG_KEYS_CM, 'argocd'))?.data ?? {}),
    before.keys,
  );

  // what the surfaces said while the control module was away and after
  const down = claims.filter((c) => c.down);
  const storeRunning = claims.find((c) => c.surface === 'store' && c.sync === 'OutOfSync' && c.revision === revs[1]);
  assert.ok(
    storeRunning,
    `the store said OutOfSync at revision 2 during the interrupted sync: ${JSON.stringify(claims.filter((c) => c.surface === 'store').slice(0, 5))}`,
  );
  for (const c of down.filter((x) => x.surface === 'appGet' || x.surface === 'appList'))
    assert.match(c.down ?? '', /control module|connection|strait status/, `a CLI surface that cannot answer says why: ${c.down}`);
  measured['control killed'] = {
    appliedAtKill: `${appliedAtKill}/${OBJECTS}`,
    convergedMs: converged,
    apiBackMs: firstAt(claims, 'api', (c) => !c.down) ?? -1,
    apiDownSamples: down.filter((c) => c.surface === 'api').length,
    appGetSynced: firstAt(claims, 'appGet', (c) => c.sync === 'Synced' && c.revision === revs[1]) ?? -1,
    firstCliDown: down.find((c) => c.surface === 'appGet')?.down ?? '',
  };
  console.log(`timeline (control killed): ${JSON.stringify(timeline(claims), null, 1)}`);
});

test('githost frozen while the control module fetches: Unknown with ComparisonError (not reachable) on every surface, never Synced at the old revision; it converges after githost returns; repositories intact', async () => {
  await waitApplied(revs[1]!, 2, 30_000);
  revs.push(repo.commit({ 'app/cms.yaml': manifests(3) }, 'three', gpg.keys.bob));
  push();
  const pids = githostPids();
  assert.equal(pids.length, 1, 'one githost');
  const gh = pids[0]!;
  // frozen right after the push: the push hook's fetch (or the next poll's) meets a githost that accepts and never answers
  process.kill(gh, 'SIGSTOP');
  frozen.push(gh);
  const frozenAt = Date.now();
  let thawedAt: number;
  let done = false;
  const live: Claim[] = [];
  const watching = watchSurfaces(() => done, live);
  const isUnknown = (c: Claim): boolean => c.sync === 'Unknown' && /ComparisonError\/FetchFailed/.test(c.reason ?? '');
  try {
    // detection bound: the next fetch starts within the poll period and gives up after the stall time;
    // githost stays frozen until every surface has said Unknown (CLI runs take seconds on a loaded machine)
    const bound = (POLL_S + FETCH_STALL_S + 10) * 1000;
    const surfaces = Object.keys(SURFACES);
    while (!surfaces.every((s) => live.some((c) => c.surface === s && c.sync === 'Unknown'))) {
      if (Date.now() - frozenAt > bound + 20_000) break;
      await sleep(100);
    }
  } finally {
    process.kill(gh, 'SIGCONT');
    thawedAt = Date.now();
  }
  const recovered = await waitApplied(revs[2]!, 3, (POLL_S + 20) * 1000).finally(() => {
    done = true;
  });
  const { claims, lies } = await watching;
  assert.deepEqual(lies, [], 'no surface said Synced at a revision whose objects were not all applied');
  const frozenFor = thawedAt - frozenAt;
  // from the first Unknown in the store until githost came back, no surface said Synced
  const unknownAt = firstAt(claims, 'store', isUnknown) ?? -1;
  assert.ok(unknownAt >= 0, `the store said Unknown/FetchFailed: ${JSON.stringify(claims.filter((c) => c.surface === 'store').slice(-3))}`);
  const staleAfter = claims.filter((c) => (c.start ?? c.at) > unknownAt + 100 && c.at < frozenFor - 100 && c.sync === 'Synced');
  assert.deepEqual(staleAfter, [], 'no surface said Synced while the repository could not be reached');
  for (const s of Object.keys(SURFACES)) {
    const u = claims.find((c) => c.surface === s && c.sync === 'Unknown');
    assert.ok(u, `${s} said Unknown: ${JSON.stringify(claims.filter((c) => c.surface === s).slice(-3))}`);
  }
  assert.ok(unknownAt <= (POLL_S + FETCH_STALL_S + 10) * 1000, `Unknown within the poll period + the stall time (${unknownAt} ms)`);
  // the sync that follows says it runs, without the fetch error that is no longer true
  assert.deepEqual(
    claims.filter((c) => c.surface === 'store' && c.revision === revs[2] && /FetchFailed/.test(c.reason ?? '')),
    [],
    'no stale FetchFailed beside revision 3',
  );
  const why = claims.find((c) => c.surface === 'store' && isUnknown(c))!;
  assert.match(why.message ?? '', /repository not reachable: .*(Operation too slow|Failed to connect|Connection refused)/, why.message);
  // the repository on githost is intact and at revision 3
  for (const dir of repoDirs()) {
    const fsck = spawnSync('git', ['fsck', '--full', '--strict'], { cwd: dir, encoding: 'utf8' });
    assert.equal(fsck.status, 0, `git fsck ${dir}: ${fsck.stderr}`);
  }
  assert.equal(spawnSync('git', ['ls-remote', pushURL, 'refs/heads/main'], { encoding: 'utf8' }).stdout.split('\t')[0], revs[2]);
  measured['githost frozen'] = {
    frozenForMs: frozenFor,
    storeUnknownMs: unknownAt,
    apiUnknownMs: firstAt(claims, 'api', isUnknown) ?? -1,
    consoleUnknownMs: firstAt(claims, 'console', isUnknown) ?? -1,
    appGetUnknownMs: firstAt(claims, 'appGet', (c) => c.sync === 'Unknown') ?? -1,
    appListUnknownMs: firstAt(claims, 'appList', (c) => c.sync === 'Unknown') ?? -1,
    recoveredAfterThawMs: recovered,
    message: why.message ?? '',
    appGetText: claims.find((c) => c.surface === 'appGet' && c.sync === 'Unknown')?.message ?? '',
  };
  console.log(`timeline (githost frozen): ${JSON.stringify(timeline(claims), null, 1)}`);
});

function repoDirs(): string[] {
  const root = join(world.stateDir, 'githost', 'repos');
  const out: string[] = [];
  for (const owner of readdirSync(root)) for (const r of readdirSync(join(root, owner))) if (r.endsWith('.git')) out.push(join(root, owner, r));
  return out;
}
