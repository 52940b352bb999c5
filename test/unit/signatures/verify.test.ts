// In-process verification (openpgp.js) of commits and tags signed by the real git + gpg.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as openpgp from 'openpgp';
import { isStraitError } from '../../../src/base/errors/index.js';
import {
  Keyring,
  normalizeKeyID,
  parseCommitObject,
  parseTagObject,
  readPublicKeys,
  readQuickSignature,
  verifyCommitSignature,
  verifyCommitSignatures,
  verifyDetached,
  verifyTagSignature,
} from '../../../src/platform/signatures/index.js';
import { prng } from '../../helpers/prng.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../../helpers/signed-repo.js';

let world: GpgWorld;
let repo: TestRepo;
let keyring: Keyring;
const sha: Record<string, string> = {};
const raw = (s: string, type = 'commit'): Buffer => execFileSync('git', ['cat-file', type, s], { cwd: repo.dir });

before(async () => {
  world = createGpgWorld();
  repo = createRepo(world);
  sha['unsigned'] = repo.commit({ 'app/cm.yaml': 'a: 1\n' }, 'unsigned commit');
  sha['alice'] = repo.commit({ 'app/cm.yaml': 'a: 2\n' }, 'signed by alice (subkey)', world.keys.alice);
  sha['bob'] = repo.commit({ 'app/cm.yaml': 'a: 3\n' }, 'signed by bob\n\nwith a body\n', world.keys.bob);
  sha['carol'] = repo.commit({ 'app/cm.yaml': 'a: 4\n' }, 'signed by carol in 2020', world.keys.carol, { gpgProgram: world.fakedTimeGpg });
  sha['dave'] = repo.commit({ 'app/cm.yaml': 'a: 5\n' }, 'signed by dave before revocation', world.keys.dave);
  sha['eve'] = repo.commit({ 'app/cm.yaml': 'a: 6\n' }, 'signed by eve', world.keys.eve);
  repo.tag('v1-signed', sha['unsigned']!, { annotated: true, signer: world.keys.bob });
  repo.tag('v1-plain', sha['unsigned']!, { annotated: true });
  world.revokeDave();
  const keys = await readPublicKeys([world.keys.alice, world.keys.bob, world.keys.carol, world.keys.dave].map((k) => k.armored).join('\n'));
  keyring = await Keyring.fromKeys(keys);
});
after(() => world?.cleanup());

describe('verifyCommitSignature outcomes (table)', () => {
  const cases: { name: string; commit: string; allowed?: () => string[]; status: string; keyID: () => string; message: RegExp }[] = [
    { name: 'unsigned', commit: 'unsigned', status: 'unsigned', keyID: () => '', message: /^Revision is not signed$/ },
    {
      name: 'signing subkey of alice',
      commit: 'alice',
      status: 'valid',
      keyID: () => world.keys.alice.signingSubkeyID!,
      message: /subkey of .* by Alice Tester <alice@example.com>/,
    },
    {
      name: 'subkey allowed through its primary key ID',
      commit: 'alice',
      allowed: () => [world.keys.alice.keyID],
      status: 'valid',
      keyID: () => world.keys.alice.signingSubkeyID!,
      message: /Alice/,
    },
    {
      name: 'subkey allowed through the subkey ID',
      commit: 'alice',
      allowed: () => [world.keys.alice.signingSubkeyID!],
      status: 'valid',
      keyID: () => world.keys.alice.signingSubkeyID!,
      message: /Alice/,
    },
    {
      name: 'imported but not listed',
      commit: 'alice',
      allowed: () => [world.keys.bob.keyID],
      status: 'not-allowed',
      keyID: () => world.keys.alice.signingSubkeyID!,
      message: /not allowed by the project's signatureKeys/,
    },
    {
      name: 'rsa primary key',
      commit: 'bob',
      allowed: () => [world.keys.bob.fingerprint],
      status: 'valid',
      keyID: () => world.keys.bob.keyID,
      message: /Bob Tester/,
    },
    { name: 'key not imported', commit: 'eve', status: 'unknown-key', keyID: () => world.keys.eve.keyID, message: /not imported/ },
    { name: 'expired key', commit: 'carol', status: 'expired', keyID: () => world.keys.carol.keyID, message: /expired on 202[01]-/ },
    { name: 'revoked key', commit: 'dave', status: 'revoked', keyID: () => world.keys.dave.keyID, message: /has been revoked/ },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await verifyCommitSignature(raw(sha[c.commit]!), keyring, c.allowed ? { allowedKeyIDs: c.allowed() } : {});
      assert.equal(r.status, c.status, r.message);
      assert.equal(r.keyID, c.keyID());
      assert.match(r.message, c.message);
      if (c.keyID()) assert.ok(r.message.includes(c.keyID()), 'message names the key ID');
    });
  }
});

