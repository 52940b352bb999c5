// The broker's CA: a self-signed certificate (RSA 2048, key from node:crypto, certificate
// built with node-forge) that signs the broker's serving certificate. Its PEM travels in
// broker-info.subm so that joining clusters can verify the broker. node-forge is loaded
// when a CA is made (once per deploy-broker), not by every process that can deploy one.
import { generateKeyPairSync, randomBytes } from 'node:crypto';

export interface BrokerCa {
  certPem: string;
  keyPem: string;
}

export async function createBrokerCa(commonName: string, now = new Date()): Promise<BrokerCa> {
  const { default: forge } = await import('node-forge');
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const fKey = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const fPub = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = fPub;
  cert.serialNumber = '01' + randomBytes(15).toString('hex');
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600_000);
  const attrs = [
    { name: 'commonName', value: commonName },
    { name: 'organizationName', value: 'strait' },
  ];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(fKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}
