// The githost model: users, repositories, permissions, GPG keys and commits, on top
// of the database and the bare repositories. HTTP lives in api.ts and git-http.ts.
import { existsSync } from 'node:fs';
import { E } from '../../base/errors/index.js';
import type { Logger } from '../../base/log/index.js';
import { AllowedSigners, gitObjectMatches, parseArmoredPublicKey, parseSshPublicKey, verifyCommitSignature } from '../../platform/signatures/index.js';
import type { GithostSettings } from './config.js';
import type { GithostDb, GpgKeyRow, NewGpgKey, RepoRow, UserRow } from './db.js';
import { git, runGit } from './git-exec.js';
import { HttpError } from './http-io.js';
import { checkCloneAddr, cloneInto } from './migrate.js';
import { checkRefName, refNameRefusal } from './ref-names.js';
import { checkRepoName } from './names.js';
import type { RepoFiles } from './repo-files.js';

export interface Permission {
  admin: boolean;
  push: boolean;
  pull: boolean;
}

export interface CreateRepoInput {
  owner: UserRow;
  name: string;
  description: string;
  private: boolean;
  defaultBranch?: string;
  /** make a first commit with a README.md, as Gitea's auto_init does */
  autoInit?: boolean;
}

export interface MigrateInput extends CreateRepoInput {
  /** who asks (local paths are for site admins only) */
  doer: UserRow;
  cloneAddr: string;
  mirror: boolean;
  authUsername: string;
  authPassword: string;
}

const ZERO_TIME = '1970-01-01T00:00:00Z';

export class GithostService {
  /** owner/name pairs being created right now, so two requests cannot build the same one */
  private readonly pending = new Set<string>();

  constructor(
    readonly db: GithostDb,
    readonly files: RepoFiles,
    readonly settings: Readonly<GithostSettings>,
    private readonly log: Logger,
  ) {}

  repoPath(owner: UserRow, repo: RepoRow): string {
    return this.files.pathOf(owner.lower_name, repo.lower_name);
  }

  permission(repo: RepoRow, doer: UserRow | undefined): Permission {
    if (doer && (doer.is_admin === 1 || doer.id === repo.owner_id)) return { admin: true, push: true, pull: true };
    const mode = doer ? this.db.collaborationMode(repo.id, doer.id) : undefined;
    const push = mode === 'write' || mode === 'admin';
    return { admin: mode === 'admin', push, pull: push || mode === 'read' || repo.private === 0 };
  }

