// The clusterset IP of a ClusterSetIP ServiceImport: the derived Service (its name, its shape,
// the ports each cluster's slice offers behind it), and the import controller writing it in a
// cluster whose store allocates ClusterIPs from the service CIDR (the local world's admission),
// with spec.ips, the slices kube-proxy reads, DNS answers, and the cleanup on unexport.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  acceptedPorts,
  ANN_DERIVED_SERVICE,
  aggregate,
  clustersetIPsOf,
  derivedPorts,
  derivedService,
  derivedServiceName,
  LABEL_K8S_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  MC_KINDS as K,
  LABEL_MIRROR,
  ANN_MIRROR_OF,
  MulticlusterAgent,
  OPERATOR_NAMESPACE,
} from '../../../src/multicluster/control/clusterset/index.js';
import { ClustersetZone, ZoneSource } from '../../../src/multicluster/control/clusterset-dns/index.js';
import { openEmbeddedStore, type KubeObject, type ResourceStore } from '../../../src/platform/store/index.js';
import { clusterIpAdmission, serviceViews } from '../../../src/world/supervisor/index.js';
import { newTestStore } from '../../support/stores.js';

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const SERVICE_CIDR_A = '100.1.0.0/16';
const allocatingStore = (cidr: string): ResourceStore =>
  openEmbeddedStore({ dir: mkdtempSync(join(tmpdir(), 'strait-vip-store-')), admit: clusterIpAdmission(cidr) });

type Port = { name?: string; protocol: string; port: number; targetPort?: number };
const service = (name: string, ip: string, ports: Port[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { type: 'ClusterIP', clusterIP: ip, selector: { app: name }, ports, ...extra },
});
const exportOf = (name: string): KubeObject => ({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name, namespace: 'default' } });

test("the derived Service's name is the mcs-api controllers' and Cilium's: derived- and 10 base32hex characters of SHA-256(ns/name)", () => {
  // golden values: Cilium's fixture pkg/clustermesh/mcsapi/testdata/endpointslice-mirror/base
  // (Service default/full, derived Service derived-9jo8ljlgl7), and Go's
  // base32.HexEncoding.WithPadding(NoPadding) of sha256("default/echo") (go run, by hand)
  const table: [string, string, string][] = [
    ['default', 'full', 'derived-9jo8ljlgl7'],
    ['default', 'echo', 'derived-c2k9ekgkd9'],
  ];
  for (const [ns, name, want] of table) assert.equal(derivedServiceName(ns, name), want, `${ns}/${name}`);
  assert.match(derivedServiceName('a-very-long-namespace-name', 'and-a-long-service-name'), /^derived-[0-9a-v]{10}$/);
});

test('the derived Service: ClusterIP type without selector or address, owned by the ServiceImport, the import ports, affinity and families', () => {
  const agg = aggregate([
    {
      cluster: 'cluster-b',
      created: '2024-01-01T00:00:00Z',
      type: 'ClusterSetIP',
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'dns', protocol: 'UDP', port: 53 },
      ],
      endpoints: [{ addresses: ['100.2.0.10'] }],
      props: { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 30 } }, ipFamilies: ['IPv4'], internalTrafficPolicy: 'Local' },
    },
  ])!;
  const svc = derivedService({ namespace: 'shop', name: 'cart', importUid: 'uid-1', importApiVersion: 'multicluster.x-k8s.io/v1alpha1', agg });
  assert.deepEqual(svc, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: derivedServiceName('shop', 'cart'),
      namespace: 'shop',
      labels: { 'multicluster.kubernetes.io/service-name': 'cart', 'app.kubernetes.io/managed-by': 'strait-multicluster' },
      ownerReferences: [{ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', name: 'cart', uid: 'uid-1', controller: true }],
    },
    spec: {
      type: 'ClusterIP',
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'dns', protocol: 'UDP', port: 53 },
      ],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 30 } },
    },
  });
  // the endpoints are other clusters' ClusterIPs, never on this cluster's nodes: a Local
  // internal traffic policy would leave the VIP without endpoints, so it is not copied
  assert.equal((svc.spec as Record<string, unknown>)['internalTrafficPolicy'], undefined);
  const dual = derivedService({
    namespace: 'shop',
    name: 'cart',
    importUid: 'u',
    importApiVersion: 'v',
    agg: { ...agg, props: { ipFamilies: ['IPv6', 'IPv4'] } },
  });
  assert.deepEqual(
    [(dual.spec as Record<string, unknown>)['ipFamilies'], (dual.spec as Record<string, unknown>)['ipFamilyPolicy']],
    [['IPv6', 'IPv4'], 'PreferDualStack'],
  );
});

