// Commit and tag signatures, in process (openpgp.js parses OpenPGP, node:crypto checks RSA
// and Ed25519; SSH signatures (SSHSIG) are parsed here and checked with node:crypto): raw git object parsing, the exact signed payload, verification
// against a keyring, GnuPG key ID rules, and OpenPGP public key descriptions. Used by
// the GitOps controller (src/gitops/control) and the code-hosting server (src/githost/server).
export {
  gitObjectMatches,
  parseCommitObject,
  parseTagObject,
  type CommitObject,
  type TagObject,
  type GitIdent,
  type GitHeader,
} from './git-object.js';
export { isValidKeyID, normalizeKeyID } from './key-id.js';
export { Keyring, readPublicKeys, keyStoreInfo, type KeyInfo, type KeyringEntry, type SigningKeyState } from './keyring.js';
export { parseArmoredPublicKey, readArmoredKeys, describeKey, type PublicKeyInfo, type SubkeyInfo, type KeyUsage } from './keys.js';
export {
  verifyCommitSignature,
  verifyCommitSignatures,
  verifyTagSignature,
  verifyDetached,
  verificationResult,
  expiredMessage,
  UNSIGNED_MESSAGE,
  type VerificationKeys,
  type VerificationResult,
  type VerificationStatus,
  type VerifyOptions,
} from './verify.js';
export { readQuickSignature, type QuickSignature } from './quick-signature.js';
export { signatureFormatOf, type SignatureFormat } from './formats.js';
export { checkSigner, identityGlobMatch, emailOf, type Signer, type SignerRules, type SignerRefusal } from './signer-rules.js';
export { SIGNATURE_FAILURES, failureKind, aboutSubject, type SignatureFailureKind, type SignatureFailureInfo } from './failures.js';
export { AllowedSigners, parseAllowedSignerLine, parseSshTime, matchPatternList, type AllowedSigner, type AllowedSignerProblem } from './allowed-signers.js';
export { parseSshPublicKey, parseSshPublicKeyLine, describeSshKey, sshKeyText, fingerprintOf, type SshPublicKey, type SshCertificate } from './ssh-key.js';
export { parseSshSignature, checkSshSignature, dearmorSshSignature, SSH_SIGNATURE_BEGIN, type SshSignature } from './sshsig.js';
export { verifySshSignature, sshRulesAllow, normalizeFingerprint, isSshKeyID, type SshSignerRule, type SshVerifyOptions } from './ssh-verify.js';
