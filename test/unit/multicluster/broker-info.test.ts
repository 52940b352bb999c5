import assert from 'node:assert/strict';
import { createHmac, hkdfSync } from 'node:crypto';
import { test } from 'node:test';
import { isStraitError, type ErrorCode } from '../../../src/base/errors/index.js';
import { encodeBrokerInfo, parseBrokerInfo, generatePsk, type BrokerInfo } from '../../../src/multicluster/control/clusterset/index.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const info = (over: Partial<BrokerInfo> = {}): BrokerInfo => ({
  brokerURL: 'unix:///tmp/x/store.sock#broker',
  brokerCA: CA,
  clientToken: 'tok-0123456789abcdef',
  ipsecPSK: generatePsk(),
  brokerNamespace: 'submariner-k8s-broker',
  serviceDiscovery: true,
  components: ['service-discovery', 'connectivity'],
  customDomains: [],
  brokerCluster: 'cluster-a',
  ...over,
});
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- free-form JSON edited by the tamper cases
type Doc = Record<string, any>;
const toDoc = (text: string) => JSON.parse(Buffer.from(text, 'base64').toString('utf8')) as Doc;
const fromDoc = (doc: unknown) => Buffer.from(JSON.stringify(doc)).toString('base64');

test('broker info round-trips with Submariner field names and URL-safe base64', () => {
  const i = info();
  const text = encodeBrokerInfo(i);
  assert.match(text, /^[A-Za-z0-9_=-]+$/);
  const doc = toDoc(text.replace(/-/g, '+').replace(/_/g, '/'));
  for (const f of ['brokerURL', 'clientToken', 'ipsecPSK', 'serviceDiscovery', 'components', 'customDomains']) assert.ok(f in doc, f);
  assert.equal(Buffer.from(doc.ipsecPSK.data.psk, 'base64').length, 48);
  const back = parseBrokerInfo(text + '\n');
  assert.deepEqual(back, i);
});

test('each deploy has a new PSK', () => {
  assert.notDeepEqual(generatePsk(), generatePsk());
  assert.equal(generatePsk().length, 48);
});

const tamper = (edit: (d: Doc) => void, keepMac = true) => {
  const doc = toDoc(encodeBrokerInfo(info()).replace(/-/g, '+').replace(/_/g, '/'));
  const mac = doc.integrity;
  edit(doc);
  if (keepMac && doc.integrity === mac) doc.integrity = mac;
  return fromDoc(doc);
};