test('ports: a cluster offers behind the clusterset IP only the ports the import took from it; unnamed ports of a multi-port union are left out', () => {
  const imp = [{ name: 'tcp', protocol: 'TCP', port: 42 }];
  const table: { name: string; cluster: Port[]; want: Port[] }[] = [
    { name: 'the same port', cluster: [{ name: 'tcp', protocol: 'TCP', port: 42 }], want: [{ name: 'tcp', protocol: 'TCP', port: 42 }] },
    { name: 'same name, another number (oldest wins)', cluster: [{ name: 'tcp', protocol: 'TCP', port: 4242 }], want: [] },
    { name: 'same name, another protocol', cluster: [{ name: 'tcp', protocol: 'UDP', port: 42 }], want: [] },
    {
      name: 'an added port kept, a clashing one not',
      cluster: [
        { name: 'tcp', protocol: 'TCP', port: 4242 },
        { name: 'tcp2', protocol: 'TCP', port: 43 },
      ],
      want: [],
    },
  ];
  for (const t of table) assert.deepEqual(acceptedPorts(t.cluster, imp), t.want, t.name);
  assert.deepEqual(
    acceptedPorts(
      [
        { name: 'tcp', protocol: 'TCP', port: 42 },
        { name: 'tcp2', protocol: 'TCP', port: 43 },
      ],
      [...imp, { name: 'tcp2', protocol: 'TCP', port: 43 }],
    ),
    [
      { name: 'tcp', protocol: 'TCP', port: 42 },
      { name: 'tcp2', protocol: 'TCP', port: 43 },
    ],
  );
  assert.deepEqual(derivedPorts([{ protocol: 'TCP', port: 80 }]), { ports: [{ protocol: 'TCP', port: 80 }], leftOut: [] });
  assert.deepEqual(
    derivedPorts([
      { protocol: 'TCP', port: 80 },
      { name: 'b', protocol: 'TCP', port: 81 },
    ]),
    { ports: [{ name: 'b', protocol: 'TCP', port: 81 }], leftOut: [{ protocol: 'TCP', port: 80 }] },
  );
});

test("spec.ips and ipFamilies are the derived Service's ClusterIPs, one per family, in the cluster's order", () => {
  const svc = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'd' }, spec });
  const table: { name: string; spec: Record<string, unknown>; want: { ips: string[]; ipFamilies: string[] } }[] = [
    { name: 'not allocated', spec: {}, want: { ips: [], ipFamilies: [] } },
    { name: 'clusterIP only', spec: { clusterIP: '100.1.0.11' }, want: { ips: ['100.1.0.11'], ipFamilies: ['IPv4'] } },
    {
      name: 'dual stack, IPv6 first',
      spec: { clusterIP: 'fd00::a', clusterIPs: ['fd00::a', '100.1.0.11'] },
      want: { ips: ['fd00::a', '100.1.0.11'], ipFamilies: ['IPv6', 'IPv4'] },
    },
    { name: 'headless', spec: { clusterIP: 'None', clusterIPs: ['None'] }, want: { ips: [], ipFamilies: [] } },
    { name: 'garbage', spec: { clusterIPs: ['not-an-ip', 7] }, want: { ips: [], ipFamilies: [] } },
  ];
  for (const t of table) assert.deepEqual(clustersetIPsOf(svc(t.spec)), t.want, t.name);
  assert.deepEqual(clustersetIPsOf(undefined), { ips: [], ipFamilies: [] });
});

