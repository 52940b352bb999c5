// The mesh CA: a self-signed root (node-forge) that issues short-lived workload
// certificates carrying the workload's SPIFFE ID as URI SAN, as istiod's CA does.
// Keys and signatures come from node:crypto (native; key generation runs on the libuv
// thread pool, so issuing never blocks the event loop); forge only lays out the
// certificate structure (the TBSCertificate), with the key's SPKI spliced in as DER.
import { createPrivateKey, generateKeyPair, generateKeyPairSync, randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { isIP } from 'node:net';
import { forge, newRsaKeySync, signCertificate } from '../../../platform/x509/index.js';
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
  /** extra DNS SANs (the ingress gateway's host names, for example); an IP address becomes an IP SAN */
  dnsNames?: string[];
  /** the workload key: ECDSA P-256 (default, as Istio) or RSA 2048 */
  keyType?: WorkloadKeyType;
}

export type WorkloadKeyType = 'ec-p256' | 'rsa-2048';

export interface RootOptions {
  trustDomain?: string;
  lifetimeMs?: number;
  /** organisation in the root's subject, default "strait mesh" */
  organization?: string;
  now?: Date;
}

interface NewKey {
  /** SubjectPublicKeyInfo, DER */
  spkiDer: Buffer;
  /** PKCS#8 PEM */
  keyPem: string;
  rsa: boolean;
}

const generateKeyPairAsync = promisify(generateKeyPair);

function keyParams(type: WorkloadKeyType): { kind: 'ec' | 'rsa'; opts: { namedCurve: string } | { modulusLength: number } } {
  return type === 'rsa-2048' ? { kind: 'rsa', opts: { modulusLength: 2048 } } : { kind: 'ec', opts: { namedCurve: 'prime256v1' } };
}

function exportKey(privateKey: KeyObject, publicKey: KeyObject): NewKey {
  return {
    spkiDer: publicKey.export({ type: 'spki', format: 'der' }),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    rsa: privateKey.asymmetricKeyType === 'rsa',
  };
}

function newKeySync(type: WorkloadKeyType): NewKey {
  const p = keyParams(type);
  const { privateKey, publicKey } =
    p.kind === 'rsa' ? generateKeyPairSync('rsa', p.opts as { modulusLength: number }) : generateKeyPairSync('ec', p.opts as { namedCurve: string });
  return exportKey(privateKey, publicKey);
}

