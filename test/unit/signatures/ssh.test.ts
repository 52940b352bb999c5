// SSH commit signatures verified in process against allowed_signers, with real
// ssh-keygen keys and real `git commit -S` (gpg.format=ssh). Every case is also put to
// `git verify-commit` with the same allowed_signers file (git runs ssh-keygen -Y verify
// at the commit time): strait must accept exactly what git accepts.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { createPrivateKey, sign as cryptoSign, createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AllowedSigners,
  parseAllowedSignerLine,
  parseSshPublicKeyLine,
  parseSshTime,
  matchPatternList,
  verifyCommitSignature,
  type SshSignerRule,
} from '../../../src/platform/signatures/index.js';
import { hasSshKeygen, sshKey, sshSign, sshWorkTree, type SshTestKey } from '../../helpers/ssh-signing.js';

const skip = hasSshKeygen() ? false : 'ssh-keygen is not installed';
let dir: string;
let alice: SshTestKey;
let bob: SshTestKey;

before(() => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'strait-sshsig-'));
  alice = sshKey(dir, 'alice');
  bob = sshKey(dir, 'bob');
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What `git verify-commit` says about `rev` with this allowed_signers text: accepted or not. */
function gitAccepts(wtDir: string, allowed: string, rev: string): boolean {
  const file = join(dir, `allowed-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, allowed);
  const r = spawnSync('git', ['-c', 'gpg.format=ssh', '-c', `gpg.ssh.allowedSignersFile=${file}`, 'verify-commit', rev], {
    cwd: wtDir,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'], HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  return r.status === 0;
}

async function verify(raw: Buffer, allowed: string, rules?: SshSignerRule[], now?: Date) {
  return verifyCommitSignature(raw, [], { sshSigners: AllowedSigners.parse(allowed), ...(rules ? { sshRules: rules } : {}), ...(now ? { now } : {}) });
}

describe('SSH public keys', { skip }, () => {
  for (const [type, bits] of [
    ['ed25519', undefined],
    ['ecdsa', 256],
    ['ecdsa', 384],
    ['ecdsa', 521],
    ['rsa', 3072],
  ] as const) {
    test(`${type}${bits ? `-${bits}` : ''}: fingerprint as ssh-keygen -l prints it`, () => {
      const k = sshKey(dir, `k-${type}-${bits ?? 0}`, type, bits);
      assert.equal(parseSshPublicKeyLine(k.pub).key.fingerprint, k.fingerprint);
    });
  }

  test('an RSA key under 1024 bits, a DSA-looking type and garbage are STRAIT_ERR_SSH_KEY_INVALID', () => {
    for (const line of ['ssh-dss AAAAB3NzaC1kc3MAAACBAP', 'ssh-ed25519 AAAA', 'not a key', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==']) {
      assert.throws(
        () => parseSshPublicKeyLine(line),
        (e: { code?: string }) => e.code === 'STRAIT_ERR_SSH_KEY_INVALID',
        line,
      );
    }
  });
});

describe('allowed_signers parsing', { skip }, () => {
  test('principals, options and key as ssh-keygen reads them', () => {
    const e = parseAllowedSignerLine(
      `"alice@example.com,*@ops.example.com" namespaces="git,file",valid-after="20240101",VALID-BEFORE="20260101Z" ${alice.pub}`,
    );
    assert.equal(e.principals, 'alice@example.com,*@ops.example.com');
    assert.equal(e.namespaces, 'git,file');
    assert.equal(e.validBefore, Date.UTC(2026, 0, 1) / 1000);
    assert.equal(e.key.fingerprint, alice.fingerprint);
    assert.equal(e.comment, 'alice');
  });

  test('bad lines are reported by number and skipped; comments and blank lines ignored', () => {
    const set = AllowedSigners.parse(
      [
        '# comment',
        '',
        `alice@example.com ${alice.pub}`,
        `bob@example.com frobnicate ${bob.pub}`,
        `bob@example.com valid-before=20250101 ${bob.pub}`,
        `bob@example.com valid-before="2025" ${bob.pub}`,
        alice.pub,
        `x@y "unterminated ${bob.pub}`,
      ].join('\n'),
    );
    assert.equal(set.entries.length, 1);
    assert.deepEqual(
      set.problems.map((p) => p.line),
      [4, 5, 6, 7, 8],
    );
    assert.match(set.problems[0]!.reason, /unknown option "frobnicate"/);
    assert.match(set.problems[1]!.reason, /double-quoted value/);
    assert.match(set.problems[3]!.reason, /principals are missing/);
  });

  test('timestamps: YYYYMMDD[Z], YYYYMMDDHHMM[SS][Z]; impossible dates refused', () => {
    assert.equal(parseSshTime('20250102Z'), Date.UTC(2025, 0, 2) / 1000);
    assert.equal(parseSshTime('202501021304Z'), Date.UTC(2025, 0, 2, 13, 4) / 1000);
    assert.equal(parseSshTime('20250102130405Z'), Date.UTC(2025, 0, 2, 13, 4, 5) / 1000);
    assert.equal(parseSshTime('20250231Z'), undefined);
    assert.equal(parseSshTime('2025010'), undefined);
  });

  test('pattern lists: wildcards and negation as OpenSSH match_pattern_list', () => {
    assert.equal(matchPatternList('alice@example.com', '*@example.com'), true);
    assert.equal(matchPatternList('alice@example.com', 'bob@*,!alice@*'), false);
    assert.equal(matchPatternList('alice@example.com', 'a?ice@example.com'), true);
    assert.equal(matchPatternList('git', 'file'), false);
    assert.equal(matchPatternList('*', 'x'), false);
  });
});

