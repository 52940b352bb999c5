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
import { Keyring, readPublicKeys, type KeyringEntry, type SigningKeyState } from './keyring.js';
import {
  concludePublicKeyJob,
  nativeCheck,
  prepareNativeCheck,
  publicKeyJob,
  runPublicKeyJob,
  runPublicKeyJobPooled,
  PublicKeyBatch,
  publicKeyFailure,
  type PublicKeyJob,
  type SigPacket,
} from './native-check.js';
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

const result = (status: VerificationStatus, keyID: string, message: string, extra: Partial<VerificationResult> = {}): VerificationResult => ({
  status,
  keyID,
  primaryKeyID: '',
  signer: '',
  fingerprint: '',
  signerEmail: '',
  signerIdentities: [],
  keyExpires: '',
  signature: '',
  payload: '',
  message,
  reason: message,
  ...extra,
});

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
    id = Buffer.from(pkt.issuerFingerprint.subarray(pkt.issuerFingerprint.length - 8))
      .toString('hex')
      .toUpperCase();
  }
  return { id, at: pkt.created ?? null };
}

/** Verify an armored detached signature over `payload`. */
export async function verifyDetached(
  payload: Uint8Array,
  armoredSignature: string | undefined,
  keys: VerificationKeys,
  opts: VerifyOptions = {},
): Promise<VerificationResult> {
  return withInput(await check(payload, armoredSignature, keys, opts), payload, armoredSignature);
}

function withInput(r: VerificationResult, payload: Uint8Array, armoredSignature: string | undefined): VerificationResult {
  r.signature = armoredSignature ?? '';
  r.payload = Buffer.from(payload.buffer, payload.byteOffset, payload.length).toString('utf8');
  return r;
}

/** The key that made a signature, found in the keyring and fit to have made it: what the public-key check and the policy need. */
interface KeyContext {
  keyID: string;
  entry: KeyringEntry;
  state: SigningKeyState;
  extra: Partial<VerificationResult>;
  /** the time the signature is checked at: when it says it was made */
  sigDate: Date;
}

/**
 * Where a check stands after what needs neither a public-key operation nor openpgp.js:
 *   done     the outcome is known;
 *   job      the usual git signature, read here: one public-key operation decides (native-check.ts);
 *   openpgp  read here, but the key's algorithm is openpgp.js's;
 *   full     not the usual shape (or engine 'openpgp'): openpgp.js reads and checks it.
 */
type Step =
  | { at: 'done'; result: VerificationResult }
  | { at: 'job'; ctx: KeyContext; job: PublicKeyJob }
  | { at: 'openpgp'; ctx: KeyContext; binary: Uint8Array }
  | { at: 'full' };

const FULL: Step = { at: 'full' };
// RFC 9580 signature types (openpgp.js's enums.signature.binary and .text)
const SIG_BINARY = 0;
const SIG_TEXT = 1;

/** Outcomes decided before a keyring is needed: unsigned, an SSH signature, a signature in no supported format. */
function checkFormat(payload: Uint8Array, armoredSignature: string | undefined, opts: VerifyOptions): VerificationResult | undefined {
  if (armoredSignature === undefined || armoredSignature.trim() === '') return result('unsigned', '', UNSIGNED_MESSAGE);
  const format = signatureFormatOf(armoredSignature);
  if (format === 'ssh') return checkSsh(payload, armoredSignature.trimStart(), opts);
  if (format !== 'openpgp' || !armoredSignature.startsWith('-----BEGIN PGP SIGNATURE-----')) {
    const kind = format === 'x509' ? 'an X.509 signature' : 'neither an OpenPGP nor an SSH signature';
    return result('bad-signature', '', `Revision has a signature that cannot be verified: ${kind}; OpenPGP and SSH signatures are supported`);
  }
  return undefined;
}

