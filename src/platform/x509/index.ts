// Certificates strait makes itself (the mesh root and workload certificates, the broker's CA,
// the GitOps API's and the webhook's serving certificates): node-forge lays out the
// certificate (subject, validity, extensions), node:crypto (OpenSSL) makes the key and the
// signature. forge's own RSA signing runs its bignum arithmetic in JavaScript: 0.1-0.3 s of
// CPU per signature, on the start path of the daemons that make a CA (docs/world.md).
import { generateKeyPair, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';

export { forge };

/** an RSA key (2048 bits) for a certificate: node:crypto's key and forge's view of its public half */
export interface RsaKey {
  privateKey: KeyObject;
  /** PKCS#8 PEM */
  keyPem: string;
  /** SubjectPublicKeyInfo, DER */
  spkiDer: Buffer;
  /** the public key as forge takes it (cert.publicKey, from which forge derives the subject key identifier) */
  forgePublic: forge.pki.rsa.PublicKey;
}

function rsaKeyOf(privateKey: KeyObject, publicKey: KeyObject): RsaKey {
  return {
    privateKey,
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    spkiDer: publicKey.export({ type: 'spki', format: 'der' }),
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

/** a new RSA 2048 key, made in this thread */
export function newRsaKeySync(): RsaKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return rsaKeyOf(privateKey, publicKey);
}

const generateKeyPairAsync = promisify(generateKeyPair);

/** a new RSA 2048 key, made on the libuv thread pool (the event loop runs meanwhile) */
export async function newRsaKey(): Promise<RsaKey> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', { modulusLength: 2048 });
  return rsaKeyOf(privateKey, publicKey);
}

/**
 * Sign `cert` (laid out by forge) with `signer`, an RSA key, through node:crypto (PKCS#1 v1.5,
 * SHA-256), and return its PEM. With `spkiDer`, that SubjectPublicKeyInfo replaces the one
 * forge encoded from cert.publicKey (forge knows only RSA keys; a placeholder then never
 * reaches the output).
 */
export function signCertificate(cert: forge.pki.Certificate, signer: KeyObject, spkiDer?: Buffer): string {
  // the algorithm written into the certificate is RSA's: another key would sign what it does not say
  if (signer.asymmetricKeyType !== 'rsa') throw new TypeError(`signCertificate: the signer is ${signer.asymmetricKeyType ?? 'unknown'}, not RSA`);
  const oid = forge.pki.oids['sha256WithRSAEncryption'] as string;
  cert.signatureOid = oid;
  cert.siginfo.algorithmOid = oid;
  // getTBSCertificate is public in forge but missing from its type declarations
  const tbs = (forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert);
  if (spkiDer) {
    // TBSCertificate: [0] version, serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, ...
    (tbs.value as forge.asn1.Asn1[])[6] = forge.asn1.fromDer(forge.util.createBuffer(spkiDer.toString('binary')));
  }
  (cert as unknown as { tbsCertificate: forge.asn1.Asn1 }).tbsCertificate = tbs;
  const tbsDer = Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary');
  cert.signature = sign('sha256', tbsDer, signer).toString('binary');
  return forge.pki.certificateToPem(cert);
}
