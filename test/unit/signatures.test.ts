// The signatures module: commit-object parsing, payload rebuild and in-process
// OpenPGP verification (docs/githost.md, Signatures module). Real gpg/git signatures are covered in
// test/integration/githost-git.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMessage, generateKey, readPrivateKey, revokeKey, sign, type PrivateKey } from 'openpgp';
import { isStraitError } from '../../src/base/errors/index.js';
import { parseArmoredPublicKey, parseCommitObject, verifyCommitSignature } from '../../src/platform/signatures/index.js';

const TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const PARENT = '1111111111111111111111111111111111111111';
const UNSIGNED = `tree ${TREE}\nparent ${PARENT}\nauthor Alice Doe <alice@example.com> 1700000000 +0200\ncommitter Bob <bob@example.com> 1700000100 -0130\n\nAdd things\n\nBody line.\n`;

async function newKey(email: string, opts: { date?: Date; keyExpirationTime?: number } = {}): Promise<{ priv: PrivateKey; pub: string }> {
  const k = await generateKey({ userIDs: [{ name: 'Tester', email }], format: 'armored', ...opts });
  return { priv: await readPrivateKey({ armoredKey: k.privateKey }), pub: k.publicKey };
}

/** Sign an unsigned commit object the way git does: detached signature of the object, put in a gpgsig header after committer. */
async function signCommit(raw: string, key: PrivateKey, date?: Date): Promise<string> {
  const message = await createMessage({ binary: new Uint8Array(Buffer.from(raw)) });
  const armored = await sign({ message, signingKeys: key, detached: true, format: 'armored', ...(date ? { date } : {}) });
  const header = `gpgsig ${String(armored).trimEnd().split('\n').join('\n ')}\n`;
  const at = raw.indexOf('\n\n') + 1;
  return raw.slice(0, at) + header + raw.slice(at);
}

test('parseCommitObject reads tree, parents, idents with their offsets, and the message', () => {
  const c = parseCommitObject(UNSIGNED);
  assert.equal(c.tree, TREE);
  assert.deepEqual(c.parents, [PARENT]);
  assert.deepEqual(c.author, { name: 'Alice Doe', email: 'alice@example.com', time: 1700000000, tz: '+0200', date: '2023-11-15T00:13:20+02:00' });
  assert.equal(c.committer.date, '2023-11-14T20:45:00-01:30');
  assert.equal(c.message, 'Add things\n\nBody line.\n');
  assert.equal(c.signature, undefined);
  assert.equal(c.payload.toString(), UNSIGNED);
});

test('the payload of a signed commit is the object without its gpgsig header, byte for byte', async () => {
  const { priv } = await newKey('alice@example.com');
  const signed = await signCommit(UNSIGNED, priv);
  const c = parseCommitObject(signed);
  assert.equal(c.payload.toString(), UNSIGNED);
  assert.match(c.signature ?? '', /^-----BEGIN PGP SIGNATURE-----\n\n[\s\S]+-----END PGP SIGNATURE-----\n$/);
});

