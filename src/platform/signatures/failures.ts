// The one table of signature refusals, shared by every signature format (OpenPGP here,
// SSH signatures beside it) and every place that refuses (the GitOps controller's sync,
// the code-hosting server's push): each kind has a stable error code, the reason its
// Application condition and Kubernetes Event carry, and a few words for summaries.
// Messages are written about a subject ("Revision is not signed", "History commit <id>
// by <author> is not signed"); `aboutSubject` turns a head message into a history one.
//   kind                status (VerificationStatus) or the strict-history case
//   code                STRAIT_ERR_SIGNATURE_* (docs/errors.md)
//   reason              condition reason and Event reason (docs/gitops.md)
import { E, type ErrorCode, type StraitError } from '../../base/errors/index.js';
import type { VerificationStatus } from './verify.js';

export type SignatureFailureKind = Exclude<VerificationStatus, 'valid'> | 'history-unsigned';

export interface SignatureFailureInfo {
  /** the error factory: its code is the kind's stable STRAIT_ERR_SIGNATURE_* code */
  error: RefusalFactory;
  code: ErrorCode;
  /** the Application condition's reason and the Kubernetes Event's reason */
  reason: string;
  /** a few words, for summaries */
  words: string;
}

type RefusalFactory = ((message: string, detail?: { commit?: string; author?: string; keyID?: string }) => StraitError) & { readonly code: ErrorCode };

const row = (error: RefusalFactory, reason: string, words: string): SignatureFailureInfo => ({ error, code: error.code, reason, words });

export const SIGNATURE_FAILURES: Readonly<Record<SignatureFailureKind, SignatureFailureInfo>> = Object.freeze({
  unsigned: row(E.signatureUnsigned, 'SignatureUnsigned', 'not signed'),
  'unknown-key': row(E.signatureUnknownKey, 'SignatureUnknownKey', 'signed with a key that is not imported'),
  'not-allowed': row(E.signatureKeyNotAllowed, 'SignatureKeyNotAllowed', 'signed with a key the policy does not allow'),
  'signer-not-allowed': row(E.signatureSignerNotAllowed, 'SignatureSignerNotAllowed', 'signed by a signer the identity rules do not allow'),
  expired: row(E.signatureExpired, 'SignatureExpired', 'signed with an expired key'),
  revoked: row(E.signatureRevoked, 'SignatureRevoked', 'signed with a revoked key'),
  'bad-signature': row(E.signatureBad, 'SignatureBad', 'bad signature'),
  'history-unsigned': row(E.signatureHistoryUnsigned, 'SignatureHistoryUnsigned', 'a commit in the history is not signed'),
});

/** The kind of a refusal: an unsigned commit in the history (not the revision itself) has its own. */
export function failureKind(status: Exclude<VerificationStatus, 'valid'>, inHistory: boolean): SignatureFailureKind {
  return inHistory && status === 'unsigned' ? 'history-unsigned' : status;
}

/**
 * Every verification message starts with its subject, "Revision" ("Revision is not
 * signed", "Revision is signed with key ..., which has been revoked"); the same message
 * about another subject, e.g. "History commit 1a2b... by Ann <ann@example.com>".
 */
export function aboutSubject(message: string, subject: string): string {
  return message.startsWith('Revision') ? subject + message.slice('Revision'.length) : `${subject}: ${message}`;
}
