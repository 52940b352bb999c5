// A self-signed serving certificate for the API, made once and kept in the admin
// Secret (tls.crt / tls.key), as Argo CD's server does; clients use --insecure or
// trust the certificate.
import { randomBytes } from 'node:crypto';
import { forge, newRsaKeySync, signCertificate } from '../../platform/x509/index.js';
import { Kinds } from '../../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';
import { ADMIN_SECRET } from './admin.js';

type Secret = KubeObject & { data?: Record<string, string> };

export function selfSignedCertificate(hosts: string[]): { cert: string; key: string } {
  const key = newRsaKeySync();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  const attrs = [
    { name: 'commonName', value: 'strait-control' },
    { name: 'organizationName', value: 'strait' },
  ];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: hosts.map((h) => (/^[\d.]+$|:/.test(h) ? { type: 7, ip: h } : { type: 2, value: h })) },
  ]);
  return { cert: signCertificate(cert, key.privateKey), key: key.keyPem };
}

/** The API's certificate from the admin Secret, generated and stored when missing. */
export async function ensureServingCertificate(store: ResourceStore, namespace: string, hosts: string[]): Promise<{ cert: string; key: string }> {
  const s = await store.get<Secret>(Kinds.Secret, ADMIN_SECRET, namespace);
  const crt = s?.data?.['tls.crt'];
  const k = s?.data?.['tls.key'];
  if (crt && k) return { cert: Buffer.from(crt, 'base64').toString(), key: Buffer.from(k, 'base64').toString() };
  const made = selfSignedCertificate(hosts);
  await store.apply<Secret>(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: ADMIN_SECRET, namespace },
      data: { ...(s?.data ?? {}), 'tls.crt': Buffer.from(made.cert).toString('base64'), 'tls.key': Buffer.from(made.key).toString('base64') },
    },
    { fieldManager: 'strait-gitops' },
  );
  return made;
}
