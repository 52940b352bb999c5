// Signature formats, told apart by their armour (the first line git stores in `gpgsig`
// or after a tag's message), as git's gpg-interface does:
//   -----BEGIN PGP SIGNATURE-----   openpgp  (verify.ts, against a Keyring)
//   -----BEGIN SSH SIGNATURE-----   ssh      (ssh-verify.ts, against allowed signers)
//   -----BEGIN SIGNED MESSAGE-----  x509     (not supported: a 'bad-signature' that says so)
// Every format's verifier returns the same VerificationResult, with statuses and messages
// from the one table (failures.ts), so policies, strict history and refusals do not care
// which format signed.

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
