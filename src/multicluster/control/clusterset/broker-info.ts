// broker-info.subm: what `strait deploy-broker` hands to every `strait join`.
// base64url (with padding, as subctl writes it) of a JSON object with Submariner's field
// names (brokerURL, clientToken, ipsecPSK, serviceDiscovery, components, customDomains)
// plus brokerCA and an HMAC-SHA256 integrity tag keyed from the access token. The tag
// catches corruption and edits by anyone who does not hold the token; the join also
// checks the token and PSK fingerprints against the broker, which refuses stale files.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { E, formatVersionOf } from '../../../base/errors/index.js';

export const PSK_BYTES = 48;
export const KNOWN_COMPONENTS = ['service-discovery', 'connectivity'] as const;
export type Component = (typeof KNOWN_COMPONENTS)[number];

export interface BrokerInfo {
  /** where the broker's store is: unix:///path/store.sock#broker, file:///dir, https://host:port */
  brokerURL: string;
  /** PEM of the CA that signs the broker's serving certificate */
  brokerCA: string;
  /** access token for the broker */
  clientToken: string;
  /** the IPsec-like pre-shared key, 48 random bytes */
  ipsecPSK: Buffer;
  /** namespace on the broker */
  brokerNamespace: string;
  serviceDiscovery: boolean;
  components: Component[];
  customDomains: string[];
  /** cluster the broker was deployed on (informational) */
  brokerCluster: string;
}

