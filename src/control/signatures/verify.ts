// In-process OpenPGP verification of git commit and tag signatures (openpgp.js; never
// a gpg subprocess). The order of checks decides which outcome a signature gets:
//   no signature                                  -> unsigned
//   not an OpenPGP signature / unreadable         -> bad-signature
//   issuer key ID not in the keyring              -> unknown-key
//   the signing key (primary or subkey) revoked   -> revoked
//   cryptographic check fails at the signing time -> bad-signature
//   the signing key or its primary expired now    -> expired
//   allowed list given and neither the primary nor the signing subkey listed -> not-allowed
//   otherwise                                     -> valid
import * as openpgp from 'openpgp';
import { parseCommitObject, parseTagObject } from './git-object.js';
import { Keyring, type KeyringEntry } from './keyring.js';

export type VerificationStatus = 'unsigned' | 'valid' | 'bad-signature' | 'unknown-key' | 'not-allowed' | 'expired' | 'revoked';

export interface VerificationResult {
  status: VerificationStatus;
  /** 16-hex key ID of the key that made the signature (a subkey's ID when a subkey signed); '' when unsigned */
  keyID: string;
  /** 16-hex ID of the primary key when the key is in the keyring */
  primaryKeyID: string;
  /** user ID of the signer's key ("Name <email>") when known */
  signer: string;
  /** one line saying what was found; names the key ID and the reason */
  message: string;
  /** when the signature says it was made */
  signedAt?: string;
}

export interface VerifyOptions {
  /**
   * Key IDs allowed to sign (a project's signatureKeys). A signature made by a
   * signing subkey is allowed when its primary key's ID or the subkey's own ID is
   * listed. Undefined = every key of the keyring is allowed.
   */
  allowedKeyIDs?: readonly string[];
  /** "now" for expiry checks (tests) */
  now?: Date;
}

export const UNSIGNED_MESSAGE = 'Revision is not signed';

const result = (status: VerificationStatus, keyID: string, message: string, extra: Partial<VerificationResult> = {}): VerificationResult =>
  ({ status, keyID, primaryKeyID: '', signer: '', message, ...extra });

function issuerOf(sig: openpgp.Signature): { id: string; at: Date | null } | undefined {
  const pkt = sig.packets[0] as unknown as { issuerKeyID?: openpgp.KeyID; issuerFingerprint?: Uint8Array | null; created?: Date | null } | undefined;
  if (!pkt) return undefined;
  let id = pkt.issuerKeyID ? pkt.issuerKeyID.toHex().toUpperCase() : '';
  if (/^0+$/.test(id)) id = '';
  if (!id && pkt.issuerFingerprint && pkt.issuerFingerprint.length >= 8) {
    id = Buffer.from(pkt.issuerFingerprint.subarray(pkt.issuerFingerprint.length - 8)).toString('hex').toUpperCase();
  }
  return { id, at: pkt.created ?? null };
}

function isAllowed(entry: KeyringEntry, signingID: string, allowed: readonly string[] | undefined): boolean {
  if (allowed === undefined) return true;
  const set = new Set(allowed.map((a) => (a.length === 40 ? a.slice(24) : a).toUpperCase()));
  return set.has(entry.info.keyID) || set.has(signingID);
}

/** Verify an armored detached signature over `payload`. */
export async function verifyDetached(payload: Uint8Array, armoredSignature: string | undefined, keys: Keyring | readonly openpgp.PublicKey[], opts: VerifyOptions = {}): Promise<VerificationResult> {
  if (armoredSignature === undefined || armoredSignature.trim() === '') return result('unsigned', '', UNSIGNED_MESSAGE);
  if (!armoredSignature.startsWith('-----BEGIN PGP SIGNATURE-----')) {
    const kind = armoredSignature.startsWith('-----BEGIN SSH SIGNATURE-----') ? 'an SSH signature' : 'not an OpenPGP signature';
    return result('bad-signature', '', `Revision has a signature that cannot be verified: ${kind}; only OpenPGP signatures are supported`);
  }
  const keyring = keys instanceof Keyring ? keys : await Keyring.fromKeys(keys);
  let sig: openpgp.Signature;
  try {
    sig = await openpgp.readSignature({ armoredSignature });
  } catch (err) {
    return result('bad-signature', '', `Revision has a malformed OpenPGP signature: ${(err as Error).message}`);
  }
  const issuer = issuerOf(sig);
  if (!issuer || !issuer.id) return result('bad-signature', '', 'Revision has an OpenPGP signature without an issuer key ID');
  const keyID = issuer.id;
  const signedAt = issuer.at ? issuer.at.toISOString() : undefined;
  const entry = keyring.find(keyID);
  if (!entry) {
    return result('unknown-key', keyID, `Revision is signed with key ${keyID}, which is not imported into the controller's key store`, signedAt ? { signedAt } : {});
  }
  const extra: Partial<VerificationResult> = { primaryKeyID: entry.info.keyID, signer: entry.info.owner, ...(signedAt ? { signedAt } : {}) };
  const key = entry.key;
  const signing = key.getKeys(sig.packets[0]?.issuerKeyID)[0] ?? key;
  const now = opts.now ?? new Date();
  const revoked = await key.isRevoked(undefined, undefined, now).catch(() => false)
    || (signing !== key && await (signing as openpgp.Subkey).isRevoked(undefined as never, undefined as never, now).catch(() => false));
  if (revoked) return result('revoked', keyID, `Revision is signed with key ${keyID}, which has been revoked`, extra);
  try {
    const message = await openpgp.createMessage({ binary: payload });
    const out = await openpgp.verify({ message, signature: sig, verificationKeys: [key], date: issuer.at ?? now, format: 'binary' });
    const first = out.signatures[0];
    if (!first) throw new Error('no signature in result');
    await first.verified;
  } catch (err) {
    return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: ${(err as Error).message}`, extra);
  }
  const expiries = [await key.getExpirationTime().catch(() => null)];
  if (signing !== key) expiries.push(await (signing as openpgp.Subkey).getExpirationTime(now).catch(() => null));
  for (const exp of expiries) {
    if (exp instanceof Date && exp.getTime() <= now.getTime()) {
      return result('expired', keyID, `Revision is signed with key ${keyID}, which expired on ${exp.toISOString()}`, extra);
    }
  }
  if (!isAllowed(entry, keyID, opts.allowedKeyIDs)) {
    const via = keyID === entry.info.keyID ? '' : ` (subkey of ${entry.info.keyID})`;
    return result('not-allowed', keyID, `Revision is signed with key ${keyID}${via}, which is not allowed by the project's signatureKeys`, extra);
  }
  const via = keyID === entry.info.keyID ? '' : ` (subkey of ${entry.info.keyID})`;
  return result('valid', keyID, `Revision is signed with key ${keyID}${via} by ${entry.info.owner}`, extra);
}

export async function verifyCommitSignature(raw: Buffer | Uint8Array, keys: Keyring | readonly openpgp.PublicKey[], opts: VerifyOptions = {}): Promise<VerificationResult> {
  const c = parseCommitObject(raw);
  return verifyDetached(c.payload, c.signature, keys, opts);
}

export async function verifyTagSignature(raw: Buffer | Uint8Array, keys: Keyring | readonly openpgp.PublicKey[], opts: VerifyOptions = {}): Promise<VerificationResult> {
  const t = parseTagObject(raw);
  return verifyDetached(t.payload, t.signature, keys, opts);
}