test('import in a cluster that allocates ClusterIPs: derived Service in its service CIDR, spec.ips, slices behind it, DNS answers the VIP; unexport removes them', async () => {
  const broker = newTestStore();
  const a = allocatingStore(SERVICE_CIDR_A);
  const b = allocatingStore('100.2.0.0/16');
  const c = allocatingStore('100.3.0.0/16');
  const agents = [
    new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker }),
    new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker }),
    new MulticlusterAgent({ clusterId: 'cluster-c', local: c, broker }),
  ];
  for (const g of agents) g.start();
  const zone = new ClustersetZone('cluster-a');
  const source = new ZoneSource(a, zone);
  source.start();
  const derived = derivedServiceName('default', 'hello');
  try {
    // cluster-b exports hello with tcp/42; cluster-c later with the same port name on 4242 (a
    // port conflict: the oldest, b's, wins) and an added port tcp2/4343
    await b.apply(service('hello', '100.2.0.42', [{ name: 'tcp', protocol: 'TCP', port: 42 }]));
    await b.apply(exportOf('hello'));
    const imp = await waitFor('spec.ips in cluster-a', async () => {
      const i = await a.get(K.ServiceImport, 'hello', 'default');
      return ((i?.spec as { ips?: string[] } | undefined)?.ips?.length ?? 0) > 0 && i;
    });
    const svc = await a.get(K.Service, derived, 'default');
    assert.ok(svc, 'the derived Service exists');
    const clusterIP = (svc.spec as { clusterIP: string }).clusterIP;
    assert.match(clusterIP, /^100\.1\.\d+\.\d+$/, `the clusterset IP ${clusterIP} is in cluster-a's service CIDR ${SERVICE_CIDR_A}`);
    assert.deepEqual((imp.spec as { ips: string[] }).ips, [clusterIP]);
    assert.deepEqual((imp.spec as { ipFamilies: string[] }).ipFamilies, ['IPv4']);
    assert.equal(imp.metadata.annotations?.[ANN_DERIVED_SERVICE], derived);
    assert.deepEqual(svc.metadata.ownerReferences, [
      { apiVersion: K.ServiceImport.apiVersion, kind: 'ServiceImport', name: 'hello', uid: imp.metadata.uid!, controller: true },
    ]);
    assert.equal((svc.spec as { selector?: unknown }).selector, undefined, 'no selector: its endpoints are the imported slices');
    // cluster-b allocates its own, another address for the same import
    const impB = await waitFor('spec.ips in cluster-b', async () => {
      const i = await b.get(K.ServiceImport, 'hello', 'default');
      return ((i?.spec as { ips?: string[] } | undefined)?.ips?.length ?? 0) > 0 && i;
    });
    assert.match((impB.spec as { ips: string[] }).ips[0]!, /^100\.2\./);

    await c.apply(
      service('hello', '100.3.0.42', [
        { name: 'tcp', protocol: 'TCP', port: 4242 },
        { name: 'tcp2', protocol: 'TCP', port: 4343 },
      ]),
    );
    await c.apply(exportOf('hello'));
    await waitFor('both clusters imported in cluster-a, and the added port on the derived Service', async () => {
      const i = await a.get(K.ServiceImport, 'hello', 'default');
      const s = await a.get(K.Service, derived, 'default');
      return (
        (i?.status as { clusters?: unknown[] } | undefined)?.clusters?.length === 2 &&
        ((s?.spec as { ports?: unknown[] } | undefined)?.ports?.length ?? 0) === 2
      );
    });
    const slices = (await a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_K8S_SERVICE_NAME}=${derived}` })).items;
    const byCluster = new Map(slices.map((s) => [s.metadata.labels?.[LABEL_SOURCE_CLUSTER], s]));
    assert.deepEqual([...byCluster.keys()].sort(), ['cluster-b', 'cluster-c'], 'both imported slices are behind the derived Service');
    assert.deepEqual(byCluster.get('cluster-b')?.['ports'], [{ name: 'tcp', protocol: 'TCP', port: 42 }]);
    assert.deepEqual(byCluster.get('cluster-c')?.['ports'], [{ name: 'tcp2', protocol: 'TCP', port: 4343 }], "cluster-c's tcp/4242 lost to b's tcp/42");
    // what the world's service proxy makes of them: VIP:42 only to b, VIP:4343 only to c
    const svcNow = (await a.get(K.Service, derived, 'default'))!;
    const views = serviceViews([svcNow], slices);
    assert.deepEqual(views.refused, []);
    const proxied = views.proxy.find((p) => p.name === derived)!;
    assert.equal(proxied.clusterIP, clusterIP);
    assert.deepEqual(
      proxied.ports.map((p) => [p.port, p.endpoints]),
      [
        [42, [{ ip: '100.2.0.42', port: 42 }]],
        [4343, [{ ip: '100.3.0.42', port: 4343 }]],
      ],
    );
    // clusterset DNS answers the clusterset IP; a cluster's own name still that cluster's ClusterIP
    await waitFor('DNS answers the VIP', async () => zone.resolve('hello.default.svc.clusterset.local', 1).answers[0]?.address === clusterIP);
    assert.deepEqual(
      zone.resolve('hello.default.svc.clusterset.local', 1).answers.map((r) => r.address),
      [clusterIP],
    );
    assert.deepEqual(
      zone.resolve('cluster-c.hello.default.svc.clusterset.local', 1).answers.map((r) => r.address),
      ['100.3.0.42'],
    );

    // a derived Service deleted by hand comes back (with an address again)
    await a.delete(K.Service, derived, 'default');
    await waitFor('derived Service recreated', async () => (await a.get(K.Service, derived, 'default')) !== undefined);

    // unexport everywhere: the ServiceImport, its slices and its derived Service go
    await b.delete(K.ServiceExport, 'hello', 'default');
    await c.delete(K.ServiceExport, 'hello', 'default');
    await waitFor('import gone in cluster-a', async () => (await a.get(K.ServiceImport, 'hello', 'default')) === undefined);
    await waitFor('derived Service gone in cluster-a', async () => (await a.get(K.Service, derived, 'default')) === undefined);
    await waitFor('derived Service gone in cluster-b', async () => (await b.get(K.Service, derived, 'default')) === undefined);
    assert.deepEqual((await a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_K8S_SERVICE_NAME}=${derived}` })).items, []);
    await waitFor('NXDOMAIN', async () => zone.resolve('hello.default.svc.clusterset.local', 1).rcode === 3);
  } finally {
    source.stop();
    for (const g of agents) await g.stop();
    await Promise.all([broker.close(), a.close(), b.close(), c.close()]);
  }
});

