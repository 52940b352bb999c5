// OpenPGP public keys (ASCII armored): parse in-process with openpgp.js and describe
// them the way key stores (Gitea's GPG keys, the GitOps key store) need: only what
// the primary key itself certifies (self-signed user IDs, bound subkeys) counts.
import type { Key, SignaturePacket, Subkey, User } from 'openpgp';
import { openpgp } from './openpgp.js';
import { E } from '../../base/errors/index.js';

export interface KeyUsage {
  canSign: boolean;
  canEncryptComms: boolean;
  canEncryptStorage: boolean;
  canCertify: boolean;
}

export interface SubkeyInfo extends KeyUsage {
  /** 16 upper-case hex digits */
  keyID: string;
  fingerprint: string;
  created: Date;
  /** undefined: never expires */
  expires: Date | undefined;
  revoked: boolean;
}

export interface PublicKeyInfo extends SubkeyInfo {
  /** every user ID as written, e.g. "Alice <alice@example.com>" */
  userIDs: string[];
  /** e-mail addresses of the user IDs, lower-cased, without duplicates */
  emails: string[];
  subkeys: SubkeyInfo[];
  /** the key re-armored as public key only */
  armored: string;
}

const MAX_ARMORED = 256 * 1024;

function hexID(k: { getKeyID(): { toHex(): string } }): string {
  return k.getKeyID().toHex().toUpperCase();
}

// key flags (RFC 4880 5.2.3.21), as openpgp's enums.keyFlags
const KEY_FLAGS = { certifyKeys: 1, signData: 2, encryptCommunication: 4, encryptStorage: 8 } as const;

function usageFromFlags(flags: number | undefined, algo: string, primary: boolean): KeyUsage {
  if (flags === undefined) {
    // no key flags: derive from the algorithm as gpg does
    const sign = /rsa|dsa|ecdsa|eddsa|ed25519|ed448/i.test(algo);
    const enc = /rsa|elgamal|ecdh|x25519|x448/i.test(algo);
    return { canSign: sign, canEncryptComms: enc, canEncryptStorage: enc, canCertify: primary && sign };
  }
  return {
    canSign: (flags & KEY_FLAGS.signData) !== 0,
    canEncryptComms: (flags & KEY_FLAGS.encryptCommunication) !== 0,
    canEncryptStorage: (flags & KEY_FLAGS.encryptStorage) !== 0,
    canCertify: (flags & KEY_FLAGS.certifyKeys) !== 0,
  };
}

function expiry(value: Date | number | null): Date | undefined {
  return value instanceof Date ? value : undefined;
}

async function describeSubkey(sub: Subkey, binding: SignaturePacket): Promise<SubkeyInfo> {
  const flags = binding.keyFlags?.[0];
  let expires: Date | undefined;
  try {
    expires = expiry(await sub.getExpirationTime());
  } catch {
    expires = undefined;
  }
  return {
    keyID: hexID(sub),
    fingerprint: sub.getFingerprint().toUpperCase(),
    created: sub.getCreationTime(),
    expires,
    revoked: sub.revocationSignatures.length > 0,
    ...usageFromFlags(flags, sub.getAlgorithmInfo().algorithm, false),
  };
}

/**
 * True when the user ID carries a self-certification by the primary key that
 * verifies and is not revoked (at any time: an expired key still names its owner).
 * A user ID appended to someone's key without the primary key's signature is not
 * the key owner's claim, and gpg does not show it.
 */
async function hasValidSelfCertification(user: User): Promise<boolean> {
  try {
    return await user.verify(null as unknown as Date);
  } catch {
    return false;
  }
}

/** The user IDs of a key that carry a valid self-certification (see hasValidSelfCertification). */
export async function verifiedUserIDs(key: Key): Promise<string[]> {
  const out: string[] = [];
  for (const u of key.users) {
    const id = u.userID?.userID;
    if (typeof id === 'string' && (await hasValidSelfCertification(u))) out.push(id);
  }
  return out;
}