describe('SSH-signed commits (real git, real ssh-keygen)', { skip }, () => {
  test('accepted for every key type, and git verify-commit agrees', async () => {
    for (const [type, bits] of [
      ['ed25519', undefined],
      ['ecdsa', 256],
      ['ecdsa', 384],
      ['ecdsa', 521],
      ['rsa', 2048],
    ] as const) {
      const k = sshKey(dir, `signer-${type}-${bits ?? 0}`, type, bits);
      const wt = sshWorkTree(dir, k);
      const sha = wt.commit(`signed by ${type}`);
      const allowed = `alice@example.com namespaces="git" ${k.pub}\n`;
      const r = await verify(wt.raw(sha), allowed);
      assert.equal(r.status, 'valid', `${type}: ${r.message}`);
      assert.equal(r.keyID, k.fingerprint);
      assert.equal(r.signer, 'alice@example.com');
      assert.equal(gitAccepts(wt.dir, allowed, sha), true);
    }
  });

  test('an rsa-sha2-256 signature (made outside ssh-keygen) is accepted; ssh-keygen -Y verify agrees', async () => {
    const k = sshKey(dir, 'rsa256', 'rsa', 2048);
    execFileSync('ssh-keygen', ['-q', '-p', '-N', '', '-P', '', '-m', 'PEM', '-f', k.path]);
    const priv = createPrivateKey(readFileSync(k.path));
    const msg = Buffer.from('payload\n');
    const str = (b: Buffer | string) => {
      const x = Buffer.from(b);
      const l = Buffer.alloc(4);
      l.writeUInt32BE(x.length);
      return Buffer.concat([l, x]);
    };
    const h = createHash('sha512').update(msg).digest();
    const signed = Buffer.concat([Buffer.from('SSHSIG'), str('git'), str(''), str('sha512'), str(h)]);
    const sigBlob = Buffer.concat([str('rsa-sha2-256'), str(cryptoSign('sha256', signed, priv))]);
    const pubBlob = Buffer.from(k.pub.split(' ')[1]!, 'base64');
    const ver = Buffer.alloc(4);
    ver.writeUInt32BE(1);
    const blob = Buffer.concat([Buffer.from('SSHSIG'), ver, str(pubBlob), str('git'), str(''), str('sha512'), str(sigBlob)]);
    const armored = `-----BEGIN SSH SIGNATURE-----\n${blob.toString('base64').replace(/(.{70})/g, '$1\n')}\n-----END SSH SIGNATURE-----\n`;
    const allowed = `a@example.com ${k.pub}\n`;
    writeFileSync(join(dir, 'rsa256.allowed'), allowed);
    writeFileSync(join(dir, 'rsa256.sig'), armored);
    const ssh = spawnSync(
      'ssh-keygen',
      ['-Y', 'verify', '-f', join(dir, 'rsa256.allowed'), '-I', 'a@example.com', '-n', 'git', '-s', join(dir, 'rsa256.sig')],
      { input: msg },
    );
    assert.equal(ssh.status, 0, String(ssh.stderr));
    const { verifyDetached } = await import('../../../src/platform/signatures/index.js');
    const r = await verifyDetached(msg, armored, [], { sshSigners: AllowedSigners.parse(allowed) });
    assert.equal(r.status, 'valid', r.message);
  });

  test('refused by principal: the project allows another principal; allowed by a matching pattern or the fingerprint', async () => {
    const wt = sshWorkTree(dir, alice);
    const sha = wt.commit('principal');
    const allowed = `alice@example.com ${alice.pub}\nbob@example.com ${bob.pub}\n`;
    const refused = await verify(wt.raw(sha), allowed, [{ principal: 'bob@example.com' }]);
    assert.equal(refused.status, 'not-allowed');
    assert.match(
      refused.message,
      new RegExp(`SSH key ${alice.fingerprint.replace(/[+/]/g, '.')} of alice@example.com, which is not allowed by the project's sshSigners`),
    );
    assert.equal((await verify(wt.raw(sha), allowed, [{ principal: '*@example.com' }])).status, 'valid');
    assert.equal((await verify(wt.raw(sha), allowed, [{ fingerprint: alice.fingerprint }])).status, 'valid');
    assert.equal((await verify(wt.raw(sha), allowed, [{ fingerprint: alice.fingerprint, principal: 'bob@*' }])).status, 'not-allowed');
    assert.equal((await verify(wt.raw(sha), allowed, [{ fingerprint: bob.fingerprint }])).status, 'not-allowed');
  });

  test('valid-before / valid-after are checked at the commit time, as git does, and at verification time', async () => {
    const wt = sshWorkTree(dir, alice);
    const old = wt.commit('made in 2024', { date: '2024-06-01T00:00:00Z' });
    const late = wt.commit('made in 2025', { date: '2025-06-01T00:00:00Z' });
    const allowed = `alice@example.com valid-before="20250101Z" ${alice.pub}\n`;
    const in2024 = new Date('2024-12-01T00:00:00Z');
    assert.equal((await verify(wt.raw(old), allowed, undefined, in2024)).status, 'valid');
    assert.equal(gitAccepts(wt.dir, allowed, old), true);
    // verified after valid-before: refused however the commit is dated (the signer writes the date)
    const backdated = await verify(wt.raw(old), allowed);
    assert.equal(backdated.status, 'expired');
    assert.match(backdated.message, /valid before 2025-01-01T00:00:00Z only \(checked when verified, 20\d\d-/);
    const r = await verify(wt.raw(late), allowed, undefined, in2024);
    assert.equal(r.status, 'expired');
    assert.match(r.message, /valid before 2025-01-01T00:00:00Z only; the commit is dated 2025-06-01T00:00:00Z/);
    assert.equal(gitAccepts(wt.dir, allowed, late), false);
    const after2025 = `alice@example.com valid-after="20250101Z" ${alice.pub}\n`;
    assert.equal((await verify(wt.raw(old), after2025)).status, 'expired');
    assert.equal(gitAccepts(wt.dir, after2025, old), false);
    assert.equal((await verify(wt.raw(late), after2025)).status, 'valid');
    assert.equal((await verify(wt.raw(late), after2025, undefined, in2024)).status, 'expired', 'not yet valid when verified');
  });

  test('a line whose namespaces exclude git refuses the key; git agrees', async () => {
    const wt = sshWorkTree(dir, alice);
    const sha = wt.commit('ns option');
    const allowed = `alice@example.com namespaces="file" ${alice.pub}\n`;
    const r = await verify(wt.raw(sha), allowed);
    assert.equal(r.status, 'not-allowed');
    assert.match(r.message, /allows namespaces "file", not "git"/);
    assert.equal(gitAccepts(wt.dir, allowed, sha), false);
  });

  test('a signature made for namespace "file" is refused as a commit signature; git agrees', async () => {
    const wt = sshWorkTree(dir, alice);
    wt.commit('unsigned base', { sign: false });
    const raw = wt.raw('HEAD').toString('latin1');
    const sig = sshSign(alice, Buffer.from(raw, 'latin1'), 'file');
    const at = raw.indexOf('\n\n');
    const forged = `${raw.slice(0, at)}\ngpgsig ${sig.trimEnd().split('\n').join('\n ')}${raw.slice(at)}`;
    const sha = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: wt.dir,
      input: Buffer.from(forged, 'latin1'),
      encoding: 'utf8',
    }).trim();
    const allowed = `alice@example.com ${alice.pub}\n`;
    const r = await verify(wt.raw(sha), allowed);
    assert.equal(r.status, 'bad-signature');
    assert.match(r.message, /namespace "file", not "git"/);
    assert.equal(gitAccepts(wt.dir, allowed, sha), false);
    // the same bytes signed for "git" pass: the refusal above is the namespace's
    const good = `${raw.slice(0, at)}\ngpgsig ${sshSign(alice, Buffer.from(raw, 'latin1')).trimEnd().split('\n').join('\n ')}${raw.slice(at)}`;
    assert.equal((await verifyCommitSignature(Buffer.from(good, 'latin1'), [], { sshSigners: AllowedSigners.parse(allowed) })).status, 'valid');
  });

  test('a tampered commit (message changed after signing) is a bad signature; git agrees', async () => {
    const wt = sshWorkTree(dir, alice);
    const sha = wt.commit('deploy v1');
    const tampered = Buffer.from(wt.raw(sha).toString('latin1').replace('deploy v1', 'deploy v2'), 'latin1');
    const forged = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: wt.dir, input: tampered, encoding: 'utf8' }).trim();
    const allowed = `alice@example.com ${alice.pub}\n`;
    const r = await verify(tampered, allowed);
    assert.equal(r.status, 'bad-signature');
    assert.match(r.message, /bad SSH signature from key SHA256:.*the ed25519 signature does not match/);
    assert.equal(gitAccepts(wt.dir, allowed, forged), false);
  });

  test('an unknown key is refused naming its fingerprint; git agrees', async () => {
    const wt = sshWorkTree(dir, bob);
    const sha = wt.commit('by bob');
    const allowed = `alice@example.com ${alice.pub}\n`;
    const r = await verify(wt.raw(sha), allowed);
    assert.equal(r.status, 'unknown-key');
    assert.equal(r.keyID, bob.fingerprint);
    assert.match(r.message, /not in the SSH allowed signers/);
    assert.equal(gitAccepts(wt.dir, allowed, sha), false);
    assert.equal((await verifyCommitSignature(wt.raw(sha), [])).status, 'unknown-key');
  });
});

