// Bare repositories on disk: <githost>/repos/<owner>/<repo>.git (lower case names,
// checked by names.ts before they get here). New repositories are built in
// <githost>/tmp and renamed into place, so a reader never sees half a repository.
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitEnv } from './git-exec.js';

export const PRE_RECEIVE = `#!/bin/sh
# Installed by strait githost. The server authorizes a push before it runs
# git-receive-pack and marks it in the environment. Anything else is refused here,
# before a ref moves; git keeps received objects in quarantine until this hook
# passes, so a refused push stores nothing. Ref names and branch protection are
# checked by the server itself (push-check.ts): this hook hands it the pushed refs.
if [ "$STRAIT_GITHOST_PUSH" != "authorized" ]; then
  echo "strait githost: push refused: this push was not authorized by the server" >&2
  exit 1
fi
case "$STRAIT_GITHOST_CHECK" in
  none) exit 0 ;;
  socket) exec "$STRAIT_GITHOST_NODE" -e "$STRAIT_GITHOST_HOOK_CLIENT" ;;
esac
echo "strait githost: push refused: the server did not say how to check this push" >&2
exit 1
`;

export const POST_RECEIVE = `#!/bin/sh
# Installed by strait githost: hand the updated refs back to the server.
if [ -n "$STRAIT_GITHOST_PUSH_LOG" ]; then
  cat >> "$STRAIT_GITHOST_PUSH_LOG"
else
  cat > /dev/null
fi
exit 0
`;

export class RepoFiles {
  readonly reposDir: string;
  readonly tmpDir: string;
  readonly homeDir: string;

  constructor(readonly root: string) {
    this.reposDir = join(root, 'repos');
    this.tmpDir = join(root, 'tmp');
    this.homeDir = join(root, 'home');
    for (const d of [root, this.reposDir, this.tmpDir, this.homeDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
  }

  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return gitEnv(this.homeDir, extra);
  }

  pathOf(ownerLower: string, repoLower: string): string {
    return join(this.reposDir, ownerLower, `${repoLower}.git`);
  }

  /** A fresh directory name under tmp/ for building a repository. */
  tempPath(): string {
    return join(this.tmpDir, `build-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.git`);
  }

  /** Hooks and settings every served repository has. */
  async prepare(dir: string, defaultBranch?: string): Promise<void> {
    const env = this.env();
    const set = async (k: string, v: string) => {
      await git(['config', k, v], { cwd: dir, env });
    };
    await set('receive.fsckObjects', 'true');
    await set('receive.denyNonFastForwards', 'false');
    await set('http.receivepack', 'true');
    await set('core.fsync', 'committed');
    await set('core.fsyncMethod', 'fsync');
    await set('gc.auto', '0');
    if (defaultBranch) await git(['symbolic-ref', 'HEAD', `refs/heads/${defaultBranch}`], { cwd: dir, env });
    this.installHooks(dir);
  }

  /** Write the hooks (also at start-up over those of an older version; see server.ts). */
  installHooks(dir: string): void {
    const hooks = join(dir, 'hooks');
    mkdirSync(hooks, { recursive: true });
    for (const f of readdirSync(hooks)) if (f.endsWith('.sample')) rmSync(join(hooks, f), { force: true });
    for (const [name, text] of [
      ['pre-receive', PRE_RECEIVE],
      ['post-receive', POST_RECEIVE],
    ] as const) {
      const p = join(hooks, name);
      if (!existsSync(p) || readFileSync(p, 'utf8') !== text) writeFileSync(p, text);
      chmodSync(p, 0o755);
    }
  }

  /** Create an empty bare repository in a temp dir. */
  async initTemp(defaultBranch: string): Promise<string> {
    const tmp = this.tempPath();
    await git(['init', '--bare', '--quiet', tmp], { env: this.env() });
    await this.prepare(tmp, defaultBranch);
    return tmp;
  }

  /** Move a finished temp repository into place (same file system: atomic). */
  commit(tmp: string, ownerLower: string, repoLower: string): void {
    const dest = this.pathOf(ownerLower, repoLower);
    mkdirSync(join(this.reposDir, ownerLower), { recursive: true, mode: 0o700 });
    if (existsSync(dest)) throw new Error(`${dest} exists`);
    renameSync(tmp, dest);
  }

  discard(path: string): void {
    rmSync(path, { recursive: true, force: true });
  }

  /**
   * Start-up recovery after a crash: drop unfinished builds in tmp/, leftovers of an
   * interrupted receive-pack (quarantine dirs, stale ref locks) and repository
   * directories that no database row names (a crash between rename and commit).
   */
  recover(known: Set<string>): string[] {
    const removed: string[] = [];
    for (const f of readdirSync(this.tmpDir)) {
      rmSync(join(this.tmpDir, f), { recursive: true, force: true });
      removed.push(join(this.tmpDir, f));
    }
    for (const owner of readdirSync(this.reposDir)) {
      const ownerDir = join(this.reposDir, owner);
      if (!statSync(ownerDir).isDirectory()) continue;
      for (const repo of readdirSync(ownerDir)) {
        const dir = join(ownerDir, repo);
        if (!known.has(`${owner}/${repo}`)) {
          rmSync(dir, { recursive: true, force: true });
          removed.push(dir);
          continue;
        }
        const objects = join(dir, 'objects');
        if (existsSync(objects)) {
          for (const f of readdirSync(objects)) {
            if (f.startsWith('tmp_objdir-incoming-') || f.startsWith('incoming-')) {
              rmSync(join(objects, f), { recursive: true, force: true });
              removed.push(join(objects, f));
            }
          }
        }
        removed.push(...removeLocks(dir, join(dir, 'refs')));
        for (const f of ['packed-refs.lock', 'HEAD.lock', 'config.lock', 'shallow.lock']) {
          if (existsSync(join(dir, f))) {
            rmSync(join(dir, f), { force: true });
            removed.push(join(dir, f));
          }
        }
      }
    }
    return removed;
  }
}

function removeLocks(_root: string, dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) out.push(...removeLocks(_root, p));
    else if (f.endsWith('.lock')) {
      rmSync(p, { force: true });
      out.push(p);
    }
  }
  return out;
}
