// Deploying the broker: its namespace, description, CA, the cluster set's PSK and the
// fingerprints of the current token and PSK, in the broker's store. A cluster set has one
// PSK: a deploy on a broker that clusters have joined keeps the PSK they share (the file it
// writes works for a re-join of any of them); a new one is minted on a broker nobody joined,
// or with `newPsk` (then every cluster joins again). A join presenting an older
// broker-info file is refused (STRAIT_ERR_MC_BROKER_INFO_STALE). The broker's description
// is the Broker object (submariner.io/v1alpha1 Broker "submariner-broker" in the broker's
// namespace), as Submariner's operator keeps it and `subctl show brokers` lists it.
import { E } from '../../../base/errors/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { createBrokerCa } from './broker-ca.js';
import { type BrokerInfo, type Component, fingerprint, generatePsk, generateToken, KNOWN_COMPONENTS } from './broker-info.js';
import { BROKER_CONFIGMAP, BROKER_NAME, BROKER_NAMESPACE, BROKER_SECRET, PSK_SECRET } from './names.js';
import { b64, cmData, ensureNamespace, K, unb64 } from './store-util.js';

export interface DeployBrokerOptions {
  /** URL that joining clusters use to reach this broker store */
  brokerURL: string;
  /** the cluster the broker runs on (informational) */
  cluster: string;
  /** access token; default: a new random one. The local world passes its store API token. */
  token?: string;
  components?: Component[];
  customDomains?: string[];
  now?: Date;
  /**
   * PEM of the CA that joining clusters verify the broker with, when the broker is a
   * Kubernetes API server (its own CA); default: a broker CA made once and kept in the store.
   */
  ca?: string;
  /** mint a new PSK although clusters have joined with the current one (each must join again) */
  newPsk?: boolean;
}

/** What a deploy did with the PSK: `kept` the cluster set's, or minted a new one; `joined`: the clusters on the broker before it */
export interface DeployedBroker extends BrokerInfo {
  pskKept: boolean;
  joined: string[];
}

const CA_SECRET = 'strait-broker-ca';

export async function deployBroker(broker: ResourceStore, opts: DeployBrokerOptions): Promise<DeployedBroker> {
  const now = opts.now ?? new Date();
  const components = opts.components ?? [...KNOWN_COMPONENTS];
  await ensureNamespace(broker, BROKER_NAMESPACE);
  // the CA survives redeploys; the PSK does not
  const caSecret = await broker.get(K.Secret, CA_SECRET, BROKER_NAMESPACE);
  let caPem = opts.ca ?? unb64((caSecret?.['data'] as Record<string, string> | undefined)?.['ca.crt']);
  if (!caPem) {
    const ca = await createBrokerCa(`strait-broker-${opts.cluster}`, now);
    caPem = ca.certPem;
    await broker.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: CA_SECRET, namespace: BROKER_NAMESPACE },
      type: 'kubernetes.io/tls',
      data: { 'ca.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) },
    });
  }
  const token = opts.token ?? generateToken();
  const joined = (await broker.list(K.Cluster, { namespace: BROKER_NAMESPACE })).items.map((c) => c.metadata.name).sort();
  const { psk, kept } = await setPsk(broker, joined, opts.newPsk === true);
  await broker.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: BROKER_SECRET, namespace: BROKER_NAMESPACE },
    type: 'Opaque',
    data: { tokenFingerprint: b64(fingerprint(token)), pskFingerprint: b64(fingerprint(psk)), deployedAt: b64(now.toISOString()) },
  });
  await broker.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: BROKER_CONFIGMAP, namespace: BROKER_NAMESPACE },
    data: {
      components: components.join(','),
      customDomains: (opts.customDomains ?? []).join(','),
      globalnetEnabled: 'false',
      cluster: opts.cluster,
      brokerURL: opts.brokerURL,
      deployedAt: now.toISOString(),
    },
  });
  await broker.apply(brokerResource(components, opts.customDomains ?? []));
  return {
    brokerURL: opts.brokerURL,
    brokerCA: caPem,
    clientToken: token,
    ipsecPSK: psk,
    brokerNamespace: BROKER_NAMESPACE,
    serviceDiscovery: components.includes('service-discovery'),
    components,
    customDomains: opts.customDomains ?? [],
    brokerCluster: opts.cluster,
    pskKept: kept,
    joined,
  };
}