test('a tampered commit has a bad signature', async () => {
  const tampered = Buffer.from(raw(sha['bob']!).toString('latin1').replace('signed by bob', 'signed by mallory'), 'latin1');
  const r = await verifyCommitSignature(tampered, keyring);
  assert.equal(r.status, 'bad-signature');
  assert.match(r.message, new RegExp(`bad signature from key ${world.keys.bob.keyID}`));
});

test('the rebuilt payload is what gpg itself verifies (payload is exact)', () => {
  const c = parseCommitObject(raw(sha['bob']!));
  assert.ok(c.signature);
  writeFileSync(join(world.dir, 'payload'), c.payload);
  writeFileSync(join(world.dir, 'payload.sig'), c.signature!);
  const r = spawnSync('gpg', ['--homedir', world.gnupgHome, '--batch', '--verify', join(world.dir, 'payload.sig'), join(world.dir, 'payload')], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /Good signature from "Bob Tester/);
  assert.equal(c.tree.length, 40);
  assert.equal(c.parents.length, 1);
  assert.match(Buffer.from(c.message, 'latin1').toString(), /^signed by bob\n\nwith a body\n$/);
});

test('annotated tags: the tag object signature is verified', async () => {
  const signedTag = repo.git('rev-parse', 'v1-signed');
  const plainTag = repo.git('rev-parse', 'v1-plain');
  const t = parseTagObject(raw(signedTag, 'tag'));
  assert.equal(t.object, sha['unsigned']);
  assert.equal(t.objectType, 'commit');
  assert.equal(t.tag, 'v1-signed');
  assert.equal((await verifyTagSignature(raw(signedTag, 'tag'), keyring)).status, 'valid');
  assert.equal((await verifyTagSignature(raw(plainTag, 'tag'), keyring)).status, 'unsigned');
  // and git agrees
  assert.equal(spawnSync('git', ['verify-tag', 'v1-signed'], { cwd: repo.dir, env: world.env }).status, 0);
});

test('an array of keys works as well as a Keyring', async () => {
  const keys = await readPublicKeys(world.keys.bob.armored);
  assert.equal((await verifyCommitSignature(raw(sha['bob']!), keys)).status, 'valid');
  assert.equal((await verifyCommitSignature(raw(sha['alice']!), keys)).status, 'unknown-key');
});

test('key ID rules', () => {
  const table: [string, string | null][] = [
    ['4AEE18F83AFDEB23', '4AEE18F83AFDEB23'],
    ['4aee18f83afdeb23', '4AEE18F83AFDEB23'],
    ['0123456789ABCDEF01234567' + '4AEE18F83AFDEB23', '4AEE18F83AFDEB23'],
    ['4AEE18F8', null],
    ['4AEE18F83AFDEB2G', null],
    ['', null],
    ['0x4AEE18F83AFDEB23', null],
  ];
  for (const [input, want] of table) {
    if (want === null) {
      assert.throws(
        () => normalizeKeyID(input),
        (e: unknown) => isStraitError(e, 'STRAIT_ERR_GITOPS_KEY_ID_INVALID') && e.message === `${input} is not a valid GnuPG key ID`,
      );
    } else {
      assert.equal(normalizeKeyID(input), want);
    }
  }
});

test('readPublicKeys refuses what is not a public key', async () => {
  await assert.rejects(readPublicKeys('hello'), (e: unknown) => isStraitError(e, 'STRAIT_ERR_GITOPS_KEY_DATA_INVALID'));
  const { privateKey } = await openpgp.generateKey({ userIDs: [{ name: 'x' }], format: 'armored' });
  await assert.rejects(readPublicKeys(privateKey), (e: unknown) => isStraitError(e, 'STRAIT_ERR_GITOPS_KEY_DATA_INVALID'));
});

test('fuzz: parsers throw only StraitError on 20k mutated objects', () => {
  const seeds = [raw(sha['bob']!), raw(sha['alice']!), raw(repo.git('rev-parse', 'v1-signed'), 'tag')];
  let seed = 12345;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 20000; i++) {
    const base = Buffer.from(seeds[i % seeds.length]!);
    const buf = i % 7 === 0 ? Buffer.from(Array.from({ length: rnd(300) }, () => rnd(256))) : base.subarray(0, rnd(base.length + 1));
    for (let m = rnd(4); m > 0 && buf.length > 0; m--) buf[rnd(buf.length)] = rnd(256);
    for (const parse of [parseCommitObject, parseTagObject]) {
      try {
        parse(buf);
      } catch (e) {
        assert.ok(isStraitError(e), `non-StraitError: ${String(e)}`);
      }
    }
  }
});