describe('SSH certificates (cert-authority)', { skip }, () => {
  let agentPid: number | undefined;
  let sock: string;
  before(async () => {
    if (skip) return;
    sock = join(dir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    agentPid = agent.pid;
    for (let i = 0; i < 100 && spawnSync('test', ['-S', sock]).status !== 0; i++) await new Promise((r) => setTimeout(r, 20));
  });
  after(() => {
    if (agentPid) process.kill(agentPid);
  });

  function certSign(name: string, principals: string, validity: string, data: Buffer): { armored: string; ca: SshTestKey } {
    const ca = sshKey(dir, `${name}-ca`);
    const user = sshKey(dir, name);
    execFileSync('ssh-keygen', ['-q', '-s', ca.path, '-I', name, '-n', principals, '-V', validity, `${user.path}.pub`]);
    execFileSync('ssh-add', ['-q', user.path], { env: { ...process.env, SSH_AUTH_SOCK: sock } });
    const armored = execFileSync('ssh-keygen', ['-Y', 'sign', '-q', '-f', `${user.path}-cert.pub`, '-n', 'git'], {
      input: data,
      encoding: 'utf8',
      env: { ...process.env, SSH_AUTH_SOCK: sock },
    });
    return { armored, ca };
  }

  test('a certificate from a cert-authority line is accepted with its principal; wrong principal and expiry refused', async () => {
    const { verifyDetached } = await import('../../../src/platform/signatures/index.js');
    const data = Buffer.from('tree 0\n');
    const { armored, ca } = certSign('carol', 'carol@example.com', '20240101:20300101', data);
    const ok = await verifyDetached(data, armored, [], {
      sshSigners: AllowedSigners.parse(`*@example.com cert-authority ${ca.pub}\n`),
      signedAt: new Date('2025-01-01'),
    });
    assert.equal(ok.status, 'valid', ok.message);
    assert.equal(ok.signer, 'carol@example.com');
    assert.equal(ok.primaryKeyID, ca.fingerprint);
    const wrong = await verifyDetached(data, armored, [], {
      sshSigners: AllowedSigners.parse(`*@ops.example.com cert-authority ${ca.pub}\n`),
      signedAt: new Date('2025-01-01'),
    });
    assert.equal(wrong.status, 'not-allowed');
    const late = await verifyDetached(data, armored, [], {
      sshSigners: AllowedSigners.parse(`*@example.com cert-authority ${ca.pub}\n`),
      signedAt: new Date('2031-01-01'),
    });
    assert.equal(late.status, 'expired');
    assert.match(late.message, /certificate expired at 2030-01-01/);
    // the CA's key listed without cert-authority does not vouch for its certificates
    assert.equal((await verifyDetached(data, armored, [], { sshSigners: AllowedSigners.parse(`*@example.com ${ca.pub}\n`) })).status, 'unknown-key');
  });
});
