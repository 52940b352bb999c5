// Signature formats, told apart by their armour (the first line git stores in `gpgsig`
// or after a tag's message), as git's gpg-interface does:
//   -----BEGIN PGP SIGNATURE-----   openpgp  (verify.ts, against a Keyring)
//   -----BEGIN SSH SIGNATURE-----   ssh      (registered by its verifier, against allowed signers)
//   -----BEGIN SIGNED MESSAGE-----  x509     (not supported)
// verify.ts checks OpenPGP itself and hands any other format to the verifier registered
// for it; a format without one is a 'bad-signature' that says so. Every verifier returns
// the same VerificationResult, with statuses and messages from the one table
// (failures.ts), so policies, strict history and refusals do not care which format signed.
import type { VerificationResult, VerifyOptions } from './verify.js';

export type SignatureFormat = 'openpgp' | 'ssh' | 'x509';

const ARMOUR: readonly [string, SignatureFormat][] = [
  ['-----BEGIN PGP SIGNATURE-----', 'openpgp'],
  ['-----BEGIN PGP MESSAGE-----', 'openpgp'],
  ['-----BEGIN SSH SIGNATURE-----', 'ssh'],
  ['-----BEGIN SIGNED MESSAGE-----', 'x509'],
];

/** The format of an armored signature, or undefined when no known armour starts it. */
export function signatureFormatOf(signature: string): SignatureFormat | undefined {
  const head = signature.trimStart();
  return ARMOUR.find(([a]) => head.startsWith(a))?.[1];
}

/** Verifies one format's signatures over a payload; `opts.trust[format]` is what it verifies against. */
export type FormatVerifier = (payload: Uint8Array, signature: string, opts: VerifyOptions) => Promise<VerificationResult>;

const verifiers = new Map<SignatureFormat, FormatVerifier>();

/** Register the verifier of a format other than OpenPGP (e.g. SSH signatures). */
export function registerSignatureFormat(format: Exclude<SignatureFormat, 'openpgp'>, verifier: FormatVerifier): void {
  verifiers.set(format, verifier);
}

export function formatVerifier(format: SignatureFormat): FormatVerifier | undefined {
  return verifiers.get(format);
}