test('verifyCommitSignature: every status, table', async (t) => {
  const alice = await newKey('alice@example.com');
  const other = await newKey('mallory@example.com');
  const past = new Date(Date.now() - 3600_000);
  const expiring = await newKey('old@example.com', { date: past, keyExpirationTime: 60 });
  const toRevoke = await newKey('gone@example.com');
  const revoked = await revokeKey({ key: toRevoke.priv, format: 'armored' });

  const good = await signCommit(UNSIGNED, alice.priv);
  const cases: { name: string; raw: string; keys: string[]; status: string; reason?: RegExp }[] = [
    { name: 'unsigned commit', raw: UNSIGNED, keys: [alice.pub], status: 'unsigned', reason: /Revision is not signed/ },
    { name: 'valid signature by a known key', raw: good, keys: [other.pub, alice.pub], status: 'valid' },
    { name: 'signed by a key that is not given', raw: good, keys: [other.pub], status: 'unknown-key' },
    { name: 'no keys at all', raw: good, keys: [], status: 'unknown-key' },
    { name: 'tampered message', raw: good.replace('Add things', 'Add other things'), keys: [alice.pub], status: 'bad-signature' },
    { name: 'tampered author', raw: good.replace('Alice Doe', 'Alice Dot'), keys: [alice.pub], status: 'bad-signature' },
    {
      name: 'key expired since signing',
      raw: await signCommit(UNSIGNED, expiring.priv, new Date(past.getTime() + 10_000)),
      keys: [expiring.pub],
      status: 'expired',
    },
    { name: 'key revoked', raw: await signCommit(UNSIGNED, toRevoke.priv), keys: [String(revoked.publicKey)], status: 'revoked' },
    { name: 'garbage key text is skipped', raw: good, keys: ['not a key', alice.pub], status: 'valid' },
    {
      name: 'SSH signature is not OpenPGP',
      raw: UNSIGNED.replace('\n\n', '\ngpgsig -----BEGIN SSH SIGNATURE-----\n abc\n -----END SSH SIGNATURE-----\n\n'),
      keys: [alice.pub],
      status: 'bad-signature',
    },
    { name: 'malformed object', raw: 'hello\n\nworld', keys: [alice.pub], status: 'bad-signature' },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const r = await verifyCommitSignature(c.raw, c.keys);
      assert.equal(r.status, c.status, r.reason);
      if (c.reason) assert.match(r.reason, c.reason);
      if (c.status === 'valid') {
        const info = await parseArmoredPublicKey(alice.pub);
        assert.equal(r.keyID, info.keyID);
        assert.equal(r.signerEmail, 'alice@example.com');
        assert.equal(r.payload, UNSIGNED);
      }
    });
  }
});

test('parseArmoredPublicKey describes the key as key stores need it', async () => {
  const alice = await newKey('Alice@Example.com');
  const info = await parseArmoredPublicKey(alice.pub);
  assert.match(info.keyID, /^[0-9A-F]{16}$/);
  assert.deepEqual(info.emails, ['alice@example.com']);
  assert.equal(info.canSign, true);
  assert.equal(info.subkeys.length, 1);
  assert.equal(info.subkeys[0]?.canEncryptComms, true);
  await assert.rejects(parseArmoredPublicKey('-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nxx\n-----END PGP PUBLIC KEY BLOCK-----\n'), (e: unknown) =>
    isStraitError(e, 'STRAIT_ERR_SIGNATURE_KEY_INVALID'),
  );
  const priv = await generateKey({ userIDs: [{ email: 'p@example.com' }], format: 'armored' });
  await assert.rejects(parseArmoredPublicKey(priv.privateKey), /private key/);
});

function mutate(base: Buffer, rnd: () => number): Buffer {
  const b = Buffer.from(base);
  const kind = Math.floor(rnd() * 4);
  if (kind === 0) return b.subarray(0, Math.floor(rnd() * b.length));
  if (kind === 1) {
    for (let i = 0; i < 1 + rnd() * 8; i++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
    return b;
  }
  if (kind === 2) {
    const at = Math.floor(rnd() * b.length);
    return Buffer.concat([b.subarray(0, at), Buffer.from(['\n', ' ', 'gpgsig x', '\n\n', 'parent zz'][Math.floor(rnd() * 5)] as string), b.subarray(at)]);
  }
  const len = Math.floor(rnd() * 300);
  const out = Buffer.alloc(len);
  for (let i = 0; i < len; i++) out[i] = Math.floor(rnd() * 256);
  return out;
}

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('fuzz: 20k mutated commit objects parse or fail with a StraitError, never anything else', async () => {
  const { priv } = await newKey('alice@example.com');
  const base = Buffer.from(await signCommit(UNSIGNED, priv));
  const rnd = prng(6);
  for (let i = 0; i < 20_000; i++) {
    const input = mutate(base, rnd);
    try {
      parseCommitObject(input);
    } catch (err) {
      assert.ok(isStraitError(err, 'STRAIT_ERR_SIGNATURE_OBJECT_INVALID'), `input ${i} threw ${String(err)}`);
    }
  }
});

test('fuzz: verifyCommitSignature returns a status for 300 mutated signed commits and never throws', async () => {
  const { priv, pub } = await newKey('alice@example.com');
  const base = Buffer.from(await signCommit(UNSIGNED, priv));
  const rnd = prng(66);
  const seen = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const r = await verifyCommitSignature(mutate(base, rnd), [pub]);
    seen.add(r.status);
  }
  assert.ok(seen.has('bad-signature'), `statuses seen: ${[...seen].join(',')}`);
});
