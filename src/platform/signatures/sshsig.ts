// SSH signatures as `ssh-keygen -Y sign` and `git -c gpg.format=ssh` make them
// (OpenSSH PROTOCOL.sshsig):
//   armor:  "-----BEGIN SSH SIGNATURE-----", base64 lines, "-----END SSH SIGNATURE-----"
//   blob:   byte[6] "SSHSIG", uint32 version (1), string publickey, string namespace,
//           string reserved, string hash_algorithm ("sha256" | "sha512"), string signature
//   signed: byte[6] "SSHSIG", string namespace, string reserved, string hash_algorithm,
//           string H(message)
// Parsing never throws anything but STRAIT_ERR_SSH_SIGNATURE_INVALID.
import { createHash } from 'node:crypto';
import { E } from '../../base/errors/index.js';
import { SshReader, checkSshSignatureBlob, parseSshPublicKey, sshStrings, type SshPublicKey } from './ssh-key.js';

export const SSH_SIGNATURE_BEGIN = '-----BEGIN SSH SIGNATURE-----';
const END = '-----END SSH SIGNATURE-----';
const MAGIC = Buffer.from('SSHSIG', 'latin1');
const MAX_ARMOR = 64 * 1024;

export interface SshSignature {
  /** the key that made the signature (a certificate when the signer used one) */
  publicKey: SshPublicKey;
  namespace: string;
  reserved: Buffer;
  hashAlgorithm: string;
  /** the signature blob: string algorithm, string signature */
  signature: Buffer;
  /** the signature's algorithm name (e.g. "ssh-ed25519", "rsa-sha2-512") */
  signatureAlgorithm: string;
}

const fail = (why: string) => E.sshSignatureInvalid(why);

/** The armored text's binary blob. */
export function dearmorSshSignature(text: string): Buffer {
  if (text.length > MAX_ARMOR) throw fail(`the armored signature is ${text.length} characters, more than ${MAX_ARMOR}`);
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines[0] !== SSH_SIGNATURE_BEGIN) throw fail(`the armor does not start with ${JSON.stringify(SSH_SIGNATURE_BEGIN)}`);
  const endAt = lines.indexOf(END);
  if (endAt < 0) throw fail(`the armor has no ${JSON.stringify(END)} line`);
  if (endAt !== lines.length - 1) throw fail('text follows the end of the armor');
  const body = lines.slice(1, endAt).join('');
  if (body.length === 0) throw fail('the armor is empty');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) throw fail('the armor body is not base64');
  return Buffer.from(body, 'base64');
}

/** Parse an armored SSH signature. */
export function parseSshSignature(armored: string): SshSignature {
  const blob = dearmorSshSignature(armored);
  const r = new SshReader(blob, fail, 'the SSH signature');
  if (!r.bytes(6, 'magic').equals(MAGIC)) throw fail('the blob does not start with "SSHSIG"');
  const version = r.u32('version');
  if (version !== 1) throw fail(`version ${version} is not supported (1)`);
  const keyBlob = r.string('public key');
  const namespace = r.string('namespace').toString('utf8');
  const reserved = r.string('reserved');
  const hashAlgorithm = r.text('hash algorithm');
  const signature = r.string('signature');
  r.end();
  const publicKey = parseSshPublicKey(keyBlob, (why) => fail(`its public key: ${why}`));
  const sr = new SshReader(signature, fail, 'the signature blob');
  const signatureAlgorithm = sr.text('signature algorithm');
  return { publicKey, namespace, reserved, hashAlgorithm, signature, signatureAlgorithm };
}

/** The bytes an SSHSIG signature covers for `message`, or why there are none. */
export function sshsigSignedData(sig: SshSignature, message: Uint8Array): Buffer | string {
  if (sig.hashAlgorithm !== 'sha256' && sig.hashAlgorithm !== 'sha512') return `hash algorithm ${JSON.stringify(sig.hashAlgorithm)} is not sha256 or sha512`;
  const h = createHash(sig.hashAlgorithm).update(message).digest();
  return Buffer.concat([MAGIC, sshStrings(Buffer.from(sig.namespace, 'utf8'), sig.reserved, sig.hashAlgorithm, h)]);
}

/**
 * The cryptographic check of an SSHSIG signature over `message` by the key it
 * carries (or `key`, the same key parsed before, whose KeyObject exists already):
 * undefined when it holds, else why not. Trust in the key (allowed
 * signers, namespaces, validity) is the caller's (ssh-verify.ts).
 */
export function checkSshSignature(sig: SshSignature, message: Uint8Array, key: SshPublicKey = sig.publicKey): string | undefined {
  const data = sshsigSignedData(sig, message);
  if (typeof data === 'string') return data;
  return checkSshSignatureBlob(key, sig.signature, data, fail);
}
