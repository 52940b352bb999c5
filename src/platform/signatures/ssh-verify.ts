// In-process verification of SSH commit and tag signatures (git -c gpg.format=ssh)
// against an allowed_signers list, with the answers `git verify-commit` gets from
// `ssh-keygen -Y find-principals` / `-Y verify -n git -Overify-time=<commit time>`.
// The order of checks decides the outcome:
//   not an SSHSIG / unreadable                               -> bad-signature
//   namespace other than "git" / hash other than sha256/512  -> bad-signature
//   key (or, for a certificate, its CA) in no allowed_signers line -> unknown-key
//   cryptographic check fails (or the CA's signature on the certificate) -> bad-signature
//   every line for the key refuses: namespaces option        -> not-allowed
//                                   valid-after/valid-before or certificate
//                                   validity at the commit time, or (with `now`)
//                                   at verification time      -> expired
//                                   certificate principals    -> not-allowed
//   project rules given and none names the key or a principal -> not-allowed
//   otherwise                                                 -> valid
import { isStraitError } from '../../base/errors/index.js';
import { matchPatternList, type AllowedSigner, type AllowedSigners } from './allowed-signers.js';
import { SSH_FOREVER, checkSshSignatureBlob, describeSshKey } from './ssh-key.js';
import { checkSshSignature, parseSshSignature, type SshSignature } from './sshsig.js';
import type { VerificationResult, VerificationStatus } from './result.js';
import { E } from '../../base/errors/index.js';

/**
 * A project's rule for SSH signers (strait extension, AppProject spec.sshSigners):
 * `fingerprint` ("SHA256:…", of the signing key or of a certificate's CA) and/or
 * `principal` (an OpenSSH pattern list matched against the signer's principals).
 * With both, both must hold.
 */
export interface SshSignerRule {
  fingerprint?: string;
  principal?: string;
}

export interface SshVerifyOptions {
  /** the allowed signers; undefined = none */
  signers?: AllowedSigners;
  /** undefined = every signer of the list is allowed */
  rules?: readonly SshSignerRule[];
  /** the time valid-after / valid-before and certificates are checked at (the commit time) */
  at: Date;
  /**
   * the verification time: the key and certificate must be valid then too (the commit time is
   * written by the signer, so a certificate that expired in 2020 could sign a commit dated 2020)
   */
  now?: Date;
}

const NAMESPACE = 'git';

const result = (status: VerificationStatus, keyID: string, message: string, extra: Partial<VerificationResult> = {}): VerificationResult => ({
  status,
  keyID,
  primaryKeyID: '',
  signer: '',
  fingerprint: keyID,
  signerEmail: '',
  signerIdentities: [],
  keyExpires: '',
  signature: '',
  payload: '',
  message,
  reason: message,
  ...extra,
});

const iso = (secs: number | bigint): string => {
  const n = Number(secs);
  return n >= 253402300800 ? 'forever' : new Date(n * 1000).toISOString().replace('.000Z', 'Z');
};

/** An SSH key's ID in a VerificationResult is its fingerprint ("SHA256:…"); OpenPGP key IDs are hex. */
export const isSshKeyID = (keyID: string): boolean => keyID.startsWith('SHA256:');

export const normalizeFingerprint = (fp: string): string => (fp.startsWith('SHA256:') ? fp : `SHA256:${fp}`).replace(/=+$/, '');

/** Whether `rules` allow a signature by `sig`'s key with these principals. */
export function sshRulesAllow(rules: readonly SshSignerRule[], sig: SshSignature, principals: readonly string[]): boolean {
  const fps = [sig.publicKey.fingerprint, ...(sig.publicKey.cert ? [sig.publicKey.cert.signatureKey.fingerprint] : [])];
  return rules.some((r) => {
    if (!r.fingerprint && !r.principal) return false;
    if (r.fingerprint && !fps.includes(normalizeFingerprint(r.fingerprint))) return false;
    if (r.principal && !principals.some((p) => matchPatternList(p, r.principal as string))) return false;
    return true;
  });
}

interface Verdict {
  ok: boolean;
  status: VerificationStatus;
  why: string;
  principals: string[];
}

/** What one allowed_signers line says about a signature made at `at` (seconds). */
function judgeLine(e: AllowedSigner, sig: SshSignature, at: number): Verdict {
  const plainPrincipals = e.principals.split(',').filter((p) => !p.startsWith('!'));
  const refuse = (status: VerificationStatus, why: string, principals = plainPrincipals): Verdict => ({ ok: false, status, why, principals });
  if (e.namespaces !== undefined && !matchPatternList(NAMESPACE, e.namespaces)) {
    return refuse('not-allowed', `whose allowed_signers line ${e.line} allows namespaces "${e.namespaces}", not "${NAMESPACE}"`);
  }
  if (e.validAfter !== undefined && at < e.validAfter)
    return refuse('expired', `whose allowed_signers line ${e.line} makes it valid after ${iso(e.validAfter)} only`);
  if (e.validBefore !== undefined && at > e.validBefore)
    return refuse('expired', `whose allowed_signers line ${e.line} makes it valid before ${iso(e.validBefore)} only`);
  const cert = sig.publicKey.cert;
  if (!cert) return { ok: true, status: 'valid', why: '', principals: plainPrincipals };
  const principals = cert.principals.filter((p) => matchPatternList(p, e.principals));
  if (principals.length === 0) {
    return refuse(
      'not-allowed',
      `whose certificate principals ${JSON.stringify(cert.principals)} match none of "${e.principals}" (allowed_signers line ${e.line})`,
      cert.principals,
    );
  }
  const t = BigInt(at);
  if (t < cert.validAfter) return refuse('expired', `whose certificate is valid from ${iso(cert.validAfter)}`, principals);
  if (cert.validBefore !== SSH_FOREVER && t >= cert.validBefore) return refuse('expired', `whose certificate expired at ${iso(cert.validBefore)}`, principals);
  return { ok: true, status: 'valid', why: '', principals };
}

