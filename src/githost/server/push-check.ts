// Push-time checks, inside the server, before any ref moves: on every push, no new branch
// or tag named like a full commit SHA (ref-names.ts), protected tags (tag-protection.ts:
// "Tag T is protected"); then branch protection.
// git-receive-pack runs the repository's pre-receive hook (repo-files.ts) with the pushed
// objects still in quarantine; the hook is a few lines of node (HOOK_CLIENT) that hands
// its stdin ("old new ref" lines) and the quarantine's object directories to this
// server over a unix socket, with the per-push token the server gave it, and prints
// the answer to git's stderr (the client shows it as "remote: ..."). The checks, in
// Gitea's order (routers/private/hook_pre_receive.go preReceiveBranch), per updated
// branch that a rule protects:
//   deletion                                  -> "branch B is protected from deletion"
//   non-fast-forward without enable_force_push -> "branch B is protected from force push"
//   require_signed_commits: every new commit signed by a key registered to the githost
//     user whose e-mail is the commit's committer e-mail (GPG keys /user/gpg_keys, SSH
//     keys /user/keys), verified by the same code as GitOps (platform/signatures)
//                                             -> "branch B is protected from unverified commit <full SHA>: <why>"
//   enable_push / push whitelist              -> "Not allowed to push to protected branch B"
// New commits: old..new for an update; for a new branch every commit not reachable from
// a branch that a signing rule already protects (stricter than Gitea's "--not --all",
// which lets an unsigned commit in through an unprotected branch).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join, resolve, sep } from 'node:path';
import type { Logger } from '../../base/log/index.js';
import { AllowedSigners, Keyring, gitObjectMatches, readPublicKeys, verifyCommitSignature } from '../../platform/signatures/index.js';
import { canUserPush, firstMatchingRule, sortedRules, type LoadedRule } from './branch-protection.js';
import type { RepoRow, UserRow } from './db.js';
import { runGit } from './git-exec.js';
import { refNameRefusal } from './ref-names.js';
import { mayControlTag } from './tag-protection.js';
import type { GithostService } from './service.js';

/** The hook's client: node -e "$STRAIT_GITHOST_HOOK_CLIENT" (CommonJS, no single quotes). */
export const HOOK_CLIENT = `
const net = require("node:net");
const env = process.env;
const addr = env.STRAIT_GITHOST_HOOK_SOCKET || "";
const chunks = [];
process.stdin.on("data", (d) => chunks.push(d));
process.stdin.on("end", () => {
  const s = net.connect(addr.startsWith("@") ? "\\0" + addr.slice(1) : addr);
  let out = "";
  s.setEncoding("utf8");
  s.on("data", (d) => { out += d; });
  s.on("error", (e) => { process.stderr.write("strait githost: push refused: the push check is unavailable: " + e.message + "\\n"); process.exit(1); });
  s.on("end", () => {
    let r;
    try { r = JSON.parse(out); } catch { process.stderr.write("strait githost: push refused: the push check gave no answer\\n"); process.exit(1); }
    if (r.message) process.stderr.write(r.message.endsWith("\\n") ? r.message : r.message + "\\n");
    process.exit(r.ok === true ? 0 : 1);
  });
  s.end(JSON.stringify({ token: env.STRAIT_GITHOST_HOOK_TOKEN || "", updates: Buffer.concat(chunks).toString("utf8"),
    objectDir: env.GIT_OBJECT_DIRECTORY || "", alternates: env.GIT_ALTERNATE_OBJECT_DIRECTORIES || "" }) + "\\n");
});
`;

const ZERO = /^0+$/;
const MAX_REQUEST = 4 * 1024 * 1024;
/** commits checked in one push at most (beyond: refused, push in parts) */
export const MAX_CHECKED_COMMITS = 100_000;

interface PushContext {
  owner: UserRow;
  repo: RepoRow;
  doer: UserRow;
  repoDir: string;
}

interface CheckAnswer {
  ok: boolean;
  message: string;
}

export class PushChecks {
  private server: Server | undefined;
  /** the address the hook connects to ("@name" = abstract socket) */
  address = '';
  private readonly pushes = new Map<string, PushContext>();

  constructor(
    private readonly svc: GithostService,
    private readonly log: Logger,
  ) {}

