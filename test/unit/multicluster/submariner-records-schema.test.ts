// The records strait writes, validated with ajv against Submariner's own CRD schemas
// (test/fixtures/submariner-crds, transcribed from Submariner's repositories): the
// gateway's Endpoint and Gateway records as a real Gateway data plane reports them, the
// join's Cluster and Submariner resource, and the broker's Broker object. An object field a
// CRD does not declare is an error here (as the API server's strict field validation makes
// it), so a schema drift fails this test without a kube-apiserver. The Endpoint's addresses
// are real ones, never 0.0.0.0, and the Submariner resource carries package.json's version.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import {
  BROKER_NAME,
  BROKER_NAMESPACE,
  deployBroker,
  describeBroker,
  joinCluster,
  MC_KINDS as K,
  OPERATOR_NAMESPACE,
  publishGatewayRecords,
} from '../../../src/multicluster/control/clusterset/index.js';
import { Gateway, parseGatewayConfig } from '../../../src/multicluster/dataplane/gateway/index.js';
import { VERSION } from '../../../src/platform/cli-kit/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { isStraitError } from '../../../src/base/errors/index.js';
import { newTestStore } from '../../support/stores.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const fixtures = join(root, 'test', 'fixtures', 'submariner-crds');

/**
 * A CRD's structural schema as ajv's JSON Schema: x-kubernetes-int-or-string as integer or
 * string; an object with properties and without x-kubernetes-preserve-unknown-fields takes
 * no other field (the API server's strict field validation); other x-kubernetes-* markers
 * validate nothing here.
 */
function toJsonSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toJsonSchema);
  if (!s || typeof s !== 'object') return s;
  const src = s as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    if (k.startsWith('x-kubernetes-')) continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([p, ps]) => [p, toJsonSchema(ps)])) : toJsonSchema(v);
  }
  if (src['x-kubernetes-int-or-string'] === true) {
    delete out['type'];
    out['anyOf'] = [{ type: 'integer' }, { type: 'string' }];
  }
  if (src['type'] === 'object' && src['properties'] && src['x-kubernetes-preserve-unknown-fields'] !== true) out['additionalProperties'] = false;
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<string, ValidateFunction>();
for (const f of readdirSync(fixtures).filter((n) => n.endsWith('.yaml'))) {
  const crd = parse(readFileSync(join(fixtures, f), 'utf8')) as {
    spec: { group: string; names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: unknown } }[] };
  };
  for (const v of crd.spec.versions)
    validators.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, ajv.compile(toJsonSchema(v.schema.openAPIV3Schema) as object));
}