/** The document as stored in the file. */
interface BrokerInfoDoc {
  brokerURL: string;
  brokerCA: string;
  clientToken: { metadata: { name: string }; data: { token: string; 'ca.crt': string; namespace: string } };
  ipsecPSK: { metadata: { name: string }; data: { psk: string } };
  serviceDiscovery: boolean;
  components: string[];
  customDomains: string[];
  brokerCluster: string;
  version: 1;
  integrity?: string;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const STRICT_B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const STRICT_B64URL = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/;
const MAC_PREFIX = 'hmac-sha256:';

export function generatePsk(): Buffer {
  return randomBytes(PSK_BYTES);
}

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export function fingerprint(value: string | Buffer): string {
  return `sha256:${createHash('sha256').update(value).digest('hex')}`;
}

/** Stable JSON: keys sorted at every level, so the MAC does not depend on key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function macOf(doc: BrokerInfoDoc, token: string): string {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(token, 'utf8'), Buffer.alloc(0), 'strait broker-info v1', 32));
  const { integrity: _ignored, ...rest } = doc;
  return createHmac('sha256', key).update(canonical(rest)).digest('hex');
}

/** The file's text (one line, base64url of the JSON document). */
export function encodeBrokerInfo(info: BrokerInfo): string {
  const doc: BrokerInfoDoc = {
    brokerURL: info.brokerURL,
    brokerCA: info.brokerCA,
    clientToken: {
      metadata: { name: 'strait-broker-client-token' },
      data: { token: b64(info.clientToken), 'ca.crt': b64(info.brokerCA), namespace: b64(info.brokerNamespace) },
    },
    ipsecPSK: { metadata: { name: 'submariner-ipsec-psk' }, data: { psk: info.ipsecPSK.toString('base64') } },
    serviceDiscovery: info.serviceDiscovery,
    components: [...info.components],
    customDomains: [...info.customDomains],
    brokerCluster: info.brokerCluster,
    version: 1,
  };
  doc.integrity = MAC_PREFIX + macOf(doc, info.clientToken);
  // URL-safe alphabet with padding, as subctl writes it (Go's base64.URLEncoding)
  return Buffer.from(JSON.stringify(doc), 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The broker-info format versions this strait reads (absent: 1). */
export const BROKER_INFO_VERSIONS = [1];

const ALLOWED_TOP = new Set([
  'brokerURL',
  'brokerCA',
  'clientToken',
  'ipsecPSK',
  'serviceDiscovery',
  'components',
  'customDomains',
  'brokerCluster',
  'version',
  'integrity',
]);

/** Parse and validate the file's text. `source` names the file in messages. */
export function parseBrokerInfo(text: string, source = 'broker-info.subm'): BrokerInfo {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw E.mcBrokerInfoEncoding(source, 'the file is empty');
  if (trimmed.length > 1_000_000) throw E.mcBrokerInfoEncoding(source, `the file is ${trimmed.length} bytes, too large`);
  if (trimmed.length % 4 !== 0 || !(STRICT_B64URL.test(trimmed) || STRICT_B64.test(trimmed))) {
    const bad = /[^A-Za-z0-9+/_=-]/.exec(trimmed);
    throw E.mcBrokerInfoEncoding(source, bad ? `unexpected character ${JSON.stringify(bad[0])} at offset ${bad.index}` : 'its length or padding is wrong');
  }
  const raw = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch (err) {
    throw E.mcBrokerInfoJson(source, (err as Error).message);
  }
  if (!isObj(doc)) throw E.mcBrokerInfoJson(source, `expected an object, got ${Array.isArray(doc) ? 'an array' : typeof doc}`);

  const field = (name: string, rule: string, value?: unknown) => E.mcBrokerInfoField(source, name, rule, value);
  // the version first: a newer deploy-broker's file is refused as such, never read as this
  // format (no version: 1, as every strait writes today; docs/upgrades.md, "Version skew")
  formatVersionOf(`broker-info ${source}`, doc, BROKER_INFO_VERSIONS);
  for (const key of Object.keys(doc)) if (!ALLOWED_TOP.has(key)) throw field(key, 'is not a broker-info field');
  const str = (v: unknown, name: string, allowEmpty = false): string => {
    if (typeof v !== 'string') throw field(name, v === undefined ? 'is missing' : 'must be a string', v);
    if (!allowEmpty && v.length === 0) throw field(name, 'must not be empty');
    return v;
  };
  const brokerURL = str(doc['brokerURL'], 'brokerURL');
  if (!/^(unix|file|https):\/\//.test(brokerURL)) throw field('brokerURL', 'must be a unix://, file:// or https:// URL', brokerURL);
  const brokerCA = str(doc['brokerCA'], 'brokerCA');
  if (!brokerCA.includes('-----BEGIN CERTIFICATE-----')) throw field('brokerCA', 'must be a PEM certificate');
  const ct = doc['clientToken'];
  if (!isObj(ct) || !isObj(ct['data'])) throw field('clientToken.data', ct === undefined ? 'is missing' : 'must be an object');
  const ctData = ct['data'];
  const decodeB64Field = (v: unknown, name: string): Buffer => {
    const s = str(v, name);
    if (s.length % 4 !== 0 || !STRICT_B64.test(s)) throw field(name, 'must be base64', s.slice(0, 40));
    return Buffer.from(s, 'base64');
  };
  const clientToken = decodeB64Field(ctData['token'], 'clientToken.data.token').toString('utf8');
  if (clientToken.length < 16) throw field('clientToken.data.token', 'must be at least 16 characters');
  const brokerNamespace = decodeB64Field(ctData['namespace'], 'clientToken.data.namespace').toString('utf8');
  const ps = doc['ipsecPSK'];
  if (!isObj(ps) || !isObj(ps['data'])) throw field('ipsecPSK.data', ps === undefined ? 'is missing' : 'must be an object');
  const ipsecPSK = decodeB64Field(ps['data']['psk'], 'ipsecPSK.data.psk');
  if (typeof doc['serviceDiscovery'] !== 'boolean') throw field('serviceDiscovery', 'must be true or false', doc['serviceDiscovery']);
  const components = doc['components'];
  if (!Array.isArray(components) || components.length === 0) throw field('components', 'must be a non-empty list', components);
  for (const c of components) {
    if (!(KNOWN_COMPONENTS as readonly unknown[]).includes(c)) throw field('components', `has unknown component (known: ${KNOWN_COMPONENTS.join(', ')})`, c);
  }
  const customDomains = doc['customDomains'];
  if (!Array.isArray(customDomains) || customDomains.some((d) => typeof d !== 'string'))
    throw field('customDomains', 'must be a list of strings', customDomains);
  const brokerCluster = str(doc['brokerCluster'], 'brokerCluster');

  // integrity before the PSK length: a tampered file gets the tampering message
  const integrity = str(doc['integrity'], 'integrity');
  if (!integrity.startsWith(MAC_PREFIX) || !/^[0-9a-f]{64}$/.test(integrity.slice(MAC_PREFIX.length))) {
    throw field('integrity', `must be ${MAC_PREFIX}<64 hex digits>`, integrity);
  }
  const expected = Buffer.from(macOf(doc as unknown as BrokerInfoDoc, clientToken), 'hex');
  const got = Buffer.from(integrity.slice(MAC_PREFIX.length), 'hex');
  if (!timingSafeEqual(expected, got)) throw E.mcBrokerInfoTampered(source);
  if (ipsecPSK.length < PSK_BYTES) throw E.mcBrokerInfoPsk(source, ipsecPSK.length, PSK_BYTES);

  return {
    brokerURL,
    brokerCA,
    clientToken,
    ipsecPSK,
    brokerNamespace,
    serviceDiscovery: doc['serviceDiscovery'],
    components: components as Component[],
    customDomains: customDomains as string[],
    brokerCluster,
  };
}
