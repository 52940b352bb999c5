// Local mirrors of the repositories Applications point at, kept with the real `git`
// under the controller's state dir: only branches and tags are fetched (never
// refs/replace/*, refs/notes/* or other namespaces), and git runs with replace objects
// and grafts disabled (git-exec.ts), so what is verified is what is read. Objects are
// read raw with `git cat-file` so that signatures are checked in process on exactly
// the bytes git signed, and each object read is checked against its name (its hash).
// Fetches of one repository are coalesced; a fetch is skipped when the mirror is
// younger than `minFetchIntervalMs` unless forced (push hook).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { E } from '../../base/errors/index.js';
import { gitObjectMatches } from '../../platform/signatures/index.js';
import { CommitReader } from './commit-reader.js';
import { git, NETWORK_TIMEOUT_MS, spawnGit, type GitError } from './git-exec.js';

/** The only refs a mirror holds: what a targetRevision can name. */
const FETCH_REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];
const KEPT_REF = /^refs\/(heads|tags)\//;
/** git's words for a server that cannot be reached, refuses, resets or stalls (not for a refusal of the request) */
const UNREACHABLE =
  /unable to access|Could not resolve host|Failed to connect|Couldn't connect|Connection refused|Connection reset|Connection timed out|Operation too slow|no answer within|Could not read from remote repository|Empty reply from server|transfer closed/i;

export interface ResolvedRevision {
  /** the commit the revision points to */
  commit: string;
  /** the object whose signature is verified: the commit, or the annotated tag object */
  verifyType: 'commit' | 'tag';
  verifySha: string;
  /** the ref the revision matched, e.g. refs/heads/main; '' for a SHA */
  ref: string;
}

export interface ManifestFile {
  path: string;
  content: string;
}

interface RepoState {
  dir: string;
  fetchedAt: number;
  fetching: Promise<void> | undefined;
  /** a forced fetch asked for while one was running: it runs after, so a push made meanwhile is seen */
  refetch: Promise<void> | undefined;
  refs: Map<string, { sha: string; type: string }>;
  head: string;
  /** a long-running cat-file for strict history checks (started on first use) */
  reader: CommitReader | undefined;
}

/**
 * The object's bytes hash to its name (SHA-1, or SHA-256 for 64 hex digits), or
 * STRAIT_ERR_INTERNAL: git handed back other content than the object asked for.
 */
function checkObjectId(type: 'commit' | 'tag' | 'blob', raw: Buffer, sha: string): void {
  if (!gitObjectMatches(type, raw, sha)) throw E.internal(`git returned content that is not the ${type} ${sha} that was asked for; refusing to use it`);
}

/** a full object ID: SHA-1 (40 hex) or SHA-256 (64 hex) */
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const SHORT_SHA = /^[0-9a-f]{4,39}$/;

export class RepoCache {
  private readonly repos = new Map<string, RepoState>();
  private readonly objects = new Map<string, Buffer>();
  private readonly manifests = new Map<string, ManifestFile[]>();

