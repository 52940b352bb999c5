// Verify a git commit's OpenPGP signature in-process (no gpg subprocess) against a
// set of armored public keys. The outcome is a status, never an exception, so a
// controller can turn it into a condition.
import type { Key } from 'openpgp';
import { openpgp } from './openpgp.js';
import { isStraitError } from '../../base/errors/index.js';
import { parseCommitObject, type CommitObject } from './commit-object.js';
import { describeKey, readArmoredKeys } from './keys.js';

export type SignatureStatus = 'unsigned' | 'valid' | 'bad' | 'unknown-key' | 'expired' | 'revoked';

export interface SignatureCheck {
  status: SignatureStatus;
  /** issuer key ID of the signature (16 upper-case hex), '' when unsigned or unreadable */
  keyID: string;
  /** primary key ID of the key that made the signature, when one of the given keys did */
  primaryKeyID: string;
  /** fingerprint of the signing (sub)key when known */
  fingerprint: string;
  /** the signer as the key names it: first user ID, its e-mail */
  signer: { userID: string; email: string } | undefined;
  signedAt: Date | undefined;
  /** human text: why this status */
  reason: string;
  /** armored signature from the commit ('' when unsigned) */
  signature: string;
  /** the signed payload (the commit object without its signature header) */
  payload: string;
  /** the parsed commit, unless the object itself was malformed */
  commit: CommitObject | undefined;
}

export interface VerifyOptions {
  /** "gpgsig" (SHA-1 repositories, default) or "gpgsig-sha256" */
  signatureHeader?: string;
  /** the time at which expiry and revocation are judged; default now */
  now?: Date;
}

function result(partial: Partial<SignatureCheck> & { status: SignatureStatus; reason: string }): SignatureCheck {
  return {
    keyID: '', primaryKeyID: '', fingerprint: '', signer: undefined, signedAt: undefined,
    signature: '', payload: '', commit: undefined, ...partial,
  };
}

async function loadKeys(armoredKeys: readonly string[]): Promise<Key[]> {
  const out: Key[] = [];
  for (const armored of armoredKeys) {
    try {
      out.push(...(await readArmoredKeys(armored)));
    } catch {
      // an unreadable key cannot have made the signature; skip it
    }
  }
  return out;
}

/** Verify the signature of a raw commit object against the given armored public keys. */
export async function verifyCommitSignature(raw: Buffer | string, armoredKeys: readonly string[], opts: VerifyOptions = {}): Promise<SignatureCheck> {
  let commit: CommitObject;
  try {
    commit = parseCommitObject(raw, opts.signatureHeader);
  } catch (err) {
    if (isStraitError(err)) return result({ status: 'bad', reason: err.message });
    throw err;
  }
  const payload = commit.payload.toString('utf8');
  if (commit.signature === undefined) return result({ status: 'unsigned', reason: 'Revision is not signed', commit, payload });
  const base = { commit, payload, signature: commit.signature };
  if (!commit.signature.includes('-----BEGIN PGP SIGNATURE-----')) {
    return result({ ...base, status: 'bad', reason: 'the signature is not an OpenPGP signature (SSH and X.509 signatures are not supported)' });
  }
  let sig;
  try {
    sig = await (await openpgp()).readSignature({ armoredSignature: commit.signature });
  } catch (err) {
    return result({ ...base, status: 'bad', reason: `unreadable signature: ${(err as Error).message}` });
  }
  const sigPacket = sig.packets[0];
  const issuer = sig.getSigningKeyIDs()[0];
  const keyID = issuer ? issuer.toHex().toUpperCase() : '';
  const signedAt = sigPacket?.created ?? undefined;
  const keys = await loadKeys(armoredKeys);
  const key = issuer ? keys.find((k) => k.getKeys(issuer).length > 0) : undefined;
  if (!key || !issuer) {
    return result({ ...base, keyID, signedAt, status: 'unknown-key', reason: `signed with key ${keyID || '(no issuer)'}, which is not among the known keys` });
  }
  const info = await describeKey(key);
  const signing = key.getKeys(issuer)[0];
  const fingerprint = signing ? signing.getFingerprint().toUpperCase() : '';
  const userID = key.getUserIDs()[0] ?? '';
  const signer = { userID, email: info.emails[0] ?? '' };
  const withKey = { ...base, keyID, signedAt, fingerprint, signer, primaryKeyID: info.keyID };

  try {
    const pgp = await openpgp();
    const message = await pgp.createMessage({ binary: new Uint8Array(commit.payload) });
    const out = await pgp.verify({ message, signature: sig, verificationKeys: [key], expectSigned: false });
    const first = out.signatures[0];
    if (!first) return result({ ...withKey, status: 'bad', reason: 'the signature has no signature packet' });
    await first.verified;
  } catch (err) {
    const msg = (err as Error).message;
    if (/revoked/i.test(msg)) return result({ ...withKey, status: 'revoked', reason: `key ${keyID} is revoked: ${msg}` });
    if (/expired/i.test(msg)) return result({ ...withKey, status: 'expired', reason: `key ${keyID} is expired: ${msg}` });
    return result({ ...withKey, status: 'bad', reason: `bad signature from key ${keyID}: ${msg}` });
  }
  const now = opts.now ?? new Date();
  const sub = info.subkeys.find((s) => s.keyID === keyID);
  if (info.revoked || sub?.revoked) return result({ ...withKey, status: 'revoked', reason: `good signature, but key ${keyID} is revoked` });
  const expires = sub?.expires ?? info.expires;
  const primaryExpires = info.expires;
  if ((expires && expires <= now) || (primaryExpires && primaryExpires <= now)) {
    return result({ ...withKey, status: 'expired', reason: `good signature, but key ${keyID} expired at ${(expires ?? primaryExpires)?.toISOString()}` });
  }
  return result({ ...withKey, status: 'valid', reason: `good signature from ${userID || keyID} (key ${keyID})` });
}