/** The newest binding signature of the subkey that verifies with the primary key (any time), if any. */
async function validBinding(key: Key, sub: Subkey): Promise<SignaturePacket | undefined> {
  const { enums } = await openpgp();
  let best: SignaturePacket | undefined;
  for (const sig of sub.bindingSignatures) {
    if (best && sig.created !== null && best.created !== null && sig.created < best.created) continue;
    try {
      await sig.verify(key.keyPacket, enums.signature.subkeyBinding, { key: key.keyPacket, bind: sub.keyPacket }, null as unknown as Date);
      best = sig;
    } catch {
      // not made by the primary key, or not over this subkey
    }
  }
  return best;
}

/**
 * Describe a key by what its primary key really certifies: only user IDs with a
 * valid self-certification give names and e-mails, only subkeys with a valid binding
 * signature are listed, and the re-armored key keeps only those (as gpg shows it).
 */
export async function describeKey(key: Key): Promise<PublicKeyInfo> {
  const users = [];
  for (const u of key.users) if (await hasValidSelfCertification(u)) users.push(u);
  if (users.length === 0) throw E.signatureKeyInvalid(`key ${hexID(key)} has no user ID with a valid self-signature (gpg: "no valid user IDs")`);
  const bound: { sub: Subkey; binding: SignaturePacket }[] = [];
  for (const sub of key.subkeys) {
    const binding = await validBinding(key, sub);
    if (binding) bound.push({ sub, binding });
  }
  // an independent copy (same order of users and subkeys) to strip what does not count
  const pub = await (await openpgp()).readKey({ binaryKey: (key.isPrivate() ? key.toPublic() : key).write() });
  const keepUsers = new Set(users.map((u) => key.users.indexOf(u)));
  const keepSubs = new Set(bound.map((b) => key.subkeys.indexOf(b.sub)));
  pub.users = pub.users.filter((_u, i) => keepUsers.has(i));
  pub.subkeys = pub.subkeys.filter((_s, i) => keepSubs.has(i));

  const userIDs = users.map((u) => u.userID?.userID).filter((id): id is string => typeof id === 'string');
  const emails = [...new Set(users.map((u) => u.userID?.email?.toLowerCase()).filter((e): e is string => !!e))];
  let flags: number | undefined;
  let expires: Date | undefined;
  try {
    const primary = await key.getPrimaryUser();
    flags = primary.selfCertification.keyFlags?.[0];
    expires = expiry(await key.getExpirationTime());
  } catch {
    flags = users[0]?.selfCertifications[users[0].selfCertifications.length - 1]?.keyFlags?.[0];
  }
  let revoked: boolean;
  try {
    revoked = await key.isRevoked();
  } catch {
    revoked = false;
  }
  return {
    keyID: hexID(key),
    fingerprint: key.getFingerprint().toUpperCase(),
    created: key.getCreationTime(),
    expires,
    revoked,
    userIDs,
    emails,
    subkeys: await Promise.all(bound.map((b) => describeSubkey(b.sub, b.binding))),
    armored: pub.armor(),
    ...usageFromFlags(flags, key.getAlgorithmInfo().algorithm, true),
  };
}

/** Read every key of an armored block. Throws STRAIT_ERR_SIGNATURE_KEY_INVALID. */
export async function readArmoredKeys(armored: string): Promise<Key[]> {
  if (typeof armored !== 'string' || armored.length === 0) throw E.signatureKeyInvalid('empty key text');
  if (armored.length > MAX_ARMORED) throw E.signatureKeyInvalid(`key text is ${armored.length} characters, more than ${MAX_ARMORED}`);
  try {
    return await (await openpgp()).readKeys({ armoredKeys: armored });
  } catch (err) {
    throw E.signatureKeyInvalid((err as Error).message);
  }
}

/** Parse an armored public key block (first key) and describe it. */
export async function parseArmoredPublicKey(armored: string): Promise<PublicKeyInfo> {
  const keys = await readArmoredKeys(armored);
  const first = keys[0];
  if (!first) throw E.signatureKeyInvalid('no key in the armored text');
  if (first.isPrivate()) throw E.signatureKeyInvalid('this is a private key; export the public key with gpg --armor --export KEYID');
  return describeKey(first);
}