  constructor(
    private readonly dir: string,
    private readonly minFetchIntervalMs = 1000,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  private stateOf(url: string): RepoState {
    let s = this.repos.get(url);
    if (!s) {
      const name = createHash('sha256').update(url).digest('hex').slice(0, 24);
      s = { dir: join(this.dir, `${name}.git`), fetchedAt: 0, fetching: undefined, refetch: undefined, refs: new Map(), head: '', reader: undefined };
      this.repos.set(url, s);
    }
    return s;
  }

  /** Fetch the repository (clone on first use). */
  async sync(url: string, opts: { force?: boolean; now?: number } = {}): Promise<void> {
    const s = this.stateOf(url);
    if (s.fetching) {
      if (!opts.force) return s.fetching;
      s.refetch ??= s.fetching
        .catch(() => undefined)
        .then(() => {
          s.refetch = undefined;
          return this.sync(url, { force: true });
        });
      return s.refetch;
    }
    const now = opts.now ?? Date.now();
    if (!opts.force && s.fetchedAt > 0 && now - s.fetchedAt < this.minFetchIntervalMs) return;
    s.fetching = this.fetch(url, s).finally(() => {
      s.fetching = undefined;
    });
    return s.fetching;
  }

  private async fetch(url: string, s: RepoState): Promise<void> {
    try {
      // a URL is passed after "--" everywhere; one that looks like an option is refused outright
      if (url.startsWith('-')) throw Object.assign(new Error(`a repository URL cannot start with "-"`), { stderr: '' });
      if (!existsSync(join(s.dir, 'HEAD'))) {
        const tmp = `${s.dir}.tmp-${process.pid}-${Date.now()}`;
        rmSync(tmp, { recursive: true, force: true });
        await git(undefined, ['init', '--bare', '--quiet', tmp]);
        await git(tmp, ['fetch', '--quiet', '--no-tags', '--', url, ...FETCH_REFSPECS], { timeoutMs: NETWORK_TIMEOUT_MS });
        s.reader?.close();
        s.reader = undefined;
        rmSync(s.dir, { recursive: true, force: true });
        renameSync(tmp, s.dir);
      } else {
        await git(s.dir, ['fetch', '--quiet', '--prune', '--force', '--no-tags', '--', url, ...FETCH_REFSPECS], { timeoutMs: NETWORK_TIMEOUT_MS });
      }
      // the remote's HEAD may move to another branch
      const ls = (await git(s.dir, ['ls-remote', '--symref', '--', url, 'HEAD'], { timeoutMs: NETWORK_TIMEOUT_MS })).toString();
      const m = /^ref: (refs\/heads\/\S+)\s+HEAD/m.exec(ls);
      if (m && m[1]) await git(s.dir, ['symbolic-ref', 'HEAD', m[1]]);
    } catch (err) {
      const why = (err as GitError).stderr || (err as Error).message;
      const unreachable = UNREACHABLE.test(why) && !/returned error: \d{3}/.test(why);
      throw E.gitFetch(url, unreachable ? `repository not reachable: ${why.trim()}` : why);
    }
    const refs = new Map<string, { sha: string; type: string }>();
    const stale: string[] = [];
    const out = (await git(s.dir, ['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)'])).toString();
    for (const line of out.split('\n')) {
      const [sha, type, ref] = line.split(' ');
      if (!sha || !type || !ref) continue;
      if (KEPT_REF.test(ref)) refs.set(ref, { sha, type });
      else stale.push(ref);
    }
    // a mirror made by an older version (clone --mirror) may hold refs/replace/* and others: drop them
    if (stale.length > 0) await git(s.dir, ['update-ref', '--stdin'], { input: stale.map((r) => `delete ${r}\n`).join('') });
    s.refs = refs;
    s.head = (await git(s.dir, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).catch(() => Buffer.from(''))).toString().trim();
    s.fetchedAt = Date.now();
  }

  /**
   * Resolve a target revision: HEAD (or empty), a full commit ID, a full ref name, a
   * branch, a tag (lightweight: the commit is verified; annotated: the tag object is
   * verified) or an unambiguous short SHA. A full commit ID (40 or 64 hex digits, any
   * case) is only ever a commit, never a branch or tag of that name (as Argo CD's
   * IsCommitSHA): a pinned commit cannot be taken over by pushing a branch named like it.
   */
  async resolve(url: string, revision: string): Promise<ResolvedRevision> {
    const s = this.stateOf(url);
    if (s.fetchedAt === 0) await this.sync(url);
    const rev = revision.trim();
    if (rev === '' || rev === 'HEAD') {
      if (!s.head) throw E.revisionNotFound(url, revision || 'HEAD');
      return { commit: s.head, verifyType: 'commit', verifySha: s.head, ref: 'HEAD' };
    }
    const lower = rev.toLowerCase();
    if (FULL_SHA.test(lower)) {
      const out = await git(s.dir, ['rev-parse', '--verify', '--quiet', `${lower}^{commit}`]).catch(() => undefined);
      const commit = out?.toString().trim();
      if (commit === lower) return { commit, verifyType: 'commit', verifySha: commit, ref: '' };
      throw E.revisionNotFound(url, revision);
    }
    const candidates = rev.startsWith('refs/') ? [rev] : [`refs/heads/${rev}`, `refs/tags/${rev}`];
    for (const ref of candidates) {
      const r = s.refs.get(ref);
      if (!r) continue;
      if (r.type === 'tag') {
        const commit = (await git(s.dir, ['rev-parse', '--verify', `${r.sha}^{commit}`])).toString().trim();
        return { commit, verifyType: 'tag', verifySha: r.sha, ref };
      }
      if (r.type === 'commit') return { commit: r.sha, verifyType: 'commit', verifySha: r.sha, ref };
    }
    if (SHORT_SHA.test(lower)) {
      const out = await git(s.dir, ['rev-parse', '--verify', '--quiet', `${lower}^{commit}`]).catch(() => undefined);
      const commit = out?.toString().trim();
      if (commit && FULL_SHA.test(commit)) return { commit, verifyType: 'commit', verifySha: commit, ref: '' };
    }
    throw E.revisionNotFound(url, revision);
  }

  /** Raw commit objects through the mirror's long-running `git cat-file --batch` (commit-reader.ts). */
  readCommits(url: string, ids: readonly string[]): Promise<(Buffer | undefined)[]> {
    const s = this.stateOf(url);
    s.reader ??= new CommitReader(s.dir);
    return s.reader.readMany(ids);
  }

  /**
   * `git rev-list --topo-order --parents <commit> --not <exclude...>`: every commit reachable
   * from `commit` and from none of `exclude`, children before parents, each with its parents.
   */
  async ancestry(url: string, commit: string, exclude: readonly string[] = []): Promise<{ id: string; parents: string[] }[]> {
    for (const id of [commit, ...exclude]) if (!FULL_SHA.test(id)) throw E.internal(`not a full commit ID: ${JSON.stringify(id)}`);
    const out = (
      await git(this.stateOf(url).dir, ['rev-list', '--topo-order', '--parents', commit, ...(exclude.length ? ['--not', ...exclude] : []), '--'])
    ).toString('latin1');
    const list: { id: string; parents: string[] }[] = [];
    for (const line of out.split('\n')) {
      if (!line) continue;
      const [id, ...parents] = line.split(' ');
      list.push({ id: id!, parents });
    }
    return list;
  }

  /** End the long-running readers (the controller stops). */
  close(): void {
    for (const s of this.repos.values()) {
      s.reader?.close();
      s.reader = undefined;
    }
  }

  /** Raw bytes of a commit or tag object (cached; objects are immutable). */
  async readObject(url: string, type: 'commit' | 'tag', sha: string): Promise<Buffer> {
    const key = `${type}:${sha}`;
    const hit = this.objects.get(key);
    if (hit) return hit;
    // commits through the long-running reader (checked there), tags with one git
    const raw = type === 'commit' ? (await this.readCommits(url, [sha]))[0] : await git(this.stateOf(url).dir, ['cat-file', type, sha]);
    if (!raw) throw E.revisionNotFound(url, sha);
    checkObjectId(type, raw, sha);
    if (this.objects.size > 10_000) this.objects.clear();
    this.objects.set(key, raw);
    return raw;
  }

  /**
   * The manifest files (.yaml, .yml, .json) directly inside `path` at `commit`, and,
   * when the directory holds a kustomization.yaml, the files its `resources` name.
   */
  async readFiles(url: string, commit: string, path: string): Promise<ManifestFile[]> {
    const clean = path
      .replace(/^\.?\/+/, '')
      .replace(/\/+$/, '')
      .replace(/^\.$/, '');
    const key = `${url}\n${commit}\n${clean}`;
    const hit = this.manifests.get(key);
    if (hit) return hit;
    const dir = this.stateOf(url).dir;
    const ls = (await git(dir, ['ls-tree', '-r', '-z', '--full-tree', commit, ...(clean ? ['--', `${clean}/`] : [])])).toString();
    const entries: { path: string; sha: string }[] = [];
    for (const rec of ls.split('\0')) {
      const m = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(rec);
      if (!m || m[2] !== 'blob' || !m[4] || !m[3]) continue;
      if (!/\.(ya?ml|json)$/i.test(m[4])) continue;
      entries.push({ path: m[4], sha: m[3] });
    }
    const files = await this.readBlobs(dir, entries);
    if (this.manifests.size > 10_000) this.manifests.clear();
    this.manifests.set(key, files);
    return files;
  }

  private readBlobs(dir: string, entries: { path: string; sha: string }[]): Promise<ManifestFile[]> {
    if (entries.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const child = spawnGit(dir, ['cat-file', '--batch']);
      const chunks: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => chunks.push(c));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code !== 0) return reject(E.systemTool('git cat-file --batch', code ?? 'signal', ''));
        const buf = Buffer.concat(chunks);
        const out: ManifestFile[] = [];
        let off = 0;
        for (const e of entries) {
          const nl = buf.indexOf(10, off);
          const header = buf.subarray(off, nl).toString();
          const size = Number(header.split(' ')[2]);
          if (!Number.isFinite(size)) return reject(E.internal(`git cat-file --batch answered ${JSON.stringify(header)}`));
          const blob = buf.subarray(nl + 1, nl + 1 + size);
          try {
            checkObjectId('blob', blob, e.sha);
          } catch (err) {
            return reject(err);
          }
          out.push({ path: e.path, content: blob.toString('utf8') });
          off = nl + 1 + size + 1;
        }
        resolve(out);
      });
      child.stdin.end(entries.map((e) => e.sha).join('\n') + '\n');
    });
  }
}