/**
 * The Broker object with the fields of Submariner's operator: the enabled components and
 * the default custom domains. strait has no Globalnet (overlapping CIDRs) nor clusterset
 * IPs: globalnetEnabled false, no CIDR range, no cluster size.
 */
export function brokerResource(components: readonly string[], customDomains: readonly string[]): KubeObject {
  return {
    apiVersion: K.Broker.apiVersion,
    kind: 'Broker',
    metadata: { name: BROKER_NAME, namespace: BROKER_NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'strait' } },
    spec: {
      components: [...components],
      ...(customDomains.length > 0 ? { defaultCustomDomains: [...customDomains] } : {}),
      globalnetEnabled: false,
    },
  };
}

/**
 * The PSK of this deploy: the cluster set's (Secret submariner-ipsec-psk in the broker's
 * namespace, as Submariner's broker keeps it, checked against the current fingerprint)
 * while clusters have joined, else a new one, stored there. A broker deployed before it
 * kept the PSK has only the fingerprint: with clusters joined, the deploy is refused.
 */
async function setPsk(broker: ResourceStore, joined: string[], newPsk: boolean): Promise<{ psk: Buffer; kept: boolean }> {
  if (joined.length > 0 && !newPsk) {
    const stored = (((await broker.get(K.Secret, PSK_SECRET, BROKER_NAMESPACE))?.['data'] ?? {}) as Record<string, unknown>)['psk'];
    const current = unb64((((await broker.get(K.Secret, BROKER_SECRET, BROKER_NAMESPACE))?.['data'] ?? {}) as Record<string, string>)['pskFingerprint']);
    const psk = typeof stored === 'string' ? Buffer.from(stored, 'base64') : undefined;
    if (!psk || psk.length === 0 || fingerprint(psk) !== current) throw E.mcBrokerPskUnknown(joined);
    return { psk, kept: true };
  }
  const psk = generatePsk();
  await broker.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: PSK_SECRET, namespace: BROKER_NAMESPACE },
    type: 'Opaque',
    data: { psk: psk.toString('base64') },
  });
  return { psk, kept: false };
}

export interface BrokerDescription {
  namespace: string;
  name: string;
  components: string[];
  customDomains: string[];
  globalnetEnabled: boolean;
  cluster: string;
  deployedAt: string;
}

/**
 * The broker's description: the Broker object's spec, with the cluster and deploy time of
 * the broker's ConfigMap (a broker deployed before strait wrote the Broker object: the
 * ConfigMap alone).
 */
export async function describeBroker(broker: ResourceStore, where = 'broker'): Promise<BrokerDescription> {
  const cm = await broker.get(K.ConfigMap, BROKER_CONFIGMAP, BROKER_NAMESPACE);
  if (!cm) throw E.mcBrokerNotDeployed(where);
  const d = cmData(cm);
  const list = (s: string | undefined) => (s ? s.split(',').filter(Boolean) : []);
  const desc: BrokerDescription = {
    namespace: BROKER_NAMESPACE,
    name: BROKER_NAME,
    components: list(d['components']),
    customDomains: list(d['customDomains']),
    globalnetEnabled: d['globalnetEnabled'] === 'true',
    cluster: d['cluster'] ?? '',
    deployedAt: d['deployedAt'] ?? '',
  };
  const obj = await broker.get(K.Broker, BROKER_NAME, BROKER_NAMESPACE).catch(() => undefined);
  const spec = obj?.['spec'] as { components?: unknown; defaultCustomDomains?: unknown; globalnetEnabled?: unknown } | undefined;
  if (!spec) return desc;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return { ...desc, components: strings(spec.components), customDomains: strings(spec.defaultCustomDomains), globalnetEnabled: spec.globalnetEnabled === true };
}

/** Refuse broker info whose token or PSK is not the broker's current one. */
export async function checkBrokerInfoCurrent(broker: ResourceStore, info: BrokerInfo, source: string): Promise<void> {
  const secret = await broker.get(K.Secret, BROKER_SECRET, info.brokerNamespace);
  if (!secret) throw E.mcBrokerNotDeployed(info.brokerURL);
  const data = (secret['data'] ?? {}) as Record<string, string>;
  if (unb64(data['tokenFingerprint']) !== fingerprint(info.clientToken)) throw E.mcBrokerInfoStale(source, 'the access token differs');
  if (unb64(data['pskFingerprint']) !== fingerprint(info.ipsecPSK)) throw E.mcBrokerInfoStale(source, 'the IPsec PSK differs');
}