test('differential: node:crypto and openpgp.js engines give the same outcome', async () => {
  const inputs = [...Object.values(sha).map((s) => raw(s))];
  inputs.push(Buffer.from(raw(sha['bob']!).toString('latin1').replace('signed by bob', 'signed by bobby'), 'latin1'));
  inputs.push(Buffer.from(raw(sha['alice']!).toString('latin1').replace('signed by alice', 'signed by alicia'), 'latin1'));
  for (const input of inputs) {
    for (const allowed of [undefined, [world.keys.bob.keyID]]) {
      const a = await verifyCommitSignature(input, keyring, allowed ? { allowedKeyIDs: allowed } : {});
      const b = await verifyCommitSignature(input, keyring, { engine: 'openpgp', ...(allowed ? { allowedKeyIDs: allowed } : {}) });
      assert.equal(a.status, b.status, `${a.message} vs ${b.message}`);
      assert.equal(a.keyID, b.keyID);
    }
  }
});

test("differential: the quick signature reader reads gpg's signatures as openpgp.js does", async () => {
  let read = 0;
  for (const name of ['alice', 'bob', 'carol', 'dave', 'eve']) {
    const c = parseCommitObject(raw(sha[name]!));
    const body = c
      .signature!.split('\n')
      .filter((l) => l && !l.startsWith('-----') && !l.startsWith('=') && !/^[A-Za-z]+: /.test(l))
      .join('');
    const bin = Buffer.from(body, 'base64');
    const q = readQuickSignature(bin);
    assert.ok(q, `${name}: the quick reader takes gpg's signature`);
    const full = (await openpgp.readSignature({ binarySignature: bin })).packets[0] as unknown as {
      issuerKeyID: { toHex(): string };
      created: Date;
      hashAlgorithm: number;
      publicKeyAlgorithm: number;
      signedHashValue: Uint8Array;
      signatureType: number;
      toHash(t: number, d: unknown, detached: boolean): Uint8Array;
      getExpirationTime(): Date | number;
    };
    assert.equal(q.issuerKeyID, full.issuerKeyID.toHex().toUpperCase());
    assert.equal(q.created.getTime(), full.created.getTime());
    assert.deepEqual([q.hashAlgorithm, q.publicKeyAlgorithm, q.signatureType], [full.hashAlgorithm, full.publicKeyAlgorithm, full.signatureType]);
    assert.deepEqual(Buffer.from(q.signedHashValue), Buffer.from(full.signedHashValue));
    const literal = new openpgp.LiteralDataPacket() as unknown as { setBytes(b: Uint8Array, f: number): void };
    literal.setBytes(c.payload, openpgp.enums.literal.binary);
    assert.deepEqual(Buffer.from(q.toHash(0, { bytes: c.payload })), Buffer.from(full.toHash(full.signatureType, literal, true)), `${name}: the hashed bytes`);
    assert.equal(String(q.getExpirationTime()), String(full.getExpirationTime()));
    read++;
  }
  assert.equal(read, 5);
  // not the usual shape: left to openpgp.js
  assert.equal(readQuickSignature(Buffer.from([0xc2, 0x01, 0x05])), undefined, 'a version 5 packet');
  assert.equal(readQuickSignature(Buffer.alloc(0)), undefined);
});

test('fuzz: the quick reader never throws on 20k mutated signature packets', () => {
  const c = parseCommitObject(raw(sha['bob']!));
  const body = c
    .signature!.split('\n')
    .filter((l) => l && !l.startsWith('-----') && !l.startsWith('='))
    .join('');
  const base = Buffer.from(body, 'base64');
  let seed = 4242;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 20000; i++) {
    const buf = Buffer.from(i % 5 === 0 ? base.subarray(0, rnd(base.length + 1)) : base);
    for (let m = 1 + rnd(3); m > 0 && buf.length > 0; m--) buf[rnd(buf.length)] = rnd(256);
    readQuickSignature(buf);
  }
});

