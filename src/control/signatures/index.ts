// Commit signatures: git commit-object parsing, signed-payload rebuild and OpenPGP
// verification (openpgp.js, in-process), plus armored public key parsing. Used by the
// code-hosting server (commit verification, GPG keys) and the GitOps controller.
export { parseCommitObject, type CommitObject, type GitIdent } from './commit-object.js';
export { verifyCommitSignature, type SignatureCheck, type SignatureStatus, type VerifyOptions } from './verify.js';
export { parseArmoredPublicKey, readArmoredKeys, describeKey, type PublicKeyInfo, type SubkeyInfo, type KeyUsage } from './keys.js';
