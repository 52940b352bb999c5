// The webhook's own TLS, as cert-manager-less operators do it: at start the control module
// makes a CA and a serving certificate for its Service's DNS names (plus any extra hosts),
// serves with it, and writes the CA into the caBundle of its MutatingWebhookConfiguration
// so that the API server trusts it. A restart makes new ones and patches again.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { forge, newRsaKeySync, signCertificate } from '../../../platform/x509/index.js';
import type { KubernetesResourceStore } from '../../../platform/store/index.js';

export interface WebhookTls {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** The DNS names of a Service, as the API server calls it (service.namespace.svc). */
export function serviceHosts(service: string, namespace: string): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

/** A CA (10 years) and a serving certificate (1 year) for `hosts` (DNS names or IP addresses). */
export function createWebhookTls(hosts: string[], now = new Date()): WebhookTls {
  const ca = newRsaKeySync();
  const caCert = forge.pki.createCertificate();
  caCert.publicKey = ca.forgePublic;
  caCert.serialNumber = '01' + randomBytes(15).toString('hex');
  caCert.validity.notBefore = new Date(now.getTime() - 60_000);
  caCert.validity.notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600_000);
  const caName = [
    { name: 'commonName', value: 'strait-webhook-ca' },
    { name: 'organizationName', value: 'strait' },
  ];
  caCert.setSubject(caName);
  caCert.setIssuer(caName);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const caPem = signCertificate(caCert, ca.privateKey);

  const leaf = newRsaKeySync();
  const cert = forge.pki.createCertificate();
  cert.publicKey = leaf.forgePublic;
  cert.serialNumber = '02' + randomBytes(15).toString('hex');
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + 365 * 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: hosts[0] ?? 'strait-webhook' }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: hosts.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h })) },
  ]);
  return { caPem, certPem: signCertificate(cert, ca.privateKey), keyPem: leaf.keyPem };
}

/**
 * Write `caPem` into the caBundle of every webhook of the MutatingWebhookConfiguration
 * `name` (JSON patch, guarded by the resourceVersion read). Returns the number of
 * webhooks patched; STRAIT_ERR_NOT_FOUND when the configuration does not exist.
 */
export async function patchWebhookCaBundle(store: KubernetesResourceStore, name: string, caPem: string): Promise<number> {
  const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(name)}`;
  const bundle = Buffer.from(caPem, 'utf8').toString('base64');
  for (let attempt = 0; ; attempt++) {
    const cur = await store.raw({ method: 'GET', path });
    const cfg = cur.body as { metadata: { resourceVersion: string }; webhooks?: unknown[] };
    const n = cfg.webhooks?.length ?? 0;
    const ops: unknown[] = [{ op: 'test', path: '/metadata/resourceVersion', value: cfg.metadata.resourceVersion }];
    for (let i = 0; i < n; i++) ops.push({ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: bundle });
    const res = await store.raw(
      { method: 'PATCH', path, body: ops, contentType: 'application/json-patch+json', query: { fieldManager: 'strait-control' } },
      attempt < 3 ? [409, 422] : [],
    );
    if (res.status < 300) return n;
  }
}

/**
 * Whether every webhook of the MutatingWebhookConfiguration `name` carries `caPem` as its
 * caBundle (false for a configuration with no webhooks: nothing would call this server);
 * STRAIT_ERR_NOT_FOUND when it does not exist.
 */
export async function webhookCaBundleCurrent(store: KubernetesResourceStore, name: string, caPem: string): Promise<boolean> {
  const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(name)}`;
  const bundle = Buffer.from(caPem, 'utf8').toString('base64');
  const cur = await store.raw({ method: 'GET', path });
  const hooks = (cur.body as { webhooks?: { clientConfig?: { caBundle?: string } }[] }).webhooks ?? [];
  return hooks.length > 0 && hooks.every((h) => h.clientConfig?.caBundle === bundle);
}
