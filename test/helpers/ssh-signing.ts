// Test fixture: SSH keys made by the real ssh-keygen and git commits signed with them by
// the real git (`git -c gpg.format=ssh -c user.signingkey=KEY commit -S`), in a temp dir.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SshTestKey {
  /** private key file (ssh-keygen -f), its .pub beside it */
  path: string;
  /** "type base64 comment" */
  pub: string;
  /** "SHA256:..." as ssh-keygen -l prints it */
  fingerprint: string;
}

export function hasSshKeygen(): boolean {
  return spawnSync('ssh-keygen', ['-?'], { encoding: 'utf8' }).error === undefined;
}

/** A key of `type` (ed25519, ecdsa, rsa) with `bits` (ecdsa 256/384/521, rsa). */
export function sshKey(dir: string, name: string, type = 'ed25519', bits?: number): SshTestKey {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', String(bits)] : []), '-N', '', '-C', name, '-f', path]);
  const pub = readFileSync(`${path}.pub`, 'utf8').trim();
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${path}.pub`], { encoding: 'utf8' }).split(' ')[1] as string;
  return { path, pub, fingerprint };
}

/** An SSH signature of `data` by `key` in `namespace`, made by ssh-keygen -Y sign. */
export function sshSign(key: SshTestKey, data: string | Buffer, namespace = 'git', hash = 'sha512'): string {
  return execFileSync('ssh-keygen', ['-Y', 'sign', '-q', '-f', key.path, '-n', namespace, '-O', `hashalg=${hash}`], { input: data, encoding: 'utf8' });
}

/** A git work tree whose commits are SSH-signed by `key`, with fixed dates. */
export function sshWorkTree(
  root: string,
  key: SshTestKey,
  ident = { name: 'Alice', email: 'alice@example.com' },
): {
  dir: string;
  git: (...args: string[]) => string;
  commit: (message: string, opts?: { date?: string; sign?: boolean; key?: SshTestKey }) => string;
  raw: (rev: string) => Buffer;
} {
  const dir = join(root, `wt-${Math.random().toString(36).slice(2)}`);
  const env = { PATH: process.env['PATH'], HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LANG: 'C' };
  execFileSync('git', ['init', '-q', '-b', 'main', dir], { env });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' });
  git('config', 'user.name', ident.name);
  git('config', 'user.email', ident.email);
  git('config', 'gpg.format', 'ssh');
  git('config', 'user.signingkey', key.path);
  let n = 0;
  const commit = (message: string, opts: { date?: string; sign?: boolean; key?: SshTestKey } = {}) => {
    writeFileSync(join(dir, `f${n++}.txt`), `${message}\n`);
    git('add', '-A');
    const date = opts.date ?? '2025-06-01T12:00:00Z';
    execFileSync('git', ['-c', `user.signingkey=${(opts.key ?? key).path}`, 'commit', '-q', ...(opts.sign === false ? [] : ['-S']), '-m', message], {
      cwd: dir,
      env: { ...env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
    });
    return git('rev-parse', 'HEAD').trim();
  };
  const raw = (rev: string) => execFileSync('git', ['cat-file', 'commit', rev], { cwd: dir, env });
  return { dir, git, commit, raw };
}
