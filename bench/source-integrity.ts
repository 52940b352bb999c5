// Strict source integrity (docs/gitops.md, "Source integrity"; Benchmark). Run:
//   node dist/bench/source-integrity.js [--commits 10000] [--gpg-sample 200] [--incremental 100]
// One run, side by side:
//   1. cold: strict verification of a COMMITS-commit signed history with nothing cached (a
//      new verifier and a new `git cat-file` process), as the controller does it: goal < 2 s;
//   2. incremental: one new signed commit on top of the verified tip, verified, INCREMENTAL
//      times (the fetch is not timed): goal < 5 ms per commit;
//   3. `git verify-commit` (real gpg) over the same history: timed on an evenly spread sample
//      of GPG_SAMPLE commits and extrapolated to all of them (said so in the output);
//      goal >= 20x slower than 1.
// The fixture (a bare repository of COMMITS commits signed by an ed25519 key, and a GNUPGHOME
// holding that key) is made once and cached in ~/.cache/strait/bench/ (or
// $XDG_CACHE_HOME/strait/bench): gpg makes the key; the commits are signed in process with
// openpgp.js and written as loose objects with node:zlib, then packed by `git repack`
// (signing 10,000 commits through `git commit -S` takes minutes). Every commit shares one
// tree; only the commit objects differ, which is what strict verification reads.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import * as openpgp from 'openpgp';
import { HistoryVerifier, RepoCache } from '../src/gitops/control/index.js';
import { Keyring, readPublicKeys } from '../src/platform/signatures/index.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const COMMITS = arg('commits', 10_000);
const GPG_SAMPLE = Math.min(arg('gpg-sample', 200), COMMITS);
const INCREMENTAL = arg('incremental', 100);
const FIXTURE_VERSION = 1;

const cacheRoot = join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'strait', 'bench');
const fixture = join(cacheRoot, `source-integrity-v${FIXTURE_VERSION}-${COMMITS}`);
const AUTHOR = 'Bench Author <bench@example.com>';