  async start(root: string): Promise<void> {
    const path = join(root, 'hook.sock');
    let listenOn: string;
    if (Buffer.byteLength(path) <= 100) {
      rmSync(path, { force: true });
      listenOn = path;
      this.address = path;
    } else {
      // a unix socket path is at most 107 bytes; a deep state dir gets an abstract socket
      const name = `strait-githost-${process.pid}-${randomBytes(8).toString('hex')}`;
      listenOn = `\0${name}`;
      this.address = `@${name}`;
    }
    // the hook half-closes after its request; the answer comes after that
    const server = createServer({ allowHalfOpen: true }, (sock) => this.serve(sock));
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(listenOn, () => {
        server.off('error', fail);
        ok();
      });
    });
    this.server = server;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((r) => s.close(() => r()));
    if (this.address.startsWith('/')) rmSync(this.address, { force: true });
  }

  /** A token for one push; the hook presents it. */
  register(ctx: PushContext): string {
    const token = randomBytes(32).toString('hex');
    this.pushes.set(token, ctx);
    return token;
  }

  unregister(token: string): void {
    this.pushes.delete(token);
  }

  private serve(sock: Socket): void {
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('error', () => undefined);
    const answer = (a: CheckAnswer): void => {
      sock.end(`${JSON.stringify(a)}\n`);
    };
    sock.on('data', (d: string) => {
      buf += d;
      if (buf.length > MAX_REQUEST) {
        sock.destroy();
        return;
      }
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      sock.pause();
      let req: { token?: unknown; updates?: unknown; objectDir?: unknown; alternates?: unknown };
      try {
        req = JSON.parse(buf.slice(0, nl)) as typeof req;
      } catch {
        answer({ ok: false, message: 'strait githost: push refused: the push check request is malformed' });
        return;
      }
      const ctx = typeof req.token === 'string' ? this.pushes.get(req.token) : undefined;
      if (!ctx) {
        answer({ ok: false, message: 'strait githost: push refused: this push was not authorized by the server' });
        return;
      }
      this.check(ctx, String(req.updates ?? ''), String(req.objectDir ?? ''), String(req.alternates ?? '')).then(answer, (err: unknown) => {
        this.log.error({ err, repo: `${ctx.owner.name}/${ctx.repo.name}` }, 'push check failed');
        answer({ ok: false, message: 'strait githost: push refused: the push check failed; see the githost log' });
      });
    });
  }

  /** The quarantine environment, when the directories are inside the repository. */
  private gitEnvFor(ctx: PushContext, objectDir: string, alternates: string): NodeJS.ProcessEnv | undefined {
    const objects = resolve(ctx.repoDir, 'objects');
    const inside = (p: string) => p !== '' && (resolve(ctx.repoDir, p) === objects || resolve(ctx.repoDir, p).startsWith(objects + sep));
    const alt = alternates.split(':').filter(Boolean);
    if ((objectDir && !inside(objectDir)) || alt.some((a) => !inside(a))) return undefined;
    return this.svc.files.env({
      ...(objectDir ? { GIT_OBJECT_DIRECTORY: resolve(ctx.repoDir, objectDir) } : {}),
      ...(alt.length ? { GIT_ALTERNATE_OBJECT_DIRECTORIES: alt.map((a) => resolve(ctx.repoDir, a)).join(':') } : {}),
    });
  }

  async check(ctx: PushContext, updates: string, objectDir: string, alternates: string): Promise<CheckAnswer> {
    // every push: a new branch or tag named like a full commit SHA (ref-names.ts); deleting one stays possible
    for (const line of updates.split('\n')) {
      const [, newSha, ref] = line.trim().split(' ');
      if (!newSha || !ref || ZERO.test(newSha)) continue;
      const refusal = refNameRefusal(ref);
      if (refusal) {
        this.log.info({ repo: `${ctx.owner.name}/${ctx.repo.name}`, pusher: ctx.doer.name, ref }, 'push refused: ref name looks like a commit SHA');
        return { ok: false, message: `strait githost: push refused: ${refusal}` };
      }
    }
    // protected tags (tag-protection.ts): create, move and delete, as Gitea's preReceiveTag
    for (const line of updates.split('\n')) {
      const ref = line.trim().split(' ')[2];
      if (!ref?.startsWith('refs/tags/')) continue;
      const tag = ref.slice('refs/tags/'.length);
      if (!mayControlTag(this.svc.db, ctx.repo.id, tag, ctx.doer)) {
        this.log.info({ repo: `${ctx.owner.name}/${ctx.repo.name}`, pusher: ctx.doer.name, tag }, 'push refused by tag protection');
        return { ok: false, message: `Tag ${tag} is protected` };
      }
    }
    const rules = sortedRules(this.svc.db, ctx.repo.id);
    if (rules.length === 0) return { ok: true, message: '' };
    const env = this.gitEnvFor(ctx, objectDir, alternates);
    if (!env) return { ok: false, message: 'strait githost: push refused: the quarantine directory is not inside the repository' };
    const cwd = ctx.repoDir;
    const verifier = new CommitVerifier(this.svc);
    for (const line of updates.split('\n')) {
      const m = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) ([0-9a-f]{40}(?:[0-9a-f]{24})?) (refs\/heads\/\S+)$/.exec(line.trim());
      if (!m) continue;
      const [, oldSha, newSha, ref] = m as unknown as [string, string, string, string];
      const branch = ref.slice('refs/heads/'.length);
      const hit = firstMatchingRule(rules, branch);
      if (!hit) continue;
      const refusal = await this.checkBranch(ctx, hit, rules, branch, oldSha, newSha, { cwd, env }, verifier);
      if (refusal) {
        this.log.info({ repo: `${ctx.owner.name}/${ctx.repo.name}`, pusher: ctx.doer.name, branch, refusal }, 'push refused by branch protection');
        return { ok: false, message: refusal };
      }
    }
    return { ok: true, message: '' };
  }

  private async checkBranch(
    ctx: PushContext,
    hit: LoadedRule,
    rules: LoadedRule[],
    branch: string,
    oldSha: string,
    newSha: string,
    git: { cwd: string; env: NodeJS.ProcessEnv },
    verifier: CommitVerifier,
  ): Promise<string | undefined> {
    const rule = hit.rule;
    if (ZERO.test(newSha)) return `branch ${branch} is protected from deletion`;
    let force = false;
    if (!ZERO.test(oldSha)) {
      const r = await runGit(['rev-list', '--max-count=1', oldSha, `^${newSha}`, '--'], git);
      if (r.code !== 0) return `branch ${branch}: strait githost could not compare ${oldSha} and ${newSha}`;
      if (r.stdout.length > 0) {
        if (!rule.enable_force_push) return `branch ${branch} is protected from force push`;
        force = true;
      }
    }
    if (rule.require_signed_commits) {
      let range: string[];
      if (!ZERO.test(oldSha)) range = [newSha, `^${oldSha}`];
      else {
        const heads = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/'], git);
        const guarded = heads.stdout
          .toString('utf8')
          .split('\n')
          .map((l) => l.split(' '))
          .filter(([sha, name]) => {
            if (!sha || !name) return false;
            const other = firstMatchingRule(rules, name.slice('refs/heads/'.length));
            return other?.rule.require_signed_commits === true;
          })
          .map(([sha]) => `^${sha as string}`);
        range = [newSha, ...guarded];
      }
      const list = await runGit(['rev-list', `--max-count=${MAX_CHECKED_COMMITS + 1}`, ...range, '--'], git);
      if (list.code !== 0) return `branch ${branch}: strait githost could not list the pushed commits`;
      const shas = list.stdout.toString('utf8').split('\n').filter(Boolean);
      if (shas.length > MAX_CHECKED_COMMITS) return `branch ${branch}: the push brings more than ${MAX_CHECKED_COMMITS} new commits; push them in parts`;
      // oldest first: the refusal names the first commit that breaks the rule
      for (const sha of shas.reverse()) {
        const why = await verifier.check(sha, git);
        if (why) return `branch ${branch} is protected from unverified commit ${sha}: ${why}`;
      }
    }
    if (!canUserPush(rule, ctx.doer, force)) return `Not allowed to ${force ? 'force-push' : 'push'} to protected branch ${branch}`;
    return undefined;
  }
}

