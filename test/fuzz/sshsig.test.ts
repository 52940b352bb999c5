// Fuzz the SSH signature parser, the SSH key parser and the allowed_signers parser:
// truncated, mutated and random inputs give STRAIT_ERR_SSH_SIGNATURE_INVALID /
// STRAIT_ERR_SSH_KEY_INVALID / STRAIT_ERR_ALLOWED_SIGNERS_INVALID (or parse), never another
// exception; verification of any of them returns an outcome and never throws or says
// "valid". Seeds are real ssh-keygen signatures (ed25519, ecdsa, rsa); deterministic PRNG.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { AllowedSigners, parseSshPublicKey, parseSshSignature, verifyDetached } from '../../src/platform/signatures/index.js';
import { hasSshKeygen, sshKey, sshSign, type SshTestKey } from '../helpers/ssh-signing.js';
import { prng } from '../helpers/prng.js';

const skip = hasSshKeygen() ? false : 'ssh-keygen is not installed';
const MESSAGE = Buffer.from('tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nmsg\n');
let dir: string;
let keys: SshTestKey[] = [];
let blobs: Buffer[] = [];
let allowed: AllowedSigners;

const armor = (b: Buffer): string => `-----BEGIN SSH SIGNATURE-----\n${b.toString('base64').replace(/(.{70})/g, '$1\n')}\n-----END SSH SIGNATURE-----\n`;
const unarmor = (t: string): Buffer =>
  Buffer.from(
    t
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'))
      .join(''),
    'base64',
  );

before(() => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'strait-sshsig-fuzz-'));
  keys = [sshKey(dir, 'ed', 'ed25519'), sshKey(dir, 'ec', 'ecdsa', 384), sshKey(dir, 'rsa', 'rsa', 2048)];
  blobs = keys.map((k) => unarmor(sshSign(k, MESSAGE)));
  allowed = AllowedSigners.parse(keys.map((k) => `a@example.com ${k.pub}`).join('\n'));
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** parse: a StraitError with the SSH signature code, or a result; nothing else */
function parsesOrRefuses(text: string, label: string): void {
  try {
    parseSshSignature(text);
  } catch (err) {
    assert.ok(isStraitError(err) && err.code === 'STRAIT_ERR_SSH_SIGNATURE_INVALID', `${label}: ${String(err)}`);
  }
}

test('the seeds verify (the fuzz starts from valid signatures)', { skip }, async () => {
  for (const b of blobs) assert.equal((await verifyDetached(MESSAGE, armor(b), [], { sshSigners: allowed })).status, 'valid');
});

test('every truncation of every seed is refused with STRAIT_ERR_SSH_SIGNATURE_INVALID', { skip }, () => {
  for (const b of blobs) {
    for (let n = 0; n < b.length; n++) {
      assert.throws(
        () => parseSshSignature(armor(b.subarray(0, n))),
        (e: unknown) => isStraitError(e) && e.code === 'STRAIT_ERR_SSH_SIGNATURE_INVALID',
        `truncated to ${n}`,
      );
    }
  }
});

test('10k mutated signatures: only StraitError from the parser; verification never throws and never says valid', { skip }, async () => {
  const rnd = prng(0x55a11);
  const t0 = Date.now();
  for (let i = 0; i < 10_000 && Date.now() - t0 < 60_000; i++) {
    const b = Buffer.from(blobs[rnd() % blobs.length]!);
    const edits = 1 + (rnd() % 4);
    for (let e = 0; e < edits; e++) {
      const at = rnd() % b.length;
      switch (rnd() % 4) {
        case 0:
          b[at] = rnd() & 0xff;
          break;
        case 1:
          b[at] = (b[at] as number) ^ (1 << (rnd() % 8));
          break;
        case 2:
          if (at + 4 <= b.length) b.writeUInt32BE([0, 1, 0x7fffffff, 0xffffffff, rnd()][rnd() % 5]!, at);
          break;
        default:
          b[at] = 0;
      }
    }
    const text = armor(b);
    parsesOrRefuses(text, `seed 0x55a11 iteration ${i}`);
    const r = await verifyDetached(MESSAGE, text, [], { sshSigners: allowed });
    if (r.status === 'valid') {
      // a mutation may hit bytes the signature does not cover only if the result equals a seed
      assert.ok(
        blobs.some((s) => s.equals(b)),
        `iteration ${i}: mutated signature accepted`,
      );
    }
  }
});

test('garbage armor and random bytes are refused, never a crash', { skip }, async () => {
  const rnd = prng(0xbadc0de);
  const cases = [
    '',
    '-----BEGIN SSH SIGNATURE-----',
    '-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----\n',
    '-----BEGIN SSH SIGNATURE-----\n!!!!\n-----END SSH SIGNATURE-----\n',
    '-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\ntrailing',
    `-----BEGIN SSH SIGNATURE-----\n${'A'.repeat(100_000)}\n-----END SSH SIGNATURE-----\n`,
  ];
  for (let i = 0; i < 2000; i++) {
    const b = Buffer.alloc(rnd() % 300);
    for (let j = 0; j < b.length; j++) b[j] = rnd() & 0xff;
    if (i % 2 === 0 && b.length > 10) Buffer.from('SSHSIG\0\0\0\x01').copy(b);
    cases.push(armor(b));
  }
  for (const [i, c] of cases.entries()) {
    parsesOrRefuses(c, `case ${i}`);
    const r = await verifyDetached(MESSAGE, c, [], { sshSigners: allowed });
    assert.notEqual(r.status, 'valid');
  }
});

test('SSH public key blobs: truncations and mutations give STRAIT_ERR_SSH_KEY_INVALID or a key', { skip }, () => {
  const rnd = prng(0x5eed);
  const seeds = keys.map((k) => Buffer.from(k.pub.split(' ')[1]!, 'base64'));
  for (const s of seeds) {
    for (let n = 0; n < s.length; n++)
      assert.throws(
        () => parseSshPublicKey(s.subarray(0, n)),
        (e: unknown) => isStraitError(e) && e.code === 'STRAIT_ERR_SSH_KEY_INVALID',
      );
  }
  for (let i = 0; i < 5000; i++) {
    const b = Buffer.from(seeds[rnd() % seeds.length]!);
    b[rnd() % b.length] = rnd() & 0xff;
    try {
      parseSshPublicKey(b);
    } catch (err) {
      assert.ok(isStraitError(err) && err.code === 'STRAIT_ERR_SSH_KEY_INVALID', `iteration ${i}: ${String(err)}`);
    }
  }
});

test('allowed_signers: random lines are parsed or reported, never thrown', { skip }, () => {
  const rnd = prng(0xa110);
  const alphabet = ' \t",=*?!#@abcz-_.:/+AZ09\n';
  const words = ['cert-authority', 'namespaces="git"', 'valid-before="20250101"', 'valid-after="2025"', 'ssh-ed25519', keys[0]!.pub, '"', 'a@b'];
  for (let i = 0; i < 5000; i++) {
    let line = '';
    const n = rnd() % 8;
    for (let j = 0; j < n; j++) line += rnd() % 2 ? words[rnd() % words.length] : alphabet[rnd() % alphabet.length];
    const set = AllowedSigners.parse(line);
    assert.ok(set.entries.length + set.problems.length <= line.split('\n').length);
  }
});
