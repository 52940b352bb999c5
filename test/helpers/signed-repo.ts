// Test fixture: OpenPGP keys made by the real gpg (in a private GNUPGHOME) and git
// repositories with commits and tags signed by the real `git commit -S` / `git tag -s`.
//   alice: ed25519 certify-only primary key with an ed25519 signing subkey
//   bob:   rsa2048 primary key that signs
//   carol: ed25519 key created in 2020 that expired in 2021 (signs with gpg's faked time)
//   dave:  ed25519 key, revoked after it signed
//   eve:   ed25519 key that is never imported anywhere
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface TestKey {
  name: string;
  email: string;
  fingerprint: string;
  /** primary key ID, 16 hex upper case */
  keyID: string;
  /** signing subkey ID when the key has one */
  signingSubkeyID?: string;
  armored: string;
}

export interface GpgWorld {
  dir: string;
  gnupgHome: string;
  keys: Record<'alice' | 'bob' | 'carol' | 'dave' | 'eve', TestKey>;
  env: NodeJS.ProcessEnv;
  /** write a gpg.program wrapper that signs with a faked system time (for carol) */
  fakedTimeGpg: string;
  revokeDave(): void;
  cleanup(): void;
}

function gpg(home: string, args: string[], input?: string): string {
  return execFileSync('gpg', ['--homedir', home, '--batch', '--yes', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function fingerprintOf(home: string, email: string): { fpr: string; subs: { id: string; caps: string }[] } {
  const out = gpg(home, ['--with-colons', '--fingerprint', '--list-keys', email]);
  const lines = out.split('\n');
  let fpr = '';
  const subs: { id: string; caps: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const f = (lines[i] ?? '').split(':');
    if (f[0] === 'fpr' && !fpr) fpr = f[9] ?? '';
    if (f[0] === 'sub') subs.push({ id: (f[4] ?? '').toUpperCase(), caps: f[11] ?? '' });
  }
  return { fpr, subs };
}

export function createGpgWorld(): GpgWorld {
  const dir = mkdtempSync(join(tmpdir(), 'strait-gpg-'));
  const home = join(dir, 'gnupg');
  mkdirSync(home, { mode: 0o700 });
  const keys = {} as GpgWorld['keys'];
  const make = (name: string, algo: string, usage: string, extra: string[] = []): TestKey => {
    const email = `${name}@example.com`;
    gpg(home, [...extra, '--quick-gen-key', `${name[0]!.toUpperCase()}${name.slice(1)} Tester <${email}>`, algo, usage, extra.length ? '1y' : 'never']);
    const { fpr } = fingerprintOf(home, email);
    return { name, email, fingerprint: fpr, keyID: fpr.slice(24), armored: '' };
  };
  keys.alice = make('alice', 'ed25519', 'cert');
  gpg(home, ['--quick-add-key', keys.alice.fingerprint, 'ed25519', 'sign', 'never']);
  keys.alice.signingSubkeyID = fingerprintOf(home, keys.alice.email).subs.find((s) => s.caps.includes('s'))?.id ?? '';
  keys.bob = make('bob', 'rsa2048', 'sign');
  keys.carol = make('carol', 'ed25519', 'sign', ['--faked-system-time', '20200101T000000!']);
  keys.dave = make('dave', 'ed25519', 'sign');
  keys.eve = make('eve', 'ed25519', 'sign');
  for (const k of Object.values(keys)) k.armored = gpg(home, ['--armor', '--export', k.fingerprint]);
  const fakedTimeGpg = join(dir, 'gpg-2020');
  writeFileSync(fakedTimeGpg, `#!/bin/sh\nexec gpg --faked-system-time 20200601T000000! "$@"\n`);
  chmodSync(fakedTimeGpg, 0o755);
  const env = { ...process.env, GNUPGHOME: home, GIT_CONFIG_NOSYSTEM: '1', HOME: dir, GIT_TERMINAL_PROMPT: '0' };
  return {
    dir,
    gnupgHome: home,
    keys,
    env,
    fakedTimeGpg,
    revokeDave() {
      const revDir = join(home, 'openpgp-revocs.d');
      const file = readdirSync(revDir).find((f) => f.startsWith(keys.dave.fingerprint));
      if (!file) throw new Error('no revocation certificate for dave');
      const cert = readFileSync(join(revDir, file), 'utf8').replace(/^:-----BEGIN/m, '-----BEGIN');
      gpg(home, ['--import'], cert);
      keys.dave.armored = gpg(home, ['--armor', '--export', keys.dave.fingerprint]);
    },
    cleanup() {
      try {
        execFileSync('gpgconf', ['--homedir', home, '--kill', 'all'], { stdio: 'ignore' });
      } catch {
        /* no agent */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestRepo {
  dir: string;
  git(...args: string[]): string;
  /** write files (path -> content), commit them; sign with `signer` (a TestKey) or leave unsigned */
  commit(files: Record<string, string | null>, message: string, signer?: TestKey, opts?: { gpgProgram?: string }): string;
  tag(name: string, target: string, opts?: { annotated?: boolean; signer?: TestKey; message?: string }): void;
}

export function createRepo(world: GpgWorld, name = 'repo'): TestRepo {
  const dir = join(world.dir, name);
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: dir, env: world.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Author');
  git('config', 'user.email', 'author@example.com');
  git('config', 'commit.gpgsign', 'false');
  return {
    dir,
    git,
    commit(files, message, signer, opts) {
      for (const [p, content] of Object.entries(files)) {
        const full = join(dir, p);
        if (content === null) {
          rmSync(full, { force: true });
        } else {
          mkdirSync(dirname(full), { recursive: true });
          writeFileSync(full, content);
        }
      }
      git('add', '-A');
      const args = ['commit', '-q', '--allow-empty', '-m', message];
      if (signer) {
        const prefix = opts?.gpgProgram ? ['-c', `gpg.program=${opts.gpgProgram}`] : [];
        execFileSync('git', [...prefix, '-c', `user.signingkey=${signer.fingerprint}`, ...args, '-S'], { cwd: dir, env: world.env, stdio: 'pipe' });
      } else {
        git(...args);
      }
      return git('rev-parse', 'HEAD');
    },
    tag(tagName, target, opts = {}) {
      if (!opts.annotated) {
        git('tag', tagName, target);
      } else if (opts.signer) {
        execFileSync('git', ['-c', `user.signingkey=${opts.signer.fingerprint}`, 'tag', '-s', '-m', opts.message ?? tagName, tagName, target], {
          cwd: dir,
          env: world.env,
          stdio: 'pipe',
        });
      } else {
        git('tag', '-a', '-m', opts.message ?? tagName, tagName, target);
      }
    },
  };
}
