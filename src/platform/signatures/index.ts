// Commit and tag signatures, in process (openpgp.js parses, node:crypto checks RSA
// and Ed25519): raw git object parsing, the exact signed payload, verification
// against a keyring, GnuPG key ID rules, and OpenPGP public key descriptions. Used by
// the GitOps controller (src/gitops/control) and the code-hosting server (src/githost/server).
export {
  gitObjectMatches, parseCommitObject, parseTagObject, type CommitObject, type TagObject, type GitIdent, type GitHeader,
} from './git-object.js';
export { isValidKeyID, normalizeKeyID } from './key-id.js';
export { Keyring, readPublicKeys, keyStoreInfo, type KeyInfo, type KeyringEntry, type SigningKeyState } from './keyring.js';
export { parseArmoredPublicKey, readArmoredKeys, describeKey, type PublicKeyInfo, type SubkeyInfo, type KeyUsage } from './keys.js';
export {
  verifyCommitSignature, verifyTagSignature, verifyDetached, verificationResult, expiredMessage, UNSIGNED_MESSAGE,
  type VerificationKeys, type VerificationResult, type VerificationStatus, type VerifyOptions,
} from './verify.js';
export { readQuickSignature, type QuickSignature } from './quick-signature.js';
export { signatureFormatOf, registerSignatureFormat, type FormatVerifier, type SignatureFormat } from './formats.js';
export { checkSigner, identityGlobMatch, emailOf, type Signer, type SignerRules, type SignerRefusal } from './signer-rules.js';
export { SIGNATURE_FAILURES, failureKind, aboutSubject, type SignatureFailureKind, type SignatureFailureInfo } from './failures.js';
