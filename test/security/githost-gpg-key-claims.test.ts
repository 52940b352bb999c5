// Attack: a githost user claims someone else's OpenPGP key. The e-mail check when a
// GPG key is added (POST /api/v1/user/gpg_keys) must count only what the key's owner
// certified: a user ID appended without a self-signature, or a subkey attached without
// a binding signature by the primary key, says nothing about who owns the key (gpg
// does not show them). Keys crafted packet by packet with openpgp.js, sent to githost
// over HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generateKey, PacketList, PublicKey, readKey, UserIDPacket, type AnyPacket } from 'openpgp';
import { api, startGithost, type Started } from '../helpers/githost.js';

let gh: Started;
let alice: PublicKey;
let mallory: PublicKey;

const newKey = async (name: string, email: string): Promise<PublicKey> =>
  readKey({ armoredKey: (await generateKey({ userIDs: [{ name, email }], subkeys: [{ sign: true }], format: 'armored' })).publicKey });

/** A public key made of these packets, in this order. */
const fromPackets = (packets: AnyPacket[]): string => {
  const list = new PacketList<AnyPacket>();
  list.push(...packets);
  return new PublicKey(list).armor();
};

const addKey = (user: string, armored: string) =>
  api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: [user, `${user}-pass-12`], body: { armored_public_key: armored } });

before(async () => {
  gh = await startGithost();
  for (const name of ['alice', 'mallory']) {
    const r = await api(gh.url, 'POST', '/api/v1/admin/users', {
      token: gh.adminToken,
      body: { username: name, email: `${name}@example.com`, password: `${name}-pass-12`, must_change_password: false },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  alice = await newKey('Alice', 'alice@example.com');
  mallory = await newKey('Mallory', 'mallory@example.com');
});

after(async () => {
  await gh?.close();
});

test("a user ID appended to another person's key without a self-signature does not make it the appender's key", async () => {
  const packets = [...alice.toPacketList()];
  const claim = UserIDPacket.fromObject({ name: 'Mallory', email: 'mallory@example.com' });
  // right after the primary key packet: a user ID with no signature at all
  const forged = fromPackets([packets[0]!, claim, ...packets.slice(1)]);
  assert.ok((await readKey({ armoredKey: forged })).getUserIDs().includes('Mallory <mallory@example.com>'), 'the crafted key carries the claim');
  const r = await addKey('mallory', forged);
  assert.equal(r.status, 404, JSON.stringify(r.body));
  assert.match(r.body.message, /None of the emails attached to the GPG key could be found/);
  assert.doesNotMatch(r.body.message, /mallory@example\.com/, "the unsigned user ID is not listed among the key's e-mails");

  // a key whose only user ID is unsigned is no key at all to gpg
  const bare = fromPackets([mallory.toPacketList()[0]!, claim]);
  const b = await addKey('mallory', bare);
  assert.equal(b.status, 422, JSON.stringify(b.body));
  assert.match(b.body.message, /no user ID with a valid self-signature/);

  // alice can still add her own key
  const own = await addKey('alice', alice.armor());
  assert.equal(own.status, 201, JSON.stringify(own.body));
  assert.deepEqual(
    own.body.emails.map((e: { email: string }) => e.email),
    ['alice@example.com'],
  );
});

test("a subkey attached without a valid binding is not stored, so another person's subkey ID cannot be squatted", async () => {
  const carol = await newKey('Carol', 'carol@example.com');
  const carolPackets = [...carol.toPacketList()];
  const subIndex = carolPackets.findIndex((p) => p.constructor.name === 'PublicSubkeyPacket');
  const carolSub = carol.subkeys[0]!.getKeyID().toHex().toUpperCase();
  // mallory's key with carol's signing subkey and carol's binding signature (made by carol's primary, not mallory's)
  const forged = fromPackets([...mallory.toPacketList(), ...carolPackets.slice(subIndex)]);
  assert.ok((await readKey({ armoredKey: forged })).subkeys.some((s) => s.getKeyID().toHex().toUpperCase() === carolSub));
  const r = await addKey('mallory', forged);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const listed: string[] = r.body.subkeys.map((s: { key_id: string }) => s.key_id);
  assert.ok(!listed.includes(carolSub), `carol's subkey ${carolSub} was stored under mallory: ${JSON.stringify(listed)}`);
  assert.ok(listed.includes(mallory.subkeys[0]!.getKeyID().toHex().toUpperCase()), "mallory's own bound subkey is kept");
  // the stored key text holds only what counts
  const stored = await readKey({ armoredKey: r.body.public_key });
  assert.deepEqual(
    stored.subkeys.map((s) => s.getKeyID().toHex().toUpperCase()),
    [mallory.subkeys[0]!.getKeyID().toHex().toUpperCase()],
  );

  // carol (once she has an account) adds her key: not blocked by a squatted subkey ID
  const u = await api(gh.url, 'POST', '/api/v1/admin/users', {
    token: gh.adminToken,
    body: { username: 'carol', email: 'carol@example.com', password: 'carol-pass-12', must_change_password: false },
  });
  assert.equal(u.status, 201);
  const own = await addKey('carol', carol.armor());
  assert.equal(own.status, 201, JSON.stringify(own.body));
});