const fmt = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`);
const median = (xs: number[]): number => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.floor(a.length / 2)] as number;
};
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
/** CPU seconds of this process (µs, process.cpuUsage) and of its reaped children (ms, /proc/self/stat cutime+cstime; 10 ms ticks). */
const selfCpu = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const childCpu = (): number => {
  const f = readFileSync('/proc/self/stat', 'utf8')
    .slice(readFileSync('/proc/self/stat', 'utf8').lastIndexOf(')') + 2)
    .split(' ');
  return (Number(f[13]) + Number(f[14])) * 10;
};

function gitIn(dir: string, args: string[], env: NodeJS.ProcessEnv = process.env, input?: string): string {
  return execFileSync('git', args, { cwd: dir, env: { ...env, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8', input, maxBuffer: 256 * 1024 * 1024 }).trim();
}

/** Write one object as git does (zlib over "type size\0content"); its ID. */
function writeObject(gitDir: string, type: string, content: Buffer): string {
  const full = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
  const id = createHash('sha1').update(full).digest('hex');
  const dir = join(gitDir, 'objects', id.slice(0, 2));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, id.slice(2));
  if (!existsSync(file)) writeFileSync(file, deflateSync(full));
  return id;
}

interface Signer {
  key: openpgp.PrivateKey;
  publicArmored: string;
  gnupgHome: string;
}

/** A commit object signed like `git commit -S`: the gpgsig header over the object without it. */
async function signedCommit(gitDir: string, signer: Signer, tree: string, parents: string[], n: number, message: string): Promise<string> {
  const when = `${1_700_000_000 + n * 60} +0000`;
  const head = `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join('')}author ${AUTHOR} ${when}\ncommitter ${AUTHOR} ${when}\n`;
  const payload = `${head}\n${message}\n`;
  const sig = (await openpgp.sign({
    message: await openpgp.createMessage({ binary: Buffer.from(payload) }),
    signingKeys: signer.key,
    detached: true,
    format: 'armored',
  })) as string;
  const gpgsig = `gpgsig ${sig.trimEnd().split('\n').join('\n ')}\n`;
  return writeObject(gitDir, 'commit', Buffer.from(`${head}${gpgsig}\n${message}\n`));
}

async function loadSigner(dir: string): Promise<Signer> {
  const key = await openpgp.readPrivateKey({ armoredKey: readFileSync(join(dir, 'secret.asc'), 'utf8') });
  return { key, publicArmored: readFileSync(join(dir, 'public.asc'), 'utf8'), gnupgHome: join(dir, 'gnupg') };
}

/** The cached fixture: bare repository `repo.git` (main = the tip of COMMITS signed commits) and the key. */
async function ensureFixture(): Promise<{ repo: string; tip: string; signer: Signer; tree: string }> {
  if (existsSync(join(fixture, 'done'))) {
    const repo = join(fixture, 'repo.git');
    return { repo, tip: gitIn(repo, ['rev-parse', 'main']), signer: await loadSigner(fixture), tree: readFileSync(join(fixture, 'tree'), 'utf8').trim() };
  }
  console.log(`making the fixture (once): ${COMMITS} signed commits in ${fixture}`);
  mkdirSync(cacheRoot, { recursive: true });
  const tmp = mkdtempSync(join(cacheRoot, '.making-'));
  const home = join(tmp, 'gnupg');
  mkdirSync(home, { mode: 0o700 });
  const gpg = (args: string[]): string =>
    execFileSync('gpg', ['--homedir', home, '--batch', '--yes', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { encoding: 'utf8' });
  gpg(['--quick-gen-key', AUTHOR, 'ed25519', 'sign', 'never']);
  writeFileSync(join(tmp, 'public.asc'), gpg(['--armor', '--export', 'bench@example.com']));
  writeFileSync(join(tmp, 'secret.asc'), gpg(['--armor', '--export-secret-keys', 'bench@example.com']));
  const signer = await loadSigner(tmp);
  const repo = join(tmp, 'repo.git');
  gitIn(tmp, ['init', '-q', '--bare', repo]);
  const blob = writeObject(repo, 'blob', Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bench}\n'));
  const sub = writeObject(repo, 'tree', Buffer.concat([Buffer.from('100644 cm.yaml\0'), Buffer.from(blob, 'hex')]));
  const tree = writeObject(repo, 'tree', Buffer.concat([Buffer.from('40000 app\0'), Buffer.from(sub, 'hex')]));
  let parent: string | undefined;
  const t0 = performance.now();
  for (let i = 0; i < COMMITS; i++) {
    parent = await signedCommit(repo, signer, tree, parent ? [parent] : [], i, `commit ${i}`);
    if ((i + 1) % 2000 === 0) console.log(`  ${i + 1} commits signed (${fmt(performance.now() - t0)})`);
  }
  gitIn(repo, ['update-ref', 'refs/heads/main', parent!]);
  gitIn(repo, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
  gitIn(repo, ['repack', '-adq']);
  gitIn(repo, ['prune-packed']);
  writeFileSync(join(tmp, 'tree'), tree);
  // gpg must accept what openpgp.js signed: check one commit now, not in the middle of the run
  const check = spawnSync('git', ['verify-commit', parent!], { cwd: repo, env: { ...process.env, GNUPGHOME: home } });
  if (check.status !== 0) throw new Error(`git verify-commit refuses the fixture: ${check.stderr.toString()}`);
  writeFileSync(join(tmp, 'done'), new Date().toISOString());
  try {
    execFileSync('gpgconf', ['--homedir', home, '--kill', 'all'], { stdio: 'ignore' });
  } catch {
    /* no agent */
  }
  rmSync(fixture, { recursive: true, force: true });
  renameSync(tmp, fixture);
  return ensureFixture();
}

async function main(): Promise<void> {
  const { repo, tip, signer, tree } = await ensureFixture();
  const ring = await Keyring.fromKeys(await readPublicKeys(signer.publicArmored));
  const keyID = ring.list()[0]!.info.keyID;
  const policy = { key: 'bench', rules: { allowedKeyIDs: [keyID] } };
  const work = mkdtempSync(join(tmpdir(), 'strait-bench-si-'));
  try {
    // the controller's mirror of the fixture (a local clone; not timed)
    const repos = new RepoCache(join(work, 'mirrors'));
    await repos.sync(repo);

    // --- 1. cold ------------------------------------------------------------------------
    const colds: number[] = [];
    const coldCpu: number[] = [];
    for (let round = 0; round < 3; round++) {
      const cold = new RepoCache(join(work, 'mirrors')); // same mirror on disk, a new cat-file process
      await cold.sync(repo);
      const verifier = new HistoryVerifier(cold);
      const t0 = performance.now();
      const c0 = selfCpu() + childCpu();
      const out = await verifier.verify(repo, tip, policy, ring, 1, new Date());
      colds.push(performance.now() - t0);
      coldCpu.push(selfCpu() + childCpu() - c0);
      cold.close();
      if (out.failure || out.commitsChecked !== COMMITS)
        throw new Error(`cold verification: ${out.failure?.message ?? `${out.commitsChecked} commits checked`}`);
    }
    const coldMs = median(colds);
    console.log(`strict verification of ${COMMITS} signed commits (ed25519), load average ${load()}:`);
    console.log(
      `  cold (nothing cached)             ${fmt(coldMs)} median of 3 (${colds.map(fmt).join(', ')}); goal < 2 s; ${fmt(coldMs / COMMITS)} per commit`,
    );
    console.log(`                                    CPU time ${fmt(median(coldCpu))} (this process and git rev-list; the cat-file reader is not counted)`);

    // --- 2. incremental -------------------------------------------------------------------
    // new commits go to a scratch repository that borrows the fixture's objects (alternates)
    const scratch = join(work, 'scratch.git');
    gitIn(work, ['clone', '-q', '--bare', '--shared', repo, scratch]);
    const verifier = new HistoryVerifier(repos);
    await repos.sync(scratch);
    const first = await verifier.verify(scratch, tip, policy, ring, 1, new Date());
    if (first.failure) throw new Error(first.failure.message);
    const incr: number[] = [];
    let parent = tip;
    for (let i = 0; i < INCREMENTAL; i++) {
      parent = await signedCommit(scratch, signer, tree, [parent], COMMITS + i, `incremental ${i}`);
      gitIn(scratch, ['update-ref', 'refs/heads/main', parent]);
      await repos.sync(scratch, { force: true });
      const t0 = performance.now();
      const out = await verifier.verify(scratch, parent, policy, ring, 1, new Date());
      incr.push(performance.now() - t0);
      if (out.failure || out.commitsChecked !== 1) throw new Error(`incremental: ${out.failure?.message ?? `${out.commitsChecked} commits checked`}`);
    }
    const incrMs = median(incr);
    const incrMean = incr.reduce((a, b) => a + b, 0) / incr.length;
    console.log(
      `  incremental (one new commit)      ${fmt(incrMs)} median, ${fmt(incrMean)} mean over ${INCREMENTAL} new commits; goal < 5 ms (the fetch is not timed)`,
    );

    // --- 3. git verify-commit ---------------------------------------------------------------
    const ids = gitIn(repo, ['rev-list', 'main']).split('\n');
    const step = ids.length / GPG_SAMPLE;
    const sample = Array.from({ length: GPG_SAMPLE }, (_, i) => ids[Math.floor(i * step)]!);
    const env = { ...process.env, GNUPGHOME: signer.gnupgHome, GIT_CONFIG_NOSYSTEM: '1' };
    const g0 = performance.now();
    const gc0 = childCpu();
    for (const id of sample) {
      const r = spawnSync('git', ['verify-commit', id], { cwd: repo, env });
      if (r.status !== 0) throw new Error(`git verify-commit ${id}: ${r.stderr.toString()}`);
    }
    const gpgPer = (performance.now() - g0) / sample.length;
    const gpgCpuPer = (childCpu() - gc0) / sample.length;
    try {
      execFileSync('gpgconf', ['--homedir', signer.gnupgHome, '--kill', 'all'], { stdio: 'ignore' });
    } catch {
      /* no agent */
    }
    const gpgAll = gpgPer * COMMITS;
    console.log(
      `  git verify-commit (real gpg)      ${fmt(gpgPer)} per commit, timed on ${sample.length} of the ${COMMITS} commits (evenly spread) and extrapolated: ${fmt(gpgAll)} for all`,
    );
    console.log(`                                    CPU time ${fmt(gpgCpuPer)} per commit (git and gpg), ${fmt(gpgCpuPer * COMMITS)} for all`);
    console.log(
      `  ratios                            cold: ${(gpgAll / coldMs).toFixed(1)}x faster than the gpg loop over the same history (goal >= 20x); ` +
        `incremental: ${(gpgPer / incrMs).toFixed(1)}x faster than one git verify-commit; CPU time, cold: ${((gpgCpuPer * COMMITS) / median(coldCpu)).toFixed(1)}x`,
    );
    console.log(`  load average at the end           ${load()}`);
    const pass = coldMs < 2000 && incrMs < 5 && gpgAll / coldMs >= 20;
    console.log(`  goals                             ${pass ? 'met' : 'NOT met'}`);
    repos.close();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