test('headless imports get no clusterset IP; a ClusterSetIP import turned headless loses its derived Service; clustersetIP: false allocates none', async () => {
  const broker = newTestStore();
  const a = allocatingStore(SERVICE_CIDR_A);
  const b = allocatingStore('100.2.0.0/16');
  const off = allocatingStore('100.4.0.0/16');
  const agents = [
    new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker }),
    new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker }),
    new MulticlusterAgent({ clusterId: 'cluster-d', local: off, broker, clustersetIP: false }),
  ];
  for (const g of agents) g.start();
  const derived = derivedServiceName('default', 'web');
  try {
    await b.apply(service('web', '100.2.0.80', [{ name: 'http', protocol: 'TCP', port: 80 }]));
    await b.apply(exportOf('web'));
    await waitFor('VIP in cluster-a', async () => (await a.get(K.Service, derived, 'default')) !== undefined);
    const impOff = await waitFor('import in cluster-d', async () =>
      a.get(K.ServiceImport, 'web', 'default').then(() => off.get(K.ServiceImport, 'web', 'default')),
    );
    await agents[2]!.idle();
    assert.equal(await off.get(K.Service, derived, 'default'), undefined, 'no derived Service with clustersetIP: false');
    assert.equal((impOff.spec as { ips?: unknown }).ips, undefined);
    assert.equal(
      (await off.list(K.EndpointSlice, { namespace: 'default', labelSelector: LABEL_K8S_SERVICE_NAME })).items.length,
      0,
      'imported slices are not behind a Service',
    );

    // the Service becomes headless: the import turns Headless, the derived Service and spec.ips go
    await b.delete(K.Service, 'web', 'default');
    await b.apply(service('web', 'None', [{ name: 'http', protocol: 'TCP', port: 80 }]));
    await waitFor('derived Service gone', async () => (await a.get(K.Service, derived, 'default')) === undefined);
    const imp = await waitFor('headless import', async () => {
      const i = await a.get(K.ServiceImport, 'web', 'default');
      return (i?.spec as { type?: string } | undefined)?.type === 'Headless' && i;
    });
    assert.equal((imp.spec as { ips?: unknown }).ips, undefined, 'no spec.ips for a headless import');
    assert.equal(imp.metadata.annotations?.[ANN_DERIVED_SERVICE], undefined);
  } finally {
    for (const g of agents) await g.stop();
    await Promise.all([broker.close(), a.close(), b.close(), off.close()]);
  }
});