/** Key generation on the libuv thread pool: the event loop keeps running meanwhile. */
async function newKey(type: WorkloadKeyType): Promise<NewKey> {
  const p = keyParams(type);
  const { privateKey, publicKey } =
    p.kind === 'rsa'
      ? await generateKeyPairAsync('rsa', p.opts as { modulusLength: number })
      : await generateKeyPairAsync('ec', p.opts as { namedCurve: string });
  return exportKey(privateKey, publicKey);
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
  private readonly rootKeyPem: string;
  private readonly rootKey: KeyObject;
  private readonly rootKeyId: string;

  private constructor(trustDomain: string, material: CaMaterial) {
    this.trustDomain = trustDomain;
    let x: X509Certificate;
    try {
      this.rootCert = forge.pki.certificateFromPem(material.certPem);
      this.rootKey = createPrivateKey(material.keyPem);
      x = new X509Certificate(material.certPem);
    } catch (err) {
      throw E.meshCaInvalid((err as Error).message);
    }
    if (this.rootKey.asymmetricKeyType !== 'rsa')
      throw E.meshCaInvalid(`the root key is ${this.rootKey.asymmetricKeyType ?? 'unknown'}; the mesh root must be RSA`);
    if (!x.checkPrivateKey(this.rootKey)) throw E.meshCaInvalid('the root key does not belong to the root certificate');
    this.rootKeyPem = material.keyPem;
    this.rootPem = forge.pki.certificateToPem(this.rootCert);
    this.rootKeyId = this.rootCert.generateSubjectKeyIdentifier().getBytes();
  }

  /** Make a new self-signed root CA (RSA 2048; synchronous, done once per world). */
  static create(opts: RootOptions = {}): MeshCa {
    const trustDomain = opts.trustDomain ?? 'cluster.local';
    spiffeId({ trustDomain, namespace: 'x', serviceAccount: 'x' }); // validates the trust domain
    const now = opts.now ?? new Date();
    const key = newRsaKeySync();
    const cert = forge.pki.createCertificate();
    // forge computes the subject key identifier from cert.publicKey: give it the real one
    cert.publicKey = key.forgePublic;
    cert.serialNumber = serial();
    cert.validity.notBefore = new Date(now.getTime() - CLOCK_SKEW_MS);
    cert.validity.notAfter = new Date(now.getTime() + (opts.lifetimeMs ?? DEFAULT_ROOT_LIFETIME_MS));
    const subject = [
      { name: 'organizationName', value: opts.organization ?? 'strait mesh' },
      { name: 'commonName', value: `root ${trustDomain}` },
    ];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    const certPem = signCertificate(cert, key.privateKey, key.spkiDer);
    return new MeshCa(trustDomain, { certPem, keyPem: key.keyPem });
  }

  /** Load a root kept from an earlier run (a Secret, a file). */
  static load(trustDomain: string, material: CaMaterial): MeshCa {
    return new MeshCa(trustDomain, material);
  }

  material(): CaMaterial {
    return { certPem: this.rootPem, keyPem: this.rootKeyPem };
  }

  /**
   * Issue a workload certificate for ns/sa in this CA's trust domain. The key is made on
   * the libuv thread pool and the signature is one native RSA operation, so the event
   * loop stays responsive while certificates are issued.
   */
  async issue(namespace: string, serviceAccount: string, opts: IssueOptions = {}): Promise<WorkloadCert> {
    return this.issueFor({ trustDomain: this.trustDomain, namespace, serviceAccount }, opts);
  }

  async issueFor(identity: WorkloadIdentity, opts: IssueOptions = {}): Promise<WorkloadCert> {
    const id = spiffeId(identity); // refuse a bad identity before making a key
    return this.build(id, opts, await newKey(opts.keyType ?? 'ec-p256'));
  }

  /** The synchronous form of issue() (blocks while the key is made): tests and tools. */
  issueSync(namespace: string, serviceAccount: string, opts: IssueOptions = {}): WorkloadCert {
    const identity = { trustDomain: this.trustDomain, namespace, serviceAccount };
    return this.build(spiffeId(identity), opts, newKeySync(opts.keyType ?? 'ec-p256'));
  }

  private build(id: string, opts: IssueOptions, key: NewKey): WorkloadCert {
    const lifetime = opts.lifetimeMs ?? DEFAULT_WORKLOAD_LIFETIME_MS;
    if (!(lifetime > 0)) throw E.configInvalid('mesh.ca.workloadLifetime', lifetime, 'must be a positive number of milliseconds');
    // backdated for clock skew, but never by more than a tenth of a (short) lifetime
    const skew = opts.notBefore ? 0 : Math.min(CLOCK_SKEW_MS, Math.floor(lifetime / 10));
    const notBefore = opts.notBefore ?? new Date(Date.now() - skew);
    const notAfter = new Date(notBefore.getTime() + lifetime + skew);
    const cert = forge.pki.createCertificate();
    cert.publicKey = this.rootCert.publicKey; // placeholder for forge; replaced by key.spkiDer when signing
    cert.serialNumber = serial();
    cert.validity.notBefore = notBefore;
    cert.validity.notAfter = notAfter;
    // Istio workload certificates have an empty subject; forge needs something, keep it neutral.
    cert.setSubject([{ name: 'organizationName', value: this.rootCert.subject.getField('O')?.value ?? 'strait mesh' }]);
    cert.setIssuer(this.rootCert.subject.attributes);
    const altNames: { type: number; value: string }[] = [{ type: 6, value: id }];
    for (const dns of opts.dnsNames ?? [])
      altNames.push(isIP(dns) ? ({ type: 7, ip: dns } as unknown as { type: number; value: string }) : { type: 2, value: dns });
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      // key encipherment is an RSA use (TLS 1.2 RSA key exchange); an EC key only signs
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: key.rsa, critical: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      { name: 'subjectAltName', altNames, critical: true },
      { name: 'authorityKeyIdentifier', keyIdentifier: this.rootKeyId },
    ]);
    const certPem = signCertificate(cert, this.rootKey, key.spkiDer);
    return { spiffeId: id, certPem, keyPem: key.keyPem, chainPem: certPem + this.rootPem, rootPem: this.rootPem, notBefore, notAfter };
  }
}

/** The URI SANs of a PEM certificate (spiffe://...), read with node:crypto. */
export function certificateUris(certPem: string): string[] {
  const san = new X509Certificate(certPem).subjectAltName ?? '';
  return san
    .split(/,\s*/)
    .filter((s) => s.startsWith('URI:'))
    .map((s) => s.slice(4));
}
