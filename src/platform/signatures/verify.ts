// In-process OpenPGP verification of git commit and tag signatures (openpgp.js; never
// a gpg subprocess). The order of checks decides which outcome a signature gets:
//   no signature                                  -> unsigned
//   not an OpenPGP signature / unreadable         -> bad-signature
//   issuer key ID not in the keyring              -> unknown-key
//   the signing key (primary or subkey) revoked   -> revoked
//   cryptographic check fails at the signing time -> bad-signature
//   the signing key or its primary expired now    -> expired
//   allowed list given and neither the primary nor the signing subkey listed -> not-allowed
//   identity rules given and the key's verified user IDs (or the committer's
//   e-mail) do not satisfy them                   -> signer-not-allowed
//   otherwise                                     -> valid
// A signature in another armour (SSH) goes to the verifier registered for its format
// (formats.ts); the statuses and messages are the same for every format (failures.ts).
import type * as openpgp from 'openpgp';
import { openpgp as loadOpenpgp } from './openpgp.js';
import { isStraitError } from '../../base/errors/index.js';
import { parseCommitObject, parseTagObject, type CommitObject, type TagObject } from './git-object.js';
import { Keyring, readPublicKeys } from './keyring.js';
import { nativeCheck, type SigPacket } from './native-check.js';
import { readQuickSignature } from './quick-signature.js';
import { signatureFormatOf } from './formats.js';
import { checkSigner, type SignerRules } from './signer-rules.js';
import type { AllowedSigners } from './allowed-signers.js';
import { verifySshSignature, type SshSignerRule } from './ssh-verify.js';

export type VerificationStatus = 'unsigned' | 'valid' | 'bad-signature' | 'unknown-key' | 'not-allowed' | 'signer-not-allowed' | 'expired' | 'revoked';

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
  /** the same text as `message` (the code-hosting server's name for it) */
  reason: string;
  /** when the signature says it was made */
  signedAt?: string;
  /** fingerprint of the signing key or subkey, when it is in the keyring */
  fingerprint: string;
  /** e-mail of the signer's user ID, when known */
  signerEmail: string;
  /** the identities the signing key verifiably claims (OpenPGP: self-certified user IDs) */
  signerIdentities: string[];
  /** when the signing key (or its primary key) expires, ISO 8601; '' = never or unknown */
  keyExpires: string;
  /** the armored signature ('' when unsigned) */
  signature: string;
  /** the signed payload as text */
  payload: string;
  /** the parsed object, unless it was malformed */
  commit?: CommitObject;
  tag?: TagObject;
}

/** Keys to verify with: a Keyring (fast, parsed once), parsed keys, or armored texts (unreadable ones are skipped). */
export type VerificationKeys = Keyring | readonly openpgp.PublicKey[] | readonly string[];

export interface VerifyOptions {
  /**
   * Key IDs allowed to sign (a project's signatureKeys). A signature made by a
   * signing subkey is allowed when its primary key's ID or the subkey's own ID is
   * listed. Undefined = every key of the keyring is allowed.
   */
  allowedKeyIDs?: readonly string[];
  /** who may sign beyond the key list: identity rules (signer-rules.ts); its allowedKeyIDs, when set, wins over the one above */
  rules?: SignerRules;
  /** the committer's (or tagger's) e-mail, for rules.committerEmailMatchesSigner (set by verifyCommitSignature/verifyTagSignature) */
  committerEmail?: string;
  /** "now" for expiry checks (tests) */
  now?: Date;
  /** "gpgsig" (SHA-1 repositories, default) or "gpgsig-sha256" */
  signatureHeader?: string;
  /** 'native' (default): node:crypto for RSA and Ed25519, openpgp.js for the rest; 'openpgp': openpgp.js only */
  engine?: 'native' | 'openpgp';
  /** run node:crypto's public-key check on libuv's thread pool (for many verifications at once) */
  pooled?: boolean;
  /** SSH signatures (ssh-verify.ts): the allowed_signers list; without it every SSH key is unknown */
  sshSigners?: AllowedSigners;
  /** SSH signatures: the project's rules; undefined = every allowed signer is allowed */
  sshRules?: readonly SshSignerRule[];
  /** SSH signatures: the time validity options are checked at; commits and tags default to the committer's / tagger's time */
  signedAt?: Date;
}

export const UNSIGNED_MESSAGE = 'Revision is not signed';

/** The message of an 'expired' outcome (also for a verdict cached before the key expired). */
export const expiredMessage = (keyID: string, expiresISO: string): string => `Revision is signed with key ${keyID}, which expired on ${expiresISO}`;

interface SignaturePacketLike {
  signatureType: number;
  verify(key: unknown, signatureType: number, data: unknown, date: Date, detached: boolean): Promise<void>;
}

const result = (status: VerificationStatus, keyID: string, message: string, extra: Partial<VerificationResult> = {}): VerificationResult =>
  ({ status, keyID, primaryKeyID: '', signer: '', fingerprint: '', signerEmail: '', signerIdentities: [], keyExpires: '', signature: '', payload: '', message, reason: message, ...extra });