/**
 * Verifies commits of one push: the committer e-mail names the githost user whose GPG
 * and SSH keys may have signed it (Gitea's rule). Keys are parsed once per user.
 */
export class CommitVerifier {
  private readonly keysOf = new Map<number, Promise<{ ring: Keyring; ssh: AllowedSigners }>>();

  constructor(private readonly svc: GithostService) {}

  private keys(user: UserRow): Promise<{ ring: Keyring; ssh: AllowedSigners }> {
    let k = this.keysOf.get(user.id);
    if (!k) {
      k = (async () => {
        const ring = new Keyring();
        for (const row of this.svc.db.gpgKeysOf(user.id)) {
          if (row.primary_key_id !== '' || !row.content) continue;
          try {
            for (const key of await readPublicKeys(row.content)) await ring.add(key);
          } catch {
            // a stored key that no longer parses cannot have made a signature
          }
        }
        const ssh = this.svc.sshSignersOf(user);
        return { ring, ssh };
      })();
      this.keysOf.set(user.id, k);
    }
    return k;
  }

  /** Why `sha` is not a verified commit, or undefined when it is. */
  async check(sha: string, git: { cwd: string; env: NodeJS.ProcessEnv }): Promise<string | undefined> {
    const raw = await runGit(['cat-file', 'commit', sha], git);
    if (raw.code !== 0) return 'it cannot be read';
    if (!gitObjectMatches('commit', raw.stdout, sha)) return 'git returned other content for it';
    const email = /^committer .*<([^<>]*)> /m.exec(raw.stdout.toString('utf8'))?.[1] ?? '';
    const user = email ? this.svc.db.userByEmail(email) : undefined;
    const { ring, ssh } = user ? await this.keys(user) : { ring: new Keyring(), ssh: new AllowedSigners() };
    const r = await verifyCommitSignature(raw.stdout, ring, { sshSigners: ssh });
    if (r.status === 'valid') return user ? undefined : `its committer e-mail ${JSON.stringify(email)} is no githost user's`;
    if (r.status === 'unsigned') return 'it is not signed';
    if (!user) return `its committer e-mail ${JSON.stringify(email)} is no githost user's, so no key of a githost user signed it`;
    if (r.status === 'unknown-key') {
      return `it is signed with ${r.keyID.startsWith('SHA256:') ? 'SSH key' : 'GPG key'} ${r.keyID || '(no key ID)'}, which is not a key of githost user ${user.name} (the committer, ${email})`;
    }
    return r.message.replace(/^Revision (has|is|cannot)/, (_m, verb: string) => `it ${verb}`);
  }
}
