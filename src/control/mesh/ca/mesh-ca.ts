// The mesh CA: a self-signed root (node-forge) that issues short-lived workload
// certificates carrying the workload's SPIFFE ID as URI SAN, as istiod's CA does.
// Keys come from node:crypto (fast, native); certificates are built and signed by forge.
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { E } from '../../../base/errors/index.js';
import { spiffeId, type WorkloadIdentity } from './spiffe.js';

export const DEFAULT_WORKLOAD_LIFETIME_MS = 24 * 3600 * 1000;
export const DEFAULT_ROOT_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;
/** Backdate notBefore a little so that clocks a few seconds apart agree. */
const CLOCK_SKEW_MS = 60 * 1000;

export interface CaMaterial {
  certPem: string;
  keyPem: string;
}

export interface WorkloadCert {
  spiffeId: string;
  certPem: string;
  keyPem: string;
  /** the certificate followed by the issuing root, as a TLS server/client sends it */
  chainPem: string;
  /** the trust roots to verify peers with */
  rootPem: string;
  notBefore: Date;
  notAfter: Date;
}

export interface IssueOptions {
  /** default 24 h */
  lifetimeMs?: number;
  /** default now (minus a minute of clock skew); set in the past to make an expired certificate for tests */
  notBefore?: Date;
  /** extra DNS SANs (the ingress gateway's host names, for example) */
  dnsNames?: string[];
}

export interface RootOptions {
  trustDomain?: string;
  lifetimeMs?: number;
  /** organisation in the root's subject, default "strait mesh" */
  organization?: string;
  now?: Date;
}

function newKeyPair(): { forgeKey: forge.pki.rsa.PrivateKey; forgePub: forge.pki.rsa.PublicKey; keyPem: string } {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const forgeKey = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  const forgePub = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
  return { forgeKey, forgePub, keyPem: privateKey };
}

function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] as number) & 0x7f; // positive
  return b.toString('hex');
}

export class MeshCa {
  readonly trustDomain: string;
  readonly rootPem: string;
  private readonly rootCert: forge.pki.Certificate;
  private readonly rootKey: forge.pki.rsa.PrivateKey;

  private constructor(trustDomain: string, material: CaMaterial) {
    this.trustDomain = trustDomain;
    try {
      this.rootCert = forge.pki.certificateFromPem(material.certPem);
      this.rootKey = forge.pki.privateKeyFromPem(material.keyPem) as forge.pki.rsa.PrivateKey;
    } catch (err) {
      throw E.meshCaInvalid((err as Error).message);
    }
    const pub = this.rootCert.publicKey as forge.pki.rsa.PublicKey;
    if (pub.n.compareTo(this.rootKey.n) !== 0) throw E.meshCaInvalid('the root key does not belong to the root certificate');
    this.rootPem = forge.pki.certificateToPem(this.rootCert);
  }

  /** Make a new self-signed root CA. */
  static create(opts: RootOptions = {}): MeshCa {
    const trustDomain = opts.trustDomain ?? 'cluster.local';
    spiffeId({ trustDomain, namespace: 'x', serviceAccount: 'x' }); // validates the trust domain
    const now = opts.now ?? new Date();
    const { forgeKey, forgePub, keyPem } = newKeyPair();
    const cert = forge.pki.createCertificate();
    cert.publicKey = forgePub;
    cert.serialNumber = serial();
    cert.validity.notBefore = new Date(now.getTime() - CLOCK_SKEW_MS);
    cert.validity.notAfter = new Date(now.getTime() + (opts.lifetimeMs ?? DEFAULT_ROOT_LIFETIME_MS));
    const subject = [{ name: 'organizationName', value: opts.organization ?? 'strait mesh' }, { name: 'commonName', value: `root ${trustDomain}` }];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    cert.sign(forgeKey, forge.md.sha256.create());
    return new MeshCa(trustDomain, { certPem: forge.pki.certificateToPem(cert), keyPem });
  }

  /** Load a root kept from an earlier run (a Secret, a file). */
  static load(trustDomain: string, material: CaMaterial): MeshCa {
    return new MeshCa(trustDomain, material);
  }

  material(): CaMaterial {
    return { certPem: this.rootPem, keyPem: forge.pki.privateKeyToPem(this.rootKey) };
  }

  /** Issue a workload certificate for ns/sa in this CA's trust domain. */
  issue(namespace: string, serviceAccount: string, opts: IssueOptions = {}): WorkloadCert {
    return this.issueFor({ trustDomain: this.trustDomain, namespace, serviceAccount }, opts);
  }

  issueFor(identity: WorkloadIdentity, opts: IssueOptions = {}): WorkloadCert {
    const id = spiffeId(identity);
    const lifetime = opts.lifetimeMs ?? DEFAULT_WORKLOAD_LIFETIME_MS;
    if (!(lifetime > 0)) throw E.configInvalid('mesh.ca.workloadLifetime', lifetime, 'must be a positive number of milliseconds');
    // backdated for clock skew, but never by more than a tenth of a (short) lifetime
    const skew = opts.notBefore ? 0 : Math.min(CLOCK_SKEW_MS, Math.floor(lifetime / 10));
    const notBefore = opts.notBefore ?? new Date(Date.now() - skew);
    const notAfter = new Date(notBefore.getTime() + lifetime + skew);
    const { forgePub, keyPem } = newKeyPair();
    const cert = forge.pki.createCertificate();
    cert.publicKey = forgePub;
    cert.serialNumber = serial();
    cert.validity.notBefore = notBefore;
    cert.validity.notAfter = notAfter;
    // Istio workload certificates have an empty subject; forge needs something, keep it neutral.
    cert.setSubject([{ name: 'organizationName', value: this.rootCert.subject.getField('O')?.value ?? 'strait mesh' }]);
    cert.setIssuer(this.rootCert.subject.attributes);
    const altNames: { type: number; value: string }[] = [{ type: 6, value: id }];
    for (const dns of opts.dnsNames ?? []) altNames.push({ type: 2, value: dns });
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      { name: 'subjectAltName', altNames, critical: true },
      { name: 'authorityKeyIdentifier', keyIdentifier: this.rootCert.generateSubjectKeyIdentifier().getBytes() },
    ]);
    cert.sign(this.rootKey, forge.md.sha256.create());
    const certPem = forge.pki.certificateToPem(cert);
    return { spiffeId: id, certPem, keyPem, chainPem: certPem + this.rootPem, rootPem: this.rootPem, notBefore, notAfter };
  }
}

/** The URI SANs of a PEM certificate (spiffe://...), read with node:crypto. */
export function certificateUris(certPem: string): string[] {
  const san = new X509Certificate(certPem).subjectAltName ?? '';
  return san.split(/,\s*/).filter((s) => s.startsWith('URI:')).map((s) => s.slice(4));
}