/** A result made by another format's verifier (formats.ts), with every field filled. */
export const verificationResult = result;

async function toKeyring(keys: VerificationKeys): Promise<Keyring> {
  if (keys instanceof Keyring) return keys;
  const ring = new Keyring();
  for (const k of keys) {
    if (typeof k !== 'string') {
      await ring.add(k);
      continue;
    }
    try {
      for (const parsed of await readPublicKeys(k)) await ring.add(parsed);
    } catch {
      // an unreadable key cannot have made the signature; skip it
    }
  }
  return ring;
}

/**
 * Decode an ASCII-armored signature block without openpgp.js's stream machinery
 * (3x faster). Returns undefined for anything unusual; the caller then lets
 * openpgp.js read the armor (and report what is wrong). The CRC24 line is ignored,
 * as RFC 9580 asks.
 */
function dearmorSignature(text: string): Uint8Array | undefined {
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== '-----BEGIN PGP SIGNATURE-----') return undefined;
  let i = 1;
  while (i < lines.length && (lines[i] ?? '').trim() !== '') {
    if (!/^[A-Za-z]+: /.test(lines[i] ?? '')) break; // no header block
    i++;
  }
  if ((lines[i] ?? '').trim() === '') i++;
  let body = '';
  for (; i < lines.length; i++) {
    const l = (lines[i] ?? '').trim();
    if (l === '-----END PGP SIGNATURE-----') {
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) return undefined;
      return Buffer.from(body, 'base64');
    }
    if (l.startsWith('=') && l.length === 5) continue;
    body += l;
  }
  return undefined;
}

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

/** Verify an armored detached signature over `payload`. */
export async function verifyDetached(payload: Uint8Array, armoredSignature: string | undefined, keys: VerificationKeys, opts: VerifyOptions = {}): Promise<VerificationResult> {
  const r = await check(payload, armoredSignature, keys, opts);
  r.signature = armoredSignature ?? '';
  r.payload = Buffer.from(payload.buffer, payload.byteOffset, payload.length).toString('utf8');
  return r;
}

async function check(payload: Uint8Array, armoredSignature: string | undefined, keys: VerificationKeys, opts: VerifyOptions): Promise<VerificationResult> {
  if (armoredSignature === undefined || armoredSignature.trim() === '') return result('unsigned', '', UNSIGNED_MESSAGE);
  const format = signatureFormatOf(armoredSignature);
  if (format === 'ssh') return checkSsh(payload, armoredSignature.trimStart(), opts);
  if (format !== 'openpgp' || !armoredSignature.startsWith('-----BEGIN PGP SIGNATURE-----')) {
    const kind = format === 'x509' ? 'an X.509 signature' : 'neither an OpenPGP nor an SSH signature';
    return result('bad-signature', '', `Revision has a signature that cannot be verified: ${kind}; OpenPGP and SSH signatures are supported`);
  }
  const keyring = await toKeyring(keys);
  const pgp = await loadOpenpgp();
  const binary = dearmorSignature(armoredSignature);
  // the usual git signature is read here; anything else by openpgp.js (quick-signature.ts)
  const quick = binary && opts.engine !== 'openpgp' ? readQuickSignature(binary) : undefined;
  let sig: openpgp.Signature | undefined;
  const readFull = async (): Promise<openpgp.Signature> => binary ? pgp.readSignature({ binarySignature: binary }) : pgp.readSignature({ armoredSignature });
  if (!quick) {
    try {
      sig = await readFull();
    } catch (err) {
      return result('bad-signature', '', `Revision has a malformed OpenPGP signature: ${(err as Error).message}`);
    }
  }
  const issuer = quick ? { id: quick.issuerKeyID, at: quick.created } : issuerOf(sig!);
  if (!issuer || !issuer.id) return result('bad-signature', '', 'Revision has an OpenPGP signature without an issuer key ID');
  const keyID = issuer.id;
  const signedAt = issuer.at ? issuer.at.toISOString() : undefined;
  const entry = keyring.find(keyID);
  if (!entry) {
    return result('unknown-key', keyID, `Revision is signed with key ${keyID}, which is not imported into the controller's key store`, signedAt ? { signedAt } : {});
  }
  const state = entry.signing.get(keyID);
  const email = /<([^<>]*)>/.exec(entry.info.owner)?.[1] ?? '';
  const extra: Partial<VerificationResult> = {
    primaryKeyID: entry.info.keyID, signer: entry.info.owner, signerEmail: email, fingerprint: state?.fingerprint ?? '', signerIdentities: entry.userIDs,
    keyExpires: state?.expires ? state.expires.toISOString() : '', ...(signedAt ? { signedAt } : {}),
  };
  const now = opts.now ?? new Date();
  if (!state) return result('unknown-key', keyID, `Revision is signed with key ${keyID}, which is not imported into the controller's key store`, extra);
  if (state.revoked) return result('revoked', keyID, `Revision is signed with key ${keyID}, which has been revoked`, extra);
  if (!state.canSign) return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: the key has no valid signing capability`, extra);
  const signatureType = quick ? quick.signatureType : (sig!.packets[0] as unknown as SignaturePacketLike).signatureType;
  if (signatureType !== pgp.enums.signature.binary && signatureType !== pgp.enums.signature.text) {
    return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: signature type ${signatureType} is not a document signature`, extra);
  }
  const sigDate = issuer.at ?? now;
  if (sigDate.getTime() < state.created.getTime()) {
    return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: made before the key was created`, extra);
  }
  try {
    const fast = quick ? await nativeCheck(quick, state.packet as never, { bytes: payload }, sigDate, opts.pooled === true) : 'unsupported';
    if (fast === 'unsupported') {
      sig ??= await readFull();
      const pkt = sig.packets[0] as unknown as SignaturePacketLike;
      const literal = new pgp.LiteralDataPacket() as unknown as { setBytes(b: Uint8Array, format: number): void };
      literal.setBytes(payload, pgp.enums.literal.binary);
      const viaNative = opts.engine === 'openpgp' ? 'unsupported' : await nativeCheck(pkt as unknown as SigPacket, state.packet as never, literal, sigDate);
      if (viaNative === 'unsupported') await pkt.verify(state.packet, pkt.signatureType, literal, sigDate, true);
    }
  } catch (err) {
    return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: ${(err as Error).message}`, extra);
  }
  if (state.expires && state.expires.getTime() <= now.getTime()) {
    return result('expired', keyID, expiredMessage(keyID, state.expires.toISOString()), extra);
  }
  const rules: SignerRules = { ...(opts.allowedKeyIDs ? { allowedKeyIDs: opts.allowedKeyIDs } : {}), ...opts.rules };
  const refused = checkSigner({ keyID, primaryKeyID: entry.info.keyID, identities: entry.userIDs }, rules, opts.committerEmail);
  if (refused) return result(refused.status, keyID, refused.message, extra);
  const via = keyID === entry.info.keyID ? '' : ` (subkey of ${entry.info.keyID})`;
  return result('valid', keyID, `Revision is signed with key ${keyID}${via} by ${entry.info.owner}`, extra);
}

