// What verifying a signed commit or tag found: the result every signature format (OpenPGP,
// SSH) gives, read by the GitOps gate, githost's API and the CLI.
import type { CommitObject, TagObject } from './git-object.js';

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