/** The signing key of an OpenPGP signature, or the outcome that needs no public-key check (unknown key, revoked, ...). */
function signingKey(
  keyring: Keyring,
  issuer: { id: string; at: Date | null } | undefined,
  signatureType: number,
  opts: VerifyOptions,
): KeyContext | VerificationResult {
  if (!issuer || !issuer.id) return result('bad-signature', '', 'Revision has an OpenPGP signature without an issuer key ID');
  const keyID = issuer.id;
  const signedAt = issuer.at ? issuer.at.toISOString() : undefined;
  const entry = keyring.find(keyID);
  if (!entry) {
    return result(
      'unknown-key',
      keyID,
      `Revision is signed with key ${keyID}, which is not imported into the controller's key store`,
      signedAt ? { signedAt } : {},
    );
  }
  const state = entry.signing.get(keyID);
  const k = describeSigningKey(entry, state);
  const extra: Partial<VerificationResult> = {
    primaryKeyID: entry.info.keyID,
    signer: entry.info.owner,
    signerEmail: k.email,
    fingerprint: state?.fingerprint ?? '',
    signerIdentities: entry.userIDs,
    keyExpires: k.expires,
    ...(signedAt ? { signedAt } : {}),
  };
  if (!state) return result('unknown-key', keyID, `Revision is signed with key ${keyID}, which is not imported into the controller's key store`, extra);
  if (state.revoked) return result('revoked', keyID, `Revision is signed with key ${keyID}, which has been revoked`, extra);
  if (!state.canSign) return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: the key has no valid signing capability`, extra);
  if (signatureType !== SIG_BINARY && signatureType !== SIG_TEXT) {
    return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: signature type ${signatureType} is not a document signature`, extra);
  }
  const sigDate = issuer.at ?? opts.now ?? new Date();
  if (sigDate.getTime() < state.created.getTime()) {
    return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: made before the key was created`, extra);
  }
  return { keyID, entry, state, extra, sigDate };
}

/** The signer's e-mail and the key's expiry as results show them: worked out once per key, not per signature. */
const described = new WeakMap<KeyringEntry, WeakMap<object, { email: string; expires: string }>>();
const NO_STATE = {};
function describeSigningKey(entry: KeyringEntry, state: SigningKeyState | undefined): { email: string; expires: string } {
  let byState = described.get(entry);
  if (!byState) described.set(entry, (byState = new WeakMap()));
  let d = byState.get(state ?? NO_STATE);
  if (!d) {
    d = { email: /<([^<>]*)>/.exec(entry.info.owner)?.[1] ?? '', expires: state?.expires ? state.expires.toISOString() : '' };
    byState.set(state ?? NO_STATE, d);
  }
  return d;
}

const isKeyContext = (x: KeyContext | VerificationResult): x is KeyContext => 'sigDate' in x;

/** The outcome once the cryptographic check is done (`failure`: why it failed): expiry, then who may sign. */
function conclude(ctx: KeyContext, failure: unknown, opts: VerifyOptions): VerificationResult {
  const { keyID, entry, state, extra } = ctx;
  if (failure !== undefined) return result('bad-signature', keyID, `Revision has a bad signature from key ${keyID}: ${(failure as Error).message}`, extra);
  const now = opts.now ?? new Date();
  if (state.expires && state.expires.getTime() <= now.getTime()) {
    return result('expired', keyID, expiredMessage(keyID, state.expires.toISOString()), extra);
  }
  const rules: SignerRules = { ...(opts.allowedKeyIDs ? { allowedKeyIDs: opts.allowedKeyIDs } : {}), ...opts.rules };
  const refused = checkSigner({ keyID, primaryKeyID: entry.info.keyID, identities: entry.userIDs }, rules, opts.committerEmail);
  if (refused) return result(refused.status, keyID, refused.message, extra);
  const via = keyID === entry.info.keyID ? '' : ` (subkey of ${entry.info.keyID})`;
  return result('valid', keyID, `Revision is signed with key ${keyID}${via} by ${entry.info.owner}`, extra);
}

/** An OpenPGP signature (checkFormat passed) as far as it goes without a public-key operation or openpgp.js. Never throws. */
function prepareOpenpgp(payload: Uint8Array, armoredSignature: string, keyring: Keyring, opts: VerifyOptions): Step {
  if (opts.engine === 'openpgp') return FULL;
  const binary = dearmorSignature(armoredSignature);
  // the usual git signature is read here; anything else by openpgp.js (quick-signature.ts)
  const quick = binary ? readQuickSignature(binary) : undefined;
  if (!binary || !quick) return FULL;
  const ctx = signingKey(keyring, { id: quick.issuerKeyID, at: quick.created }, quick.signatureType, opts);
  if (!isKeyContext(ctx)) return { at: 'done', result: ctx };
  try {
    const p = prepareNativeCheck(quick, ctx.state.packet as never, { bytes: payload });
    if (p === 'unsupported') return { at: 'openpgp', ctx, binary };
    return { at: 'job', ctx, job: publicKeyJob(p, quick, quick.params as Record<string, Uint8Array | undefined>, ctx.sigDate) };
  } catch (err) {
    return { at: 'done', result: conclude(ctx, err, opts) };
  }
}

/** The rest of a check: the public-key operation (here or on the thread pool), or openpgp.js. */
async function settle(step: Step, payload: Uint8Array, armoredSignature: string, keyring: Keyring, opts: VerifyOptions): Promise<VerificationResult> {
  switch (step.at) {
    case 'done':
      return step.result;
    case 'job': {
      let failure: unknown;
      try {
        concludePublicKeyJob(step.job, opts.pooled === true ? await runPublicKeyJobPooled(step.job) : runPublicKeyJob(step.job));
      } catch (err) {
        failure = err;
      }
      return conclude(step.ctx, failure, opts);
    }
    case 'openpgp': {
      const pgp = await loadOpenpgp();
      let failure: unknown;
      try {
        await verifyWithOpenpgp(await pgp.readSignature({ binarySignature: step.binary }), step.ctx, payload, opts);
      } catch (err) {
        failure = err;
      }
      return conclude(step.ctx, failure, opts);
    }
    case 'full':
      return checkFull(payload, armoredSignature, keyring, opts);
  }
}

/** openpgp.js reads the signature; node:crypto checks it when it can, else openpgp.js. Throws an Error saying why the signature is bad. */
async function verifyWithOpenpgp(sig: openpgp.Signature, ctx: KeyContext, payload: Uint8Array, opts: VerifyOptions): Promise<void> {
  const pgp = await loadOpenpgp();
  const pkt = sig.packets[0] as unknown as SignaturePacketLike;
  const literal = new pgp.LiteralDataPacket() as unknown as { setBytes(b: Uint8Array, format: number): void };
  literal.setBytes(payload, pgp.enums.literal.binary);
  const viaNative = opts.engine === 'openpgp' ? 'unsupported' : await nativeCheck(pkt as unknown as SigPacket, ctx.state.packet as never, literal, ctx.sigDate);
  if (viaNative === 'unsupported') await pkt.verify(ctx.state.packet, pkt.signatureType, literal, ctx.sigDate, true);
}

/** A signature that is not the usual shape: openpgp.js reads all of it. */
async function checkFull(payload: Uint8Array, armoredSignature: string, keyring: Keyring, opts: VerifyOptions): Promise<VerificationResult> {
  const pgp = await loadOpenpgp();
  const binary = dearmorSignature(armoredSignature);
  let sig: openpgp.Signature;
  try {
    sig = binary ? await pgp.readSignature({ binarySignature: binary }) : await pgp.readSignature({ armoredSignature });
  } catch (err) {
    return result('bad-signature', '', `Revision has a malformed OpenPGP signature: ${(err as Error).message}`);
  }
  const ctx = signingKey(keyring, issuerOf(sig), (sig.packets[0] as unknown as SignaturePacketLike | undefined)?.signatureType ?? -1, opts);
  if (!isKeyContext(ctx)) return ctx;
  let failure: unknown;
  try {
    await verifyWithOpenpgp(sig, ctx, payload, opts);
  } catch (err) {
    failure = err;
  }
  return conclude(ctx, failure, opts);
}

async function check(payload: Uint8Array, armoredSignature: string | undefined, keys: VerificationKeys, opts: VerifyOptions): Promise<VerificationResult> {
  const early = checkFormat(payload, armoredSignature, opts);
  if (early) return early;
  const keyring = await toKeyring(keys);
  return settle(prepareOpenpgp(payload, armoredSignature!, keyring, opts), payload, armoredSignature!, keyring, opts);
}

/**
 * An SSH signature (ssh-verify.ts): the allowed signers and the project's sshSigners decide
 * the key; then the signer identity rules apply to its principals as to OpenPGP user IDs.
 * The OpenPGP key list (allowedKeyIDs) does not apply: an SSH key has no OpenPGP key ID.
 */
function checkSsh(payload: Uint8Array, armored: string, opts: VerifyOptions): VerificationResult {
  // valid when signed (the committer's date) and now, as OpenPGP keys are judged now
  const now = opts.now ?? new Date();
  const r = verifySshSignature(payload, armored, { signers: opts.sshSigners, rules: opts.sshRules, at: opts.signedAt ?? now, now });
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
  return { ...(await verifyDetached(c.payload, c.signature, keys, commitOptions(c, opts))), commit: c };
}

/** Commits verified at once from this many on: the public-key checks run on libuv's thread pool. */
const POOL_FROM = 16;

/**
 * Verify many raw commit objects (strict history). Each result is what
 * verifyCommitSignature gives for that object; the difference is the cost: the objects are
 * parsed and checked on this thread without a promise each, and the public-key checks of
 * more than POOL_FROM commits run on libuv's thread pool (every core) while the next
 * commits are read. Never throws for bad input.
 */
export async function verifyCommitSignatures(
  raws: readonly (Buffer | Uint8Array)[],
  keyring: Keyring,
  opts: VerifyOptions = {},
): Promise<VerificationResult[]> {
  const out = new Array<VerificationResult>(raws.length);
  const batch = new PublicKeyBatch(raws.length > POOL_FROM);
  const waiting: { i: number; c: CommitObject; o: VerifyOptions; ctx: KeyContext; job: PublicKeyJob }[] = [];
  const slow: Promise<void>[] = [];
  for (let i = 0; i < raws.length; i++) {
    let c: CommitObject;
    try {
      c = parseCommitObject(raws[i]!, opts.signatureHeader);
    } catch (err) {
      if (isStraitError(err)) {
        out[i] = result('bad-signature', '', `Revision cannot be verified: ${err.message}`);
        continue;
      }
      throw err;
    }
    const o = commitOptions(c, opts);
    const early = checkFormat(c.payload, c.signature, o);
    const step = early ? undefined : prepareOpenpgp(c.payload, c.signature!, keyring, o);
    if (early || step!.at === 'done') {
      out[i] = withCommit(withInput(early ?? (step as { result: VerificationResult }).result, c.payload, c.signature), c);
    } else if (step!.at === 'job') {
      batch.add(step!.job);
      waiting.push({ i, c, o, ctx: step!.ctx, job: step!.job });
    } else {
      const commit = c;
      slow.push(
        settle(step!, c.payload, c.signature!, keyring, o).then((r) => {
          out[i] = withCommit(withInput(r, commit.payload, commit.signature), commit);
        }),
      );
    }
  }
  const outcomes = await batch.run();
  for (let k = 0; k < waiting.length; k++) {
    const { i, c, o, ctx, job } = waiting[k]!;
    out[i] = withCommit(withInput(conclude(ctx, publicKeyFailure(job, outcomes[k]!), o), c.payload, c.signature), c);
  }
  await Promise.all(slow);
  return out;
}

function withCommit(r: VerificationResult, c: CommitObject): VerificationResult {
  r.commit = c;
  return r;
}

/** A commit's options: the committer's e-mail for the signer rules, its time for SSH validity. */
const commitOptions = (c: CommitObject, opts: VerifyOptions): VerifyOptions => ({
  ...opts,
  committerEmail: c.committer.email,
  signedAt: opts.signedAt ?? new Date(c.committer.time * 1000),
});

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
  return {
    ...(await verifyDetached(t.payload, t.signature, keys, { ...opts, committerEmail: t.tagger?.email ?? '', ...(at ? { signedAt: at } : {}) })),
    tag: t,
  };
}