test('the clusterset IP routes only to healthy exporting clusters: one whose tunnel is down or whose backends are gone is not ready behind it, and comes back', async () => {
  const broker = newTestStore();
  const a = allocatingStore(SERVICE_CIDR_A);
  const b = allocatingStore('100.2.0.0/16');
  const c = allocatingStore('100.3.0.0/16');
  const agents = [
    new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker }),
    new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker }),
    new MulticlusterAgent({ clusterId: 'cluster-c', local: c, broker }),
  ];
  for (const g of agents) g.start();
  const zone = new ClustersetZone('cluster-a');
  const source = new ZoneSource(a, zone);
  source.start();
  const derived = derivedServiceName('default', 'hello');
  // cluster-a's active gateway and its connections, as the gateway daemon publishes them
  const gatewayStatus = (b: string, c: string) => ({
    node: 'cluster-a-gw',
    haStatus: 'active',
    connections: [
      { gateway: 'cluster-a-gw', cluster: 'cluster-b', remoteIP: '198.51.100.2', status: b },
      { gateway: 'cluster-a-gw', cluster: 'cluster-c', remoteIP: '198.51.100.3', status: c },
    ],
  });
  const gw = await a.apply({ apiVersion: K.Gateway.apiVersion, kind: 'Gateway', metadata: { name: 'cluster-a-gw', namespace: OPERATOR_NAMESPACE } });
  const setGateway = (b: string, c: string) => a.updateStatus({ ...gw, metadata: { ...gw.metadata, resourceVersion: undefined }, status: gatewayStatus(b, c) });
  await setGateway('connected', 'connected');
  // a Service's own EndpointSlice (what the cluster's endpoint controller writes)
  const ownSlice = (ip: string, ready: boolean): KubeObject => ({
    apiVersion: K.EndpointSlice.apiVersion,
    kind: 'EndpointSlice',
    metadata: { name: 'hello-own', namespace: 'default', labels: { 'kubernetes.io/service-name': 'hello' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready } }],
    ports: [{ name: 'tcp', protocol: 'TCP', port: 8042 }],
  });
  /** what cluster-a's service proxy programs for the clusterset IP's port 42 */
  const routed = async (): Promise<string[]> => {
    const svc = await a.get(K.Service, derived, 'default');
    const slices = (await a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_K8S_SERVICE_NAME}=${derived}` })).items;
    if (!svc) return [];
    const p = serviceViews([svc], slices)
      .proxy.find((x) => x.name === derived)
      ?.ports.find((x) => x.port === 42);
    return (p?.endpoints ?? []).map((e) => e.ip).sort();
  };
  const dns = (name: string): string[] => zone.resolve(`${name}.default.svc.clusterset.local`, 1).answers.map((r) => r.address!);
  const routedIs = async (want: string[]): Promise<boolean> => JSON.stringify(await routed()) === JSON.stringify(want);
  try {
    for (const [store, ip, podIp] of [
      [b, '100.2.0.42', '10.2.0.5'],
      [c, '100.3.0.42', '10.3.0.5'],
    ] as const) {
      await store.apply(ownSlice(podIp, true));
      await store.apply(service('hello', ip, [{ name: 'tcp', protocol: 'TCP', port: 42 }]));
      await store.apply(exportOf('hello'));
    }
    await waitFor('both clusters behind the clusterset IP', () => routedIs(['100.2.0.42', '100.3.0.42']));
    const vip = ((await a.get(K.ServiceImport, 'hello', 'default'))!.spec as { ips: string[] }).ips[0]!;
    await waitFor('DNS answers the VIP', async () => dns('hello')[0] === vip);

    // cluster-c's tunnel goes down: only cluster-b is routed to, the name still answers the VIP
    // (a healthy cluster is behind it), cluster-c's own name answers nothing
    await setGateway('connected', 'error');
    await waitFor('cluster-c not routed to while its tunnel is down', () => routedIs(['100.2.0.42']));
    assert.deepEqual(dns('hello'), [vip]);
    assert.deepEqual(dns('cluster-c.hello'), []);
    const cSlice = (await a.get(K.EndpointSlice, 'hello.cluster-c', 'default'))!;
    assert.deepEqual(cSlice['endpoints'], [{ addresses: ['100.3.0.42'], conditions: { ready: false } }], "cluster-c's endpoint is kept, not ready");

    // cluster-b's backends are gone (its Service's slice lists no ready endpoint): nothing is routed, DNS answers nothing
    await b.update(ownSlice('10.2.0.5', false));
    await waitFor('cluster-b not routed to without a ready backend', () => routedIs([]));
    await waitFor('the name answers nothing with no healthy cluster behind it', async () => dns('hello').length === 0);
    assert.deepEqual(dns('cluster-b.hello'), []);

    // both come back
    await b.update(ownSlice('10.2.0.5', true));
    await setGateway('connected', 'connected');
    await waitFor('both routed again', () => routedIs(['100.2.0.42', '100.3.0.42']));
    await waitFor('DNS answers the VIP again', async () => dns('hello')[0] === vip);
    assert.deepEqual(dns('cluster-c.hello'), ['100.3.0.42']);
  } finally {
    source.stop();
    for (const g of agents) await g.stop();
    await Promise.all([broker.close(), a.close(), b.close(), c.close()]);
  }
});

test("an exporting cluster's own backends stand behind its clusterset IP as mirrors of its Service's slices (one translation on the client's node), not its ClusterIP; they follow the pods and go with the export", async () => {
  const broker = newTestStore();
  const a = allocatingStore(SERVICE_CIDR_A);
  const b = allocatingStore('100.2.0.0/16');
  const agents = [new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker }), new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker })];
  for (const g of agents) g.start();
  const zone = new ClustersetZone('cluster-a');
  const source = new ZoneSource(a, zone);
  source.start();
  const derived = derivedServiceName('default', 'hello');
  const ownSlice = (name: string, ips: string[]): KubeObject => ({
    apiVersion: K.EndpointSlice.apiVersion,
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': 'hello', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
    },
    addressType: 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'a-wk' })),
    ports: [
      { name: 'tcp', protocol: 'TCP', port: 8042 },
      { name: 'udp', protocol: 'UDP', port: 8042 },
    ],
  });
  const ports = [
    { name: 'tcp', protocol: 'TCP', port: 42, targetPort: 8042 },
    { name: 'udp', protocol: 'UDP', port: 42, targetPort: 8042 },
  ];
  /** cluster-a's service proxy table for the clusterset IP: port -> endpoints */
  const routed = async (): Promise<string> => {
    const svc = await a.get(K.Service, derived, 'default');
    if (!svc) return '';
    const slices = (await a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_K8S_SERVICE_NAME}=${derived}` })).items;
    const p = serviceViews([svc], slices).proxy.find((x) => x.name === derived);
    return JSON.stringify(p?.ports.map((x) => [x.protocol, x.port, x.endpoints.map((e) => `${e.ip}:${e.port}`).sort()]));
  };
  try {
    await a.apply(ownSlice('hello-abcde', ['10.1.0.5']));
    await a.apply(service('hello', '100.1.0.42', ports));
    await a.apply(exportOf('hello'));
    await b.apply(service('hello', '100.2.0.42', ports));
    await b.apply(exportOf('hello'));
    const want = (aIps: string[]) =>
      JSON.stringify([
        ['TCP', 42, [...aIps.map((ip) => `${ip}:8042`), '100.2.0.42:42'].sort()],
        ['UDP', 42, [...aIps.map((ip) => `${ip}:8042`), '100.2.0.42:42'].sort()],
      ]);
    await waitFor("cluster-a's backends and cluster-b's ClusterIP behind the clusterset IP", async () => (await routed()) === want(['10.1.0.5']));
    const mirror = (await a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_MIRROR}=true` })).items;
    assert.deepEqual(
      mirror.map((m) => [m.metadata.name, m.metadata.annotations?.[ANN_MIRROR_OF], m.metadata.labels?.[LABEL_K8S_SERVICE_NAME]]),
      [[`${derived}.hello-abcde`, 'hello-abcde', derived]],
    );
    assert.equal(mirror[0]?.metadata.labels?.[LABEL_SOURCE_CLUSTER], undefined, 'a mirror is no MCS slice');
    const mcsA = (await a.get(K.EndpointSlice, 'hello.cluster-a', 'default'))!;
    assert.equal(mcsA.metadata.labels?.[LABEL_K8S_SERVICE_NAME], undefined, "cluster-a's own ClusterIP is not behind its clusterset IP");
    await waitFor('DNS', async () => zone.resolve('cluster-a.hello.default.svc.clusterset.local', 1).answers.length > 0);
    assert.deepEqual(
      zone.resolve('cluster-a.hello.default.svc.clusterset.local', 1).answers.map((r) => r.address),
      ['100.1.0.42'],
      "cluster-a's name still answers its ClusterIP",
    );
    // cluster-b imports cluster-a as its ClusterIP (through the tunnel), not the mirrors
    await waitFor("cluster-b routes to cluster-a's ClusterIP", async () => {
      const svc = await b.get(K.Service, derived, 'default');
      const slices = (await b.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_K8S_SERVICE_NAME}=${derived}` })).items;
      const p = svc && serviceViews([svc], slices).proxy.find((x) => x.name === derived)?.ports[0];
      // its own backends are mirrored there; cluster-a stands behind it as its ClusterIP
      return JSON.stringify(p?.endpoints.map((e) => e.ip).sort()) === JSON.stringify(['100.1.0.42']);
    });

    // the pods change: the mirror follows; a second slice gets its own mirror
    await a.update(ownSlice('hello-abcde', ['10.1.0.6']));
    await a.apply(ownSlice('hello-fghij', ['10.1.0.7']));
    await waitFor('the mirrors follow the pods', async () => (await routed()) === want(['10.1.0.6', '10.1.0.7']));

    // unexported in cluster-a: its mirrors go, cluster-b stays
    await a.delete(K.ServiceExport, 'hello', 'default');
    await waitFor('only cluster-b behind the clusterset IP', async () => (await routed()) === want([]));
    assert.deepEqual((await a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_MIRROR}=true` })).items, []);
  } finally {
    source.stop();
    for (const g of agents) await g.stop();
    await Promise.all([broker.close(), a.close(), b.close()]);
  }
});