test('fuzz: mutated signatures never throw, and never verify as valid', async () => {
  const c0 = parseCommitObject(raw(sha['bob']!));
  const sigText = c0.signature!;
  let seed = 777;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n-: ';
  for (let i = 0; i < 3000; i++) {
    const chars = sigText.split('');
    for (let m = 1 + rnd(3); m > 0; m--) chars[28 + rnd(chars.length - 60)] = alphabet[rnd(alphabet.length)]!;
    const mutated = chars.join('');
    const r = await verifyDetached(c0.payload, mutated, keyring);
    if (r.status === 'valid') {
      // only a mutation that leaves the decoded signature bytes unchanged (armor whitespace, padding, CRC) may still verify
      const orig = (await openpgp.readSignature({ armoredSignature: sigText })).write();
      const got = (await openpgp.readSignature({ armoredSignature: mutated })).write();
      assert.deepEqual(Buffer.from(got), Buffer.from(orig), `mutation ${i} verified with different bytes: ${JSON.stringify(mutated)}`);
    }
  }
});

test('differential: the batch (strict history) gives each commit what verifyCommitSignature gives it', async () => {
  const seeds = Object.values(sha).map((s) => raw(s));
  const next = prng(0x5157);
  const rnd = (n: number): number => next() % n;
  const inputs: Buffer[] = [...seeds];
  // the same commits with other signatures: SSH and X.509 armour, an unreadable armour, none
  const bob = raw(sha['bob']!).toString('latin1');
  inputs.push(Buffer.from(bob.replace(/gpgsig -----BEGIN PGP SIGNATURE-----/, 'gpgsig -----BEGIN SSH SIGNATURE-----'), 'latin1'));
  inputs.push(Buffer.from(bob.replace(/gpgsig -----BEGIN PGP SIGNATURE-----/, 'gpgsig -----BEGIN SIGNED MESSAGE-----'), 'latin1'));
  inputs.push(Buffer.from(bob.replace(/\n [A-Za-z0-9+/]{20}/, '\n !!!!'), 'latin1'));
  inputs.push(Buffer.from(bob.replace('signed by bob', 'signed by bobby'), 'latin1'));
  // mutated: a byte of the signature, the payload or anywhere; cut short; a signature header twice
  for (let i = 0; i < 400; i++) {
    const base = Buffer.from(seeds[1 + rnd(seeds.length - 1)]!);
    const sigAt = base.indexOf('gpgsig ');
    const kind = rnd(4);
    if (kind === 0 && sigAt > 0) base[sigAt + 40 + rnd(200)] = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='.charCodeAt(rnd(65));
    else if (kind === 1) base[rnd(base.length)] = rnd(256);
    else if (kind === 2) inputs.push(base.subarray(0, rnd(base.length)));
    else inputs.push(Buffer.concat([base.subarray(0, sigAt > 0 ? sigAt : 0), base.subarray(sigAt > 0 ? sigAt : 0)]));
    if (kind < 2) inputs.push(base);
  }
  const options = [
    {},
    { allowedKeyIDs: [world.keys.bob.keyID] },
    { rules: { identities: ['* <alice@example.com>'], committerEmailMatchesSigner: true } },
    { engine: 'openpgp' as const },
  ];
  let valid = 0;
  for (const opts of options) {
    const one = await Promise.all(inputs.map((x) => verifyCommitSignature(x, keyring, opts)));
    // pooled (more than 16 at once) and on this thread (16 or fewer)
    const pooled = await verifyCommitSignatures(inputs, keyring, opts);
    const here: typeof pooled = [];
    for (let start = 0; start < inputs.length; start += 16) here.push(...(await verifyCommitSignatures(inputs.slice(start, start + 16), keyring, opts)));
    for (let i = 0; i < inputs.length; i++) {
      assert.deepEqual(pooled[i], one[i], `input ${i} (pooled), ${JSON.stringify(opts)}: ${one[i]!.message}`);
      assert.deepEqual(here[i], one[i], `input ${i}, ${JSON.stringify(opts)}: ${one[i]!.message}`);
      if (one[i]!.status === 'valid') valid++;
    }
  }
  // the table above holds every outcome; the mutations reach past the parser
  const statuses = new Set((await verifyCommitSignatures(inputs, keyring)).map((r) => r.status));
  for (const st of ['valid', 'unsigned', 'unknown-key', 'expired', 'revoked', 'bad-signature'])
    assert.ok(statuses.has(st as never), `outcome ${st} is covered`);
  assert.ok(valid > 0);
});