const cases: { name: string; text: () => string; code: ErrorCode; match?: RegExp }[] = [
  { name: 'empty file', text: () => '', code: 'STRAIT_ERR_MC_BROKER_INFO_ENCODING' },
  { name: 'not base64', text: () => 'this is not base64!', code: 'STRAIT_ERR_MC_BROKER_INFO_ENCODING', match: /unexpected character " "/ },
  { name: 'bad padding', text: () => 'abcde', code: 'STRAIT_ERR_MC_BROKER_INFO_ENCODING' },
  { name: 'mixed alphabets', text: () => 'ab-+', code: 'STRAIT_ERR_MC_BROKER_INFO_ENCODING' },
  { name: 'not JSON', text: () => Buffer.from('{nope').toString('base64'), code: 'STRAIT_ERR_MC_BROKER_INFO_JSON' },
  { name: 'JSON array', text: () => Buffer.from('[1,2]').toString('base64'), code: 'STRAIT_ERR_MC_BROKER_INFO_JSON', match: /an array/ },
  {
    name: 'missing brokerURL',
    text: () =>
      tamper((d) => {
        delete d.brokerURL;
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_FIELD',
    match: /brokerURL is missing/,
  },
  {
    name: 'unknown field',
    text: () =>
      tamper((d) => {
        d.extra = 1;
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_FIELD',
    match: /extra/,
  },
  {
    name: 'bad URL scheme',
    text: () =>
      tamper((d) => {
        d.brokerURL = 'ftp://x';
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_FIELD',
    match: /ftp/,
  },
  {
    name: 'missing PSK',
    text: () =>
      tamper((d) => {
        delete d.ipsecPSK;
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_FIELD',
    match: /ipsecPSK/,
  },
  {
    name: 'unknown component',
    text: () =>
      tamper((d) => {
        d.components = ['globalnet-x'];
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_FIELD',
  },
  {
    name: 'missing integrity',
    text: () =>
      tamper((d) => {
        delete d.integrity;
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_FIELD',
    match: /integrity/,
  },
  {
    name: 'changed PSK',
    text: () =>
      tamper((d) => {
        d.ipsecPSK.data.psk = generatePsk().toString('base64');
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_TAMPERED',
  },
  {
    name: 'changed URL',
    text: () =>
      tamper((d) => {
        d.brokerURL = 'unix:///evil.sock';
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_TAMPERED',
  },
  // version skew: a newer deploy-broker's file is refused as such before any field is read
  {
    name: 'a newer format version',
    text: () =>
      tamper((d) => {
        d.version = 2;
        d.brokerEndpoints = [];
      }),
    code: 'STRAIT_ERR_VERSION_UNSUPPORTED',
    match:
      /broker-info broker-info\.subm has format version 2, which this strait does not read \(it reads version 1; no version means 1\): a newer strait wrote it/,
  },
  {
    name: 'a version that is not an integer',
    text: () =>
      tamper((d) => {
        d.version = '1';
      }),
    code: 'STRAIT_ERR_VERSION_UNSUPPORTED',
    match: /"1".*positive integer/,
  },
  // the MAC covers the version: taking it out of a signed file is tampering
  {
    name: 'version removed',
    text: () =>
      tamper((d) => {
        delete d.version;
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_TAMPERED',
  },
  {
    name: 'changed token',
    text: () =>
      tamper((d) => {
        d.clientToken.data.token = Buffer.from('another-token-0123456').toString('base64');
      }),
    code: 'STRAIT_ERR_MC_BROKER_INFO_TAMPERED',
  },
];

for (const c of cases) {
  test(`broker info refused: ${c.name}`, () => {
    assert.throws(
      () => parseBrokerInfo(c.text(), 'broker-info.subm'),
      (err: unknown) => {
        assert.ok(isStraitError(err, c.code), `${c.name}: got ${(err as Error).message}`);
        if (c.match) assert.match((err as Error).message, c.match);
        assert.match((err as Error).message, /broker-info\.subm/);
        return true;
      },
    );
  });
}

test('a file with no version (signed without one) is read as version 1', () => {
  const i = info();
  const doc = toDoc(encodeBrokerInfo(i).replace(/-/g, '+').replace(/_/g, '/'));
  delete doc.version;
  delete doc.integrity;
  // the MAC as deploy-broker computes it (src/multicluster/control/clusterset/broker-info.ts): HKDF of the token, canonical JSON
  const canonical = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : v && typeof v === 'object'
        ? `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((v as Doc)[k])}`)
            .join(',')}}`
        : JSON.stringify(v);
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(i.clientToken), Buffer.alloc(0), 'strait broker-info v1', 32));
  doc.integrity = `hmac-sha256:${createHmac('sha256', key).update(canonical(doc)).digest('hex')}`;
  assert.deepEqual(parseBrokerInfo(fromDoc(doc)), i);
});

test('a short PSK is refused even with a valid MAC', () => {
  const text = encodeBrokerInfo(info({ ipsecPSK: Buffer.alloc(16, 7) }));
  assert.throws(
    () => parseBrokerInfo(text),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_BROKER_INFO_PSK') && /16 bytes/.test((err as Error).message),
  );
});

test('fuzz: 20k mutated broker-info files raise only StraitError', () => {
  const good = Buffer.from(encodeBrokerInfo(info()));
  let seed = 42;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  let accepted = 0;
  for (let i = 0; i < 20_000; i++) {
    const b = Buffer.from(good);
    const flips = 1 + rnd(4);
    for (let j = 0; j < flips; j++) b[rnd(b.length)] = rnd(256);
    const text = rnd(10) === 0 ? b.subarray(0, rnd(b.length)).toString('latin1') : b.toString('latin1');
    try {
      parseBrokerInfo(text);
      accepted++;
    } catch (err) {
      if (!isStraitError(err)) throw err;
    }
  }
  // a mutation that survives must have hit only padding-equivalent bits; almost none do
  assert.ok(accepted < 50, `accepted ${accepted}`);
});
