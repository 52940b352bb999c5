// A set of imported OpenPGP public keys, indexed by the key ID of the primary key
// and of every subkey, parsed once (verification never re-reads armored text).
import type * as openpgp from 'openpgp';
import { openpgp as loadOpenpgp } from './openpgp.js';
import { E, isStraitError } from '../../base/errors/index.js';
import { verifiedUserIDs } from './keys.js';

/** Argo CD's GnuPGPublicKey shape. */
export interface KeyInfo {
  keyID: string;
  fingerprint: string;
  owner: string;
  trust: string;
  subType: string;
  keyData: string;
}

/** What verification needs of one key (primary or subkey), computed once when the key is added. */
export interface SigningKeyState {
  packet: openpgp.AnyKeyPacket;
  fingerprint: string;
  created: Date;
  /** the key or its primary key is revoked */
  revoked: boolean;
  /** earliest of the key's and its primary key's expiration; null = never */
  expires: Date | null;
  /** valid binding with the sign capability (ignoring time) */
  canSign: boolean;
}

export interface KeyringEntry {
  info: KeyInfo;
  key: openpgp.PublicKey;
  subkeyIDs: string[];
  /** user IDs with a valid self-certification: the identities the key verifiably claims (signer rules match these) */
  userIDs: string[];
  /** by 16-hex key ID: the primary key and every subkey */
  signing: Map<string, SigningKeyState>;
}

const asDate = (d: Date | number | null): Date | null => (d instanceof Date ? d : null);

async function signingStates(key: openpgp.PublicKey): Promise<Map<string, SigningKeyState>> {
  const out = new Map<string, SigningKeyState>();
  const primaryRevoked = await key.isRevoked().catch(() => false);
  const primaryExpires = asDate(await key.getExpirationTime().catch(() => null));
  const canSign = async (id: openpgp.KeyID): Promise<boolean> => {
    try {
      const k = await key.getSigningKey(id, null);
      return k.getKeyID().equals(id);
    } catch {
      return false;
    }
  };
  out.set(key.getKeyID().toHex().toUpperCase(), {
    packet: key.keyPacket,
    fingerprint: key.getFingerprint().toUpperCase(),
    created: key.keyPacket.created,
    revoked: primaryRevoked,
    expires: primaryExpires,
    canSign: !primaryRevoked && (await canSign(key.getKeyID())),
  });
  for (const sub of key.subkeys) {
    const revoked = primaryRevoked || (await sub.isRevoked(undefined as never, undefined as never).catch(() => false));
    const subExp = asDate(await sub.getExpirationTime().catch(() => null));
    const expires = [primaryExpires, subExp].filter((d): d is Date => d !== null).sort((a, b) => a.getTime() - b.getTime())[0] ?? null;
    out.set(sub.getKeyID().toHex().toUpperCase(), {
      packet: sub.keyPacket,
      fingerprint: sub.getFingerprint().toUpperCase(),
      created: sub.keyPacket.created,
      revoked,
      expires,
      canSign: !revoked && (await canSign(sub.getKeyID())),
    });
  }
  return out;
}

const hexID = (id: openpgp.KeyID): string => id.toHex().toUpperCase();

function subTypeOf(key: openpgp.PublicKey): string {
  const a = key.getAlgorithmInfo() as { algorithm: string; bits?: number; curve?: string };
  if (a.algorithm.startsWith('rsa')) return `rsa${a.bits ?? ''}`;
  if (a.algorithm === 'eddsaLegacy' || a.algorithm === 'ed25519') return 'ed25519';
  if (a.algorithm === 'ed448') return 'ed448';
  if (a.curve) return a.curve.replace(/Legacy$/, '').toLowerCase();
  return a.algorithm.toLowerCase();
}

/** Parse every public key in an armored (or concatenated armored) input. */
export async function readPublicKeys(armored: string): Promise<openpgp.PublicKey[]> {
  if (!/-----BEGIN PGP PUBLIC KEY BLOCK-----/.test(armored)) {
    if (/-----BEGIN PGP PRIVATE KEY BLOCK-----/.test(armored)) throw E.gpgKeyDataInvalid('it is a private key block; export the public key only');
    throw E.gpgKeyDataInvalid('no "-----BEGIN PGP PUBLIC KEY BLOCK-----" found');
  }
  const blocks = armored.match(/-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]*?-----END PGP PUBLIC KEY BLOCK-----/g) ?? [];
  const out: openpgp.PublicKey[] = [];
  for (const block of blocks) {
    try {
      const keys = await (await loadOpenpgp()).readKeys({ armoredKeys: block });
      for (const k of keys) if (!k.isPrivate()) out.push(k as openpgp.PublicKey);
    } catch (err) {
      if (isStraitError(err)) throw err;
      throw E.gpgKeyDataInvalid((err as Error).message);
    }
  }
  if (out.length === 0) throw E.gpgKeyDataInvalid('no public key could be read');
  return out;
}

/** The key as the GitOps key store and API show it (Argo CD's GnuPGPublicKey). */
export async function keyStoreInfo(key: openpgp.PublicKey): Promise<KeyInfo> {
  let owner = key.getUserIDs()[0] ?? '';
  try {
    const primary = await key.getPrimaryUser();
    owner = primary.user.userID?.userID ?? owner;
  } catch {
    // expired or revoked keys have no valid primary user now; keep the first user ID
  }
  return {
    keyID: hexID(key.getKeyID()),
    fingerprint: key.getFingerprint().toUpperCase(),
    owner,
    trust: 'unknown',
    subType: subTypeOf(key),
    keyData: key.armor(),
  };
}

export class Keyring {
  private readonly byPrimary = new Map<string, KeyringEntry>();
  private readonly byAny = new Map<string, KeyringEntry>();

  /** Add a key (replacing one with the same primary key ID). */
  async add(key: openpgp.PublicKey, keyData?: string): Promise<KeyringEntry> {
    const info = await keyStoreInfo(key);
    if (keyData) info.keyData = keyData;
    const entry: KeyringEntry = {
      info,
      key,
      subkeyIDs: key.subkeys.map((s) => hexID(s.getKeyID())),
      userIDs: await verifiedUserIDs(key),
      signing: await signingStates(key),
    };
    this.remove(info.keyID);
    this.byPrimary.set(info.keyID, entry);
    this.byAny.set(info.keyID, entry);
    for (const id of entry.subkeyIDs) this.byAny.set(id, entry);
    return entry;
  }

  remove(keyID: string): boolean {
    const e = this.byPrimary.get(keyID);
    if (!e) return false;
    this.byPrimary.delete(keyID);
    for (const [id, v] of this.byAny) if (v === e) this.byAny.delete(id);
    return true;
  }

  /** By primary key ID. */
  get(keyID: string): KeyringEntry | undefined {
    return this.byPrimary.get(keyID.toUpperCase());
  }

  /** By the ID of the primary key or of any subkey. */
  find(keyID: string): KeyringEntry | undefined {
    return this.byAny.get(keyID.toUpperCase());
  }

  list(): KeyringEntry[] {
    return [...this.byPrimary.values()].sort((a, b) => a.info.keyID.localeCompare(b.info.keyID));
  }

  get size(): number {
    return this.byPrimary.size;
  }

  static async fromKeys(keys: readonly openpgp.PublicKey[]): Promise<Keyring> {
    const r = new Keyring();
    for (const k of keys) await r.add(k);
    return r;
  }
}
