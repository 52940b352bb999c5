// Who may sign, checked after a signature is known to be cryptographically valid, by a
// key that is neither revoked nor expired. Format-neutral: a signer is a key ID (the
// signing key and, for OpenPGP, its primary key) and the identities its key verifiably
// claims (OpenPGP: user IDs with a valid self-certification; SSH: principals).
//   allowedKeyIDs                 the key must be listed (signatureKeys, gpg.keys)
//   identities                    some verified identity must match one of these globs
//   committerEmailMatchesSigner   that identity's e-mail must be the committer's (tagger's)
// The identity rules are strait extensions (docs/gitops.md, "Signer identity rules").

export interface SignerRules {
  /** key IDs (16 hex digits, or 40-hex fingerprints) allowed to sign; undefined = any key of the keyring */
  allowedKeyIDs?: readonly string[];
  /** what lists the keys, for messages ("the project's signatureKeys") */
  allowedBy?: string;
  /** globs over the signer's verified identities ("Name <email>"); "*" any run, "?" one character, case-insensitive */
  identities?: readonly string[];
  /** the committer's (tagger's) e-mail must be the e-mail of the matching verified identity */
  committerEmailMatchesSigner?: boolean;
}

export interface Signer {
  /** the key that made the signature (a subkey's ID when a subkey signed) */
  keyID: string;
  /** the primary key's ID ('' when the format has none) */
  primaryKeyID: string;
  /** the identities the key verifiably claims */
  identities: readonly string[];
}

export interface SignerRefusal {
  status: 'not-allowed' | 'signer-not-allowed';
  message: string;
}

const globCache = new Map<string, RegExp>();

/** Case-insensitive glob: "*" any run of characters, "?" one character, everything else literal. */
export function identityGlobMatch(pattern: string, value: string): boolean {
  let re = globCache.get(pattern);
  if (!re) {
    if (globCache.size > 1000) globCache.clear();
    const body = [...pattern].map((c) => (c === '*' ? '[^]*' : c === '?' ? '[^]' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&'))).join('');
    re = new RegExp(`^${body}$`, 'iu');
    globCache.set(pattern, re);
  }
  return re.test(value);
}

export const emailOf = (identity: string): string =>
  (/<([^<>]*)>\s*$/.exec(identity)?.[1] ?? (identity.includes('@') && !identity.includes(' ') ? identity : '')).toLowerCase();

const canonical = (id: string): string => (id.length === 40 ? id.slice(24) : id).toUpperCase();
const quote = (s: string): string => JSON.stringify(s);

/**
 * undefined when the signer is allowed, else the refusal, its message about "Revision"
 * (failures.ts aboutSubject rewrites it for a history commit).
 */
export function checkSigner(signer: Signer, rules: SignerRules, committerEmail?: string): SignerRefusal | undefined {
  const via = signer.primaryKeyID && signer.keyID !== signer.primaryKeyID ? ` (subkey of ${signer.primaryKeyID})` : '';
  if (rules.allowedKeyIDs !== undefined) {
    const allowed = new Set(rules.allowedKeyIDs.map(canonical));
    if (!allowed.has(signer.keyID) && !(signer.primaryKeyID && allowed.has(signer.primaryKeyID))) {
      return {
        status: 'not-allowed',
        message: `Revision is signed with key ${signer.keyID}${via}, which is not allowed by ${rules.allowedBy ?? "the project's signatureKeys"}`,
      };
    }
  }
  const patterns = rules.identities ?? [];
  const wantEmail = rules.committerEmailMatchesSigner === true;
  if (patterns.length === 0 && !wantEmail) return undefined;
  const named = signer.identities.length > 0 ? signer.identities.map(quote).join(', ') : 'no verified identity';
  const matching = patterns.length === 0 ? [...signer.identities] : signer.identities.filter((id) => patterns.some((p) => identityGlobMatch(p, id)));
  if (matching.length === 0) {
    return {
      status: 'signer-not-allowed',
      message: `Revision is signed with key ${signer.keyID}${via} of ${named}, which matches none of the allowed signer identities (${patterns.map(quote).join(', ')})`,
    };
  }
  if (wantEmail) {
    const committer = (committerEmail ?? '').toLowerCase();
    if (!committer || !matching.some((id) => emailOf(id) === committer)) {
      const emails = [...new Set(matching.map(emailOf).filter((e) => e))];
      return {
        status: 'signer-not-allowed',
        message: `Revision is signed with key ${signer.keyID}${via} of ${named}, but its committer e-mail ${quote(committerEmail ?? '')} is not the signer's verified e-mail (${emails.length > 0 ? emails.map(quote).join(', ') : 'none'})`,
      };
    }
  }
  return undefined;
}