  /**
   * After a push: when HEAD names a branch that does not exist (a new repository
   * whose first push was another branch), point HEAD and default_branch at a pushed
   * branch, as Gitea does, so clones and "HEAD" revisions resolve.
   */
  async fixDefaultBranch(owner: UserRow, repo: RepoRow, pushedRefs: string[]): Promise<void> {
    const cwd = this.repoPath(owner, repo);
    const env = this.files.env();
    const head = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd, env });
    if (head.code === 0) return;
    const branches = pushedRefs.filter((r) => r.startsWith('refs/heads/'));
    const pick =
      branches.find((r) => r === `refs/heads/${repo.default_branch}`) ??
      branches.find((r) => r === 'refs/heads/main') ??
      branches.find((r) => r === 'refs/heads/master') ??
      branches[0];
    if (!pick) return;
    const exists = await runGit(['rev-parse', '--verify', '--quiet', pick], { cwd, env });
    if (exists.code !== 0) return;
    await runGit(['symbolic-ref', 'HEAD', pick], { cwd, env });
    this.db.setDefaultBranch(repo.id, pick.slice('refs/heads/'.length));
  }

  /** Whether the repository has no refs at all (Gitea's `empty`) and how many branches it has. */
  async refState(owner: UserRow, repo: RepoRow): Promise<{ empty: boolean; branchCount: number }> {
    const r = await runGit(['for-each-ref', '--format=%(refname)'], { cwd: this.repoPath(owner, repo), env: this.files.env() });
    if (r.code !== 0) return { empty: true, branchCount: 0 };
    const refs = r.stdout.toString('utf8').split('\n').filter(Boolean);
    return { empty: refs.length === 0, branchCount: refs.filter((n) => n.startsWith('refs/heads/')).length };
  }

  async isEmpty(owner: UserRow, repo: RepoRow): Promise<boolean> {
    const r = await runGit(['for-each-ref', '--count=1', '--format=%(refname)'], { cwd: this.repoPath(owner, repo), env: this.files.env() });
    return r.code !== 0 || r.stdout.length === 0;
  }

  private reserve(owner: UserRow, name: string): string {
    const key = `${owner.lower_name}/${name.toLowerCase()}`;
    if (this.pending.has(key) || this.db.repoByName(owner.id, name)) throw E.githostRepoExists(owner.name, name);
    this.pending.add(key);
    return key;
  }

  private finish(tmp: string, input: CreateRepoInput, extra: { mirror: boolean; originalURL: string; defaultBranch: string }): RepoRow {
    return this.db.insertRepo(
      {
        owner_id: input.owner.id,
        name: input.name,
        description: input.description,
        private: input.private ? 1 : 0,
        mirror: extra.mirror ? 1 : 0,
        original_url: extra.originalURL,
        default_branch: extra.defaultBranch,
      },
      input.owner.name,
      () => this.files.commit(tmp, input.owner.lower_name, input.name.toLowerCase()),
    );
  }

  async createRepo(input: CreateRepoInput): Promise<RepoRow> {
    checkRepoName(input.name);
    const key = this.reserve(input.owner, input.name);
    let tmp: string | undefined;
    try {
      const branch = input.defaultBranch || 'main';
      tmp = await this.files.initTemp(branch);
      if (input.autoInit) await this.initialCommit(tmp, input, branch);
      const row = this.finish(tmp, input, { mirror: false, originalURL: '', defaultBranch: branch });
      tmp = undefined;
      return row;
    } finally {
      if (tmp) this.files.discard(tmp);
      this.pending.delete(key);
    }
  }

  private async initialCommit(dir: string, input: CreateRepoInput, branch: string): Promise<void> {
    const who = input.owner.full_name || input.owner.name;
    const env = this.files.env({
      GIT_AUTHOR_NAME: who,
      GIT_AUTHOR_EMAIL: input.owner.email,
      GIT_COMMITTER_NAME: who,
      GIT_COMMITTER_EMAIL: input.owner.email,
    });
    const readme = `# ${input.name}\n\n${input.description ? `${input.description}\n` : ''}`;
    const blob = (await git(['hash-object', '-w', '--stdin'], { cwd: dir, env, input: Buffer.from(readme) })).toString().trim();
    const tree = (await git(['mktree'], { cwd: dir, env, input: Buffer.from(`100644 blob ${blob}\tREADME.md\n`) })).toString().trim();
    const commit = (await git(['commit-tree', tree, '-m', 'Initial commit'], { cwd: dir, env })).toString().trim();
    await git(['update-ref', `refs/heads/${branch}`, commit], { cwd: dir, env });
  }

  async migrate(input: MigrateInput): Promise<RepoRow> {
    checkRepoName(input.name);
    const src = await checkCloneAddr(input.cloneAddr, { username: input.authUsername, password: input.authPassword }, this.settings, {
      isAdmin: input.doer.is_admin === 1,
      dataDir: this.files.root,
    });
    const key = this.reserve(input.owner, input.name);
    const tmp = this.files.tempPath();
    let done = false;
    try {
      await cloneInto(src, tmp, input.mirror, this.files.env(), this.settings.migrateTimeoutMs);
      // an imported branch or tag named like a full commit SHA is refused as a pushed one is (ref-names.ts)
      const refs = await runGit(['for-each-ref', '--format=%(refname)', 'refs/heads/', 'refs/tags/'], { cwd: tmp, env: this.files.env() });
      for (const ref of refs.stdout.toString('utf8').split('\n')) {
        if (refNameRefusal(ref)) checkRefName(ref.startsWith('refs/heads/') ? 'branch' : 'tag', ref.replace(/^refs\/(heads|tags)\//, ''));
      }
      const head = await runGit(['symbolic-ref', '--short', 'HEAD'], { cwd: tmp, env: this.files.env() });
      const defaultBranch = head.code === 0 ? head.stdout.toString('utf8').trim() || 'main' : 'main';
      if (!input.mirror) await runGit(['remote', 'remove', 'origin'], { cwd: tmp, env: this.files.env() });
      await this.files.prepare(tmp);
      const originalURL = src.local ? '' : src.target;
      const row = this.finish(tmp, input, { mirror: input.mirror, originalURL, defaultBranch });
      done = true;
      this.log.info({ repo: `${input.owner.name}/${input.name}`, from: originalURL || '(local)' }, 'migrated repository');
      return row;
    } finally {
      if (!done && existsSync(tmp)) this.files.discard(tmp);
      this.pending.delete(key);
    }
  }

  /** Add an armored key (and its subkeys) for `user`, following Gitea's rules. */
  async addGpgKey(user: UserRow, armored: string): Promise<GpgKeyRow[]> {
    // STRAIT_ERR_SIGNATURE_KEY_INVALID answers 422, as Gitea does (its giteaStatus)
    const info = await parseArmoredPublicKey(armored);
    const all = [info.keyID, ...info.subkeys.map((s) => s.keyID)];
    if (all.some((id) => this.db.gpgKeyByKeyId(id))) throw new HttpError(E.githostKeyUsed, 'A key with the same id already exists');
    const userEmail = user.lower_email;
    const emails = info.emails.filter((e) => e === userEmail).map((email) => ({ email, verified: true }));
    if (emails.length === 0) {
      throw new HttpError(
        E.githostNotFound,
        `None of the emails attached to the GPG key could be found. The key's e-mails ${JSON.stringify(info.emails)} must include the e-mail of user ${user.name}.`,
      );
    }
    const secs = (d: Date | undefined) => (d ? Math.floor(d.getTime() / 1000) : 0);
    const rows: NewGpgKey[] = [
      {
        owner_id: user.id,
        key_id: info.keyID,
        primary_key_id: '',
        content: info.armored,
        emails: JSON.stringify(emails),
        can_sign: info.canSign ? 1 : 0,
        can_encrypt_comms: info.canEncryptComms ? 1 : 0,
        can_encrypt_storage: info.canEncryptStorage ? 1 : 0,
        can_certify: info.canCertify ? 1 : 0,
        verified: 1,
        created_unix: secs(info.created),
        expired_unix: secs(info.expires),
      },
    ];
    for (const s of info.subkeys) {
      rows.push({
        owner_id: user.id,
        key_id: s.keyID,
        primary_key_id: info.keyID,
        content: '',
        emails: '[]',
        can_sign: s.canSign ? 1 : 0,
        can_encrypt_comms: s.canEncryptComms ? 1 : 0,
        can_encrypt_storage: s.canEncryptStorage ? 1 : 0,
        can_certify: s.canCertify ? 1 : 0,
        verified: 1,
        created_unix: secs(s.created),
        expired_unix: secs(s.expires),
      });
    }
    try {
      return this.db.insertGpgKeys(rows);
    } catch (err) {
      if (/UNIQUE/.test((err as Error).message)) throw new HttpError(E.githostKeyUsed, 'A key with the same id already exists');
      throw err;
    }
  }

  /** A user's SSH keys (/user/keys) as allowed signers whose principal is the user's e-mail. */
  sshSignersOf(user: UserRow): AllowedSigners {
    const set = new AllowedSigners();
    for (const row of this.db.publicKeysOf(user.id)) {
      try {
        const key = parseSshPublicKey(Buffer.from(row.content.split(' ')[1] ?? '', 'base64'));
        set.add({ line: 0, text: row.content, principals: user.email, certAuthority: false, key, comment: row.name });
      } catch {
        // a stored key that no longer parses cannot have made a signature
      }
    }
    return set;
  }

  /** Primary keys of a user with their subkeys. */
  gpgKeys(user: UserRow): { key: GpgKeyRow; subkeys: GpgKeyRow[] }[] {
    const rows = this.db.gpgKeysOf(user.id);
    return rows.filter((r) => r.primary_key_id === '').map((key) => ({ key, subkeys: rows.filter((r) => r.primary_key_id === key.key_id) }));
  }

  /** Gitea's Commit object with its verification for `rev` (a SHA or a ref name). */
  async commit(owner: UserRow, repo: RepoRow, rev: string, base: string, toUserJson: (u: UserRow) => unknown): Promise<Record<string, unknown> | undefined> {
    if (!/^[\w./-]{1,256}$/.test(rev) || rev.startsWith('-') || rev.includes('..')) return undefined;
    const cwd = this.repoPath(owner, repo);
    const env = this.files.env();
    const resolved = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], { cwd, env });
    if (resolved.code !== 0) return undefined;
    const sha = resolved.stdout.toString('utf8').trim();
    const raw = await runGit(['cat-file', 'commit', sha], { cwd, env });
    if (raw.code !== 0) return undefined;
    // the bytes verified below must be the commit named sha (git-exec.ts turns replace refs off; this proves it)
    if (!gitObjectMatches('commit', raw.stdout, sha)) throw E.internal(`git returned content that is not the commit ${sha}`);

    const committerEmail = /^committer .*<([^<>]*)> /m.exec(raw.stdout.toString('utf8'))?.[1] ?? '';
    const authorEmail = /^author .*<([^<>]*)> /m.exec(raw.stdout.toString('utf8'))?.[1] ?? '';
    const committer = committerEmail ? this.db.userByEmail(committerEmail) : undefined;
    const author = authorEmail ? this.db.userByEmail(authorEmail) : undefined;
    const keys = committer ? this.db.gpgKeysOf(committer.id).filter((k) => k.primary_key_id === '' && k.content) : [];
    const check = await verifyCommitSignature(
      raw.stdout,
      keys.map((k) => k.content),
      { sshSigners: committer ? this.sshSignersOf(committer) : new AllowedSigners() },
    );
    const c = check.commit;
    let reason: string;
    let verified = false;
    let signer: Record<string, string> | null = null;
    if (check.status === 'unsigned') reason = 'gpg.error.not_signed_commit';
    else if (!committer) reason = 'gpg.error.no_committer_account';
    else if (check.status === 'unknown-key') reason = 'gpg.error.no_gpg_keys_found';
    else if (check.status === 'valid') {
      verified = true;
      reason = `${committer.name} / ${check.keyID}`;
      signer = { name: committer.full_name || committer.name, email: committerEmail, username: committer.name };
    } else reason = `gpg.error.${check.status === 'bad-signature' ? 'probable_bad_signature' : `${check.status.replace('-', '_')}_key`}: ${check.reason}`;

    const full = `${owner.name}/${repo.name}`;
    const ident = (i: { name: string; email: string; date: string } | undefined) => (i ? { name: i.name, email: i.email, date: i.date } : null);
    return {
      url: `${base}/api/v1/repos/${full}/git/commits/${sha}`,
      sha,
      created: c?.committer.date ?? ZERO_TIME,
      html_url: `${base}/${full}/commit/${sha}`,
      commit: {
        url: `${base}/api/v1/repos/${full}/git/commits/${sha}`,
        author: ident(c?.author),
        committer: ident(c?.committer),
        message: c?.message ?? '',
        tree: { url: `${base}/api/v1/repos/${full}/git/trees/${c?.tree ?? ''}`, sha: c?.tree ?? '', created: c?.committer.date ?? ZERO_TIME },
        verification: { verified, reason, signature: check.signature, signer, payload: check.payload },
      },
      author: author ? toUserJson(author) : null,
      committer: committer ? toUserJson(committer) : null,
      parents: (c?.parents ?? []).map((p) => ({ url: `${base}/api/v1/repos/${full}/git/commits/${p}`, sha: p, created: ZERO_TIME })),
      files: null,
      stats: null,
    };
  }
}