/**
 * An SSH signature (ssh-verify.ts): the allowed signers and the project's sshSigners decide
 * the key; then the signer identity rules apply to its principals as to OpenPGP user IDs.
 * The OpenPGP key list (allowedKeyIDs) does not apply: an SSH key has no OpenPGP key ID.
 */
function checkSsh(payload: Uint8Array, armored: string, opts: VerifyOptions): VerificationResult {
  const r = verifySshSignature(payload, armored, { signers: opts.sshSigners, rules: opts.sshRules, at: opts.signedAt ?? opts.now ?? new Date() });
  if (r.status !== 'valid') return r;
  const { allowedKeyIDs: _gpgKeys, ...identityRules } = opts.rules ?? {};
  const refused = checkSigner({ keyID: r.keyID, primaryKeyID: r.primaryKeyID, identities: r.signerIdentities }, identityRules, opts.committerEmail);
  return refused ? { ...r, status: refused.status, message: refused.message, reason: refused.message } : r;
}

/**
 * Verify the signature of a raw commit object. Never throws for bad input: a
 * malformed object is a 'bad-signature' outcome whose message says why.
 */
export async function verifyCommitSignature(raw: Buffer | Uint8Array | string, keys: VerificationKeys, opts: VerifyOptions = {}): Promise<VerificationResult> {
  let c: CommitObject;
  try {
    c = parseCommitObject(raw, opts.signatureHeader);
  } catch (err) {
    if (isStraitError(err)) return result('bad-signature', '', `Revision cannot be verified: ${err.message}`);
    throw err;
  }
  const at = opts.signedAt ?? new Date(c.committer.time * 1000);
  return { ...(await verifyDetached(c.payload, c.signature, keys, { ...opts, committerEmail: c.committer.email, signedAt: at })), commit: c };
}

/** Verify the signature of a raw annotated tag object (see verifyCommitSignature). */
export async function verifyTagSignature(raw: Buffer | Uint8Array | string, keys: VerificationKeys, opts: VerifyOptions = {}): Promise<VerificationResult> {
  let t: TagObject;
  try {
    t = parseTagObject(raw);
  } catch (err) {
    if (isStraitError(err)) return result('bad-signature', '', `Revision cannot be verified: ${err.message}`);
    throw err;
  }
  const at = opts.signedAt ?? (t.tagger ? new Date(t.tagger.time * 1000) : undefined);
  return { ...(await verifyDetached(t.payload, t.signature, keys, { ...opts, committerEmail: t.tagger?.email ?? '', ...(at ? { signedAt: at } : {}) })), tag: t };
}
