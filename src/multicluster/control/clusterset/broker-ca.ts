// The broker's CA: a self-signed certificate (RSA 2048; key and signature from node:crypto,
// certificate laid out by node-forge: platform/x509) that signs the broker's serving
// certificate. Its PEM travels in broker-info.subm so that joining clusters can verify the
// broker. node-forge is loaded when a CA is made (once per deploy-broker), not by every
// process that can deploy one.
import { randomBytes } from 'node:crypto';

export interface BrokerCa {
  certPem: string;
  keyPem: string;
}

export async function createBrokerCa(commonName: string, now = new Date()): Promise<BrokerCa> {
  const { forge, newRsaKey, signCertificate } = await import('../../../platform/x509/index.js');
  const key = await newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
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
  return { certPem: signCertificate(cert, key.privateKey), keyPem: key.keyPem };
}