/** What is wrong with `o` by Submariner's CRD for its apiVersion and kind (empty: valid). */
function upstreamErrors(o: KubeObject): string[] {
  const v = validators.get(`${o.apiVersion}/${o.kind}`);
  if (!v) return [`${o.apiVersion} ${o.kind}: no Submariner CRD in test/fixtures/submariner-crds`];
  const sent = { ...o, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } };
  return v(sent) ? [] : (v.errors ?? []).map((e) => `${o.kind} ${o.metadata.name}: ${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

const gatewayConfig = (tunnel: Record<string, unknown>) => ({
  clusterId: 'cluster-a',
  name: 'gw-a1',
  psk: 'p'.repeat(32),
  localSubnets: ['10.1.0.0/16'],
  peers: [],
  tunnel,
});

test("the fixtures hold Submariner's CRDs for every record strait writes: Endpoint, Gateway, Cluster, Submariner, Broker", () => {
  assert.deepEqual([...validators.keys()].sort(), [
    'submariner.io/v1/Cluster',
    'submariner.io/v1/Endpoint',
    'submariner.io/v1/Gateway',
    'submariner.io/v1alpha1/Broker',
    'submariner.io/v1alpha1/Submariner',
  ]);
});

test('the Endpoint record publishes real addresses: private := tunnel.privateIP or the advertised one, public := tunnel.publicIP or the private one', () => {
  const rec = (tunnel: Record<string, unknown>) => new Gateway(parseGatewayConfig(gatewayConfig(tunnel))).endpointRecord();
  assert.deepEqual([rec({ privateIP: '172.16.1.5' }).endpointIP, rec({ privateIP: '172.16.1.5' }).publicIP], ['172.16.1.5', '172.16.1.5']);
  assert.deepEqual(
    [rec({ privateIP: '172.16.1.5', publicIP: '198.51.100.7' }).endpointIP, rec({ privateIP: '172.16.1.5', publicIP: '198.51.100.7' }).publicIP],
    ['172.16.1.5', '198.51.100.7'],
  );
  // listening on every address, nothing configured: the host's address, on both
  const open = rec({});
  assert.notEqual(open.endpointIP, '0.0.0.0');
  assert.equal(open.publicIP, open.endpointIP);
  // an explicit 0.0.0.0 is refused with the field and the value named
  for (const f of ['publicIP', 'privateIP']) {
    assert.throws(
      () => parseGatewayConfig(gatewayConfig({ [f]: '0.0.0.0' })),
      (err: unknown) => isStraitError(err, 'STRAIT_ERR_CONFIG_INVALID') && err.message.includes(`tunnel.${f}`) && err.message.includes('0.0.0.0'),
    );
  }
});

async function joinedAndPublished(local: ResourceStore, broker: ResourceStore, tunnel: Record<string, unknown>): Promise<void> {
  const info = await deployBroker(broker, { brokerURL: 'https://192.0.2.10:6443', cluster: 'cluster-a' });
  await joinCluster({
    broker,
    local,
    info,
    source: 'broker-info.subm',
    network: { clusterId: 'cluster-a', networkPlugin: 'generic', clusterCIDRs: ['10.1.0.0/16'], serviceCIDRs: ['100.1.0.0/16'] },
  });
  const gw = new Gateway(parseGatewayConfig(gatewayConfig(tunnel)));
  await publishGatewayRecords(
    local,
    broker,
    { endpoint: gw.endpointRecord(), gateway: gw.gatewayRecord(), connections: [] },
    VERSION,
    OPERATOR_NAMESPACE,
    'submariner',
  );
}

test("the join's and the gateway's records validate against Submariner's CRDs; the Endpoint has real addresses, the Submariner resource strait's version", async () => {
  const broker = newTestStore();
  const local = newTestStore();
  try {
    await joinedAndPublished(local, broker, { privateIP: '172.16.1.5' });
    const objs: KubeObject[] = [];
    for (const kind of [K.Cluster, K.Endpoint, K.Gateway, K.Submariner]) objs.push(...(await local.list(kind, { namespace: OPERATOR_NAMESPACE })).items);
    assert.deepEqual(objs.map((o) => o.kind).sort(), ['Cluster', 'Endpoint', 'Gateway', 'Submariner']);
    assert.deepEqual(objs.flatMap(upstreamErrors), []);
    const ep = objs.find((o) => o.kind === 'Endpoint')!.spec as { private_ip: string; public_ip: string; privateIPs?: string[]; publicIPs?: string[] };
    assert.deepEqual([ep.private_ip, ep.public_ip], ['172.16.1.5', '172.16.1.5']);
    const sub = objs.find((o) => o.kind === 'Submariner')!;
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    assert.equal((sub.spec as { version: string }).version, pkg.version);
    assert.equal((objs.find((o) => o.kind === 'Gateway')!.status as { version: string }).version, pkg.version);
  } finally {
    await broker.close();
    await local.close();
  }
});

test("deploy-broker writes the Broker object as Submariner's deploy-broker does; it validates, and show reads it", async () => {
  const broker = newTestStore();
  try {
    await deployBroker(broker, {
      brokerURL: 'https://192.0.2.10:6443',
      cluster: 'cluster-a',
      components: ['service-discovery', 'connectivity'],
      customDomains: ['example.org'],
    });
    const b = await broker.get(K.Broker, BROKER_NAME, BROKER_NAMESPACE);
    assert.ok(b, 'a Broker submariner-broker in submariner-k8s-broker');
    assert.equal(b.apiVersion, 'submariner.io/v1alpha1');
    assert.deepEqual(b.spec, { components: ['service-discovery', 'connectivity'], defaultCustomDomains: ['example.org'], globalnetEnabled: false });
    assert.deepEqual(upstreamErrors(b), []);
    const d = await describeBroker(broker);
    assert.deepEqual(
      [d.namespace, d.name, d.components, d.customDomains, d.globalnetEnabled],
      ['submariner-k8s-broker', 'submariner-broker', ['service-discovery', 'connectivity'], ['example.org'], false],
    );
    // show reads the Broker object (not the ConfigMap beside it)
    await broker.apply({ ...b, spec: { ...(b.spec as object), components: ['connectivity'] }, metadata: { ...b.metadata, resourceVersion: undefined } });
    assert.deepEqual((await describeBroker(broker)).components, ['connectivity']);
    // the validation is a real check: a field Submariner's Broker does not have, a wrong type
    const wrong = upstreamErrors({ ...b, spec: { components: 'connectivity', globalnet: true } });
    assert.ok(
      wrong.some((e) => /\/spec\/components must be array/.test(e)),
      wrong.join('\n'),
    );
    assert.ok(
      wrong.some((e) => /must NOT have additional properties .*globalnet/.test(e)),
      wrong.join('\n'),
    );
  } finally {
    await broker.close();
  }
});
