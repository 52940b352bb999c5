// OpenPGP verification of git commit and tag signatures, in process (openpgp.js).
// Used by the GitOps controller (src/control/gitops) and the code-hosting server.
export { parseCommitObject, parseTagObject, type ParsedCommit, type ParsedTag, type GitHeader } from './git-object.js';
export { isValidKeyID, normalizeKeyID } from './key-id.js';
export { Keyring, readPublicKeys, describeKey, type KeyInfo, type KeyringEntry } from './keyring.js';
export {
  verifyCommitSignature, verifyTagSignature, verifyDetached, UNSIGNED_MESSAGE,
  type VerificationResult, type VerificationStatus, type VerifyOptions,
} from './verify.js';