/**
 * What is wrong with the signature itself (undefined: nothing): the signature over the payload, and for a
 * certificate its CA's signature and its type (a user certificate).
 */
function signatureProblem(sig: SshSignature, payload: Uint8Array, lines: readonly AllowedSigner[]): string | undefined {
  const key = sig.publicKey;
  try {
    // a plain key's allowed_signers line has the same key, its KeyObject made once
    const why = checkSshSignature(sig, payload, key.cert ? key : (lines[0] as AllowedSigner).key);
    if (why || !key.cert) return why;
    const caWhy = checkSshSignatureBlob(key.cert.signatureKey, key.cert.signature, key.cert.signed, (w) => E.sshSignatureInvalid(w));
    if (caWhy) return `the certificate's CA signature does not hold: ${caWhy}`;
    if (key.cert.certType !== 1) return 'the certificate is a host certificate, not a user certificate';
    return undefined;
  } catch (err) {
    if (!isStraitError(err)) throw err;
    return err.message;
  }
}

/** Verify an armored SSH signature over `payload` (see the table above). */
export function verifySshSignature(payload: Uint8Array, armored: string, opts: SshVerifyOptions): VerificationResult {
  let sig: SshSignature;
  try {
    sig = parseSshSignature(armored);
  } catch (err) {
    if (!isStraitError(err)) throw err;
    return result('bad-signature', '', `Revision has a malformed SSH signature: ${err.message}`);
  }
  const key = sig.publicKey;
  const fp = key.fingerprint;
  const desc = describeSshKey(key);
  const caFp = key.cert?.signatureKey.fingerprint ?? '';
  const base: Partial<VerificationResult> = caFp ? { primaryKeyID: caFp } : {};
  if (sig.namespace !== NAMESPACE) {
    return result(
      'bad-signature',
      fp,
      `Revision has an SSH signature from key ${fp} for namespace ${JSON.stringify(sig.namespace)}, not "${NAMESPACE}" (not made by git)`,
      base,
    );
  }
  const lines = opts.signers?.candidates(key) ?? [];
  if (lines.length === 0) {
    const msg = key.cert
      ? `Revision is signed with SSH certificate key ${fp} (${desc}) issued by CA ${caFp}, which is no cert-authority of the SSH allowed signers`
      : `Revision is signed with SSH key ${fp} (${desc}), which is not in the SSH allowed signers`;
    return result('unknown-key', fp, msg, base);
  }
  const why = signatureProblem(sig, payload, lines);
  if (why) return result('bad-signature', fp, `Revision has a bad SSH signature from key ${fp}: ${why}`, base);
  const at = Math.floor(opts.at.getTime() / 1000);
  if (!Number.isSafeInteger(at)) return result('bad-signature', fp, `Revision cannot be checked against SSH key ${fp}: its date is out of range`, base);
  const now = opts.now ? Math.floor(opts.now.getTime() / 1000) : undefined;
  const verdicts = lines.map((e) => {
    const v = judgeLine(e, sig, at);
    if (!v.ok || now === undefined || !Number.isSafeInteger(now)) return v;
    const w = judgeLine(e, sig, now);
    return w.ok ? v : { ...w, why: `${w.why} (checked when verified, ${iso(now)})` };
  });
  const accepted = verdicts.filter((v) => v.ok);
  if (accepted.length === 0) {
    const v = verdicts[0] as Verdict;
    const extra = { ...base, signer: v.principals.join(','), signerEmail: emailOf(v.principals), signerIdentities: v.principals };
    return result(v.status, fp, `Revision is signed with SSH key ${fp} of ${v.principals.join(',')}, ${v.why}; the commit is dated ${iso(at)}`, extra);
  }
  const principals = [...new Set(accepted.flatMap((v) => v.principals))];
  // when the last accepting line (or the certificate) stops being valid: a cached verdict is re-judged then
  const until = Math.max(
    ...lines
      .filter((_, i) => verdicts[i]?.ok)
      .map((e) => Math.min(e.validBefore ?? Infinity, key.cert && key.cert.validBefore !== SSH_FOREVER ? Number(key.cert.validBefore) : Infinity)),
  );
  const keyExpires = Number.isFinite(until) && until < 253402300800 ? new Date(until * 1000).toISOString() : '';
  const extra = {
    ...base,
    signer: principals.join(','),
    signerEmail: emailOf(principals),
    signerIdentities: principals,
    ...(keyExpires ? { keyExpires } : {}),
  };
  if (opts.rules !== undefined && !sshRulesAllow(opts.rules, sig, principals)) {
    return result(
      'not-allowed',
      fp,
      `Revision is signed with SSH key ${fp} of ${principals.join(',')}, which is not allowed by the project's sshSigners`,
      extra,
    );
  }
  return result('valid', fp, `Revision is signed with SSH key ${fp} (${desc}) of ${principals.join(',')}`, extra);
}

const emailOf = (principals: readonly string[]): string => principals.find((p) => p.includes('@') && !/[*?]/.test(p)) ?? '';
