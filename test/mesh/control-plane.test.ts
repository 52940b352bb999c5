// SMCP flags, members, injection and the whole view: what `strait up`'s mesh resolves to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildMeshView, checkMesh, describeWorkload, findWorkload, sidecarConfigFor, type MeshView } from '../../src/mesh/control/index.js';
import type { KubeObject } from '../../src/platform/store/index.js';
import { dr, pa, pod, smcp, smmr, svc } from './fixtures.js';

const CP = 'istio-system';
const world = (extra: KubeObject[], flags: { mtls?: boolean; automtls?: boolean; cp?: boolean } = { mtls: false, automtls: false, cp: false }): MeshView =>
  buildMeshView([
    smcp(CP, flags),
    smmr(CP, ['mesh']),
    pod('mesh', 'echo-1', { labels: { app: 'echo' }, inject: 'annotation', ip: '10.1.0.10', sa: 'echo', port: 8080 }),
    pod('mesh', 'client', { inject: 'annotation', ip: '10.1.0.11' }),
    pod('mesh', 'outsider', { ip: '10.1.0.12' }),
    svc('mesh', 'echo', 8080, { clusterIP: '10.96.0.20' }),
    ...extra,
  ]);
const echo = (v: MeshView) => findWorkload(v, 'mesh', 'echo-1')!;
const client = (v: MeshView) => findWorkload(v, 'mesh', 'client')!;
const outboundMode = (v: MeshView) => describeWorkload(v, client(v)).outbound.find((r) => r.service === 'echo')!.mode;

test('SMCP: all three flags false → generated PERMISSIVE default, no DestinationRule, auto mTLS off', () => {
  const v = world([]);
  assert.equal(v.settings.autoMtls, false);
  assert.deepEqual(
    v.peerAuthentications.map((p) => `${p.metadata.namespace}/${p.metadata.name}:${p.spec?.mtls?.mode}`),
    [`${CP}/default:PERMISSIVE`],
  );
  assert.equal(v.destinationRules.length, 0);
  assert.equal(describeWorkload(v, echo(v)).inbound?.mode, 'PERMISSIVE');
  assert.equal(outboundMode(v), 'DISABLE');
});

test('SMCP: flags false, namespace objects alone decide (STRICT + ISTIO_MUTUAL)', () => {
  const v = world([pa('mesh', 'default', 'STRICT'), dr('mesh', 'default', 'echo', 'ISTIO_MUTUAL')]);
  assert.equal(describeWorkload(v, echo(v)).inbound?.mode, 'STRICT');
  assert.equal(outboundMode(v), 'ISTIO_MUTUAL');
});

test('SMCP: dataPlane.mtls true → STRICT default and ISTIO_MUTUAL "*.local" DestinationRule', () => {
  const v = world([], { mtls: true, automtls: false, cp: false });
  assert.equal(describeWorkload(v, echo(v)).inbound?.mode, 'STRICT');
  assert.deepEqual(
    v.destinationRules.map((d) => [d.metadata.namespace, d.spec?.host, d.spec?.trafficPolicy?.tls?.mode]),
    [[CP, '*.local', 'ISTIO_MUTUAL']],
  );
  assert.equal(outboundMode(v), 'ISTIO_MUTUAL');
  const desc = describeWorkload(v, echo(v));
  assert.equal(desc.inbound?.sources[0]?.generated, true);
});

test('SMCP: dataPlane.mtls true, a namespace PERMISSIVE overrides the mesh STRICT', () => {
  const v = world([pa('mesh', 'default', 'PERMISSIVE')], { mtls: true });
  assert.equal(describeWorkload(v, echo(v)).inbound?.mode, 'PERMISSIVE');
});

test('SMCP: automtls unset → on (Istio default): ISTIO_MUTUAL toward a sidecar', () => {
  const v = world([], {});
  assert.equal(v.settings.autoMtls, true);
  assert.equal(outboundMode(v), 'ISTIO_MUTUAL');
});

test('SMCP: a user PeerAuthentication named like the generated one is replaced by it', () => {
  const v = world([pa(CP, 'default', 'STRICT')]);
  assert.equal(describeWorkload(v, echo(v)).inbound?.mode, 'PERMISSIVE');
});

test('no SMCP: every namespace is a member, auto mTLS on, nothing generated', () => {
  const v = buildMeshView([pod('a', 'p', { inject: 'label' })]);
  assert.equal(v.settings.implicit, true);
  assert.ok(v.members.has('a'));
  assert.equal(v.peerAuthentications.length, 0);
  assert.equal(findWorkload(v, 'a', 'p')?.sidecar, true);
});

test('injection: label wins over annotation; only in member namespaces', () => {
  const v = buildMeshView([
    smcp(CP, {}),
    smmr(CP, ['mesh']),
    pod('mesh', 'ann', { inject: 'annotation' }),
    pod('mesh', 'lbl', { inject: 'label' }),
    pod('mesh', 'no', { inject: 'label-false' }),
    pod('other', 'nonmember', { inject: 'label' }),
  ]);
  assert.equal(findWorkload(v, 'mesh', 'ann')?.sidecar, true);
  assert.equal(findWorkload(v, 'mesh', 'lbl')?.sidecar, true);
  assert.equal(findWorkload(v, 'mesh', 'no')?.sidecar, false, 'label "false" wins over annotation "true"');
  assert.equal(findWorkload(v, 'other', 'nonmember')?.sidecar, false);
});

test('a Deployment without pods stands in for its pods', () => {
  const v = buildMeshView([
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'echo', namespace: 'mesh' },
      spec: {
        template: {
          metadata: { labels: { app: 'echo' }, annotations: { 'sidecar.istio.io/inject': 'true' } },
          spec: { containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] },
        },
      },
    },
  ]);
  const w = findWorkload(v, 'mesh', 'echo');
  assert.equal(w?.sidecar, true);
  assert.deepEqual(w?.ports, [8080]);
});

const findings = (v: MeshView) =>
  checkMesh(v)
    .map((f) => f.rule)
    .sort();

test('check: STRICT namespace with an out-of-mesh client and a plaintext in-mesh client', () => {
  const v = world([pa('mesh', 'default', 'STRICT')]);
  assert.deepEqual(findings(v), ['STRICT_OUT_OF_MESH_CLIENT', 'STRICT_PLAINTEXT_CLIENT']);
  assert.match(checkMesh(v).find((f) => f.rule === 'STRICT_OUT_OF_MESH_CLIENT')!.message, /mesh\/outsider/);
});

test('check: ISTIO_MUTUAL toward a workload without a sidecar', () => {
  const v = world([pod('mesh', 'plain-1', { labels: { app: 'plain' }, port: 80 }), svc('mesh', 'plain', 80), dr('mesh', 'plain', 'plain', 'ISTIO_MUTUAL')]);
  assert.deepEqual(findings(v), ['ISTIO_MUTUAL_WITHOUT_SIDECAR']);
});

test('check: ISTIO_MUTUAL toward a DISABLE workload', () => {
  const v = world([pa('mesh', 'default', 'DISABLE'), dr('mesh', 'default', 'echo', 'ISTIO_MUTUAL')]);
  assert.deepEqual(findings(v), ['ISTIO_MUTUAL_TO_DISABLE']);
});

test('check: the STRICT setup of docs/mesh.md (STRICT + ISTIO_MUTUAL) warns only about outsiders', () => {
  const v = world([pa('mesh', 'default', 'STRICT'), dr('mesh', 'default', '*.mesh.svc.cluster.local', 'ISTIO_MUTUAL')]);
  assert.deepEqual(findings(v), ['STRICT_OUT_OF_MESH_CLIENT']);
});

test('check: shadowed policy, port-level without selector, selector in root, policy outside members, injection outside members', () => {
  const v = world([
    pa('mesh', 'a', 'PERMISSIVE', { t: 1 }),
    pa('mesh', 'b', 'PERMISSIVE', { t: 2, ports: { 8080: 'STRICT' } }),
    pa(CP, 'sel', 'STRICT', { selector: { app: 'echo' } }),
    pa('third', 'default', 'STRICT'),
    pod('third', 'wants', { inject: 'label' }),
  ]);
  assert.deepEqual(findings(v), [
    'INJECT_OUTSIDE_MEMBERS',
    'PEER_AUTHENTICATION_SHADOWED',
    'POLICY_OUTSIDE_MEMBERS',
    'PORT_LEVEL_WITHOUT_SELECTOR',
    'SELECTOR_IN_ROOT_NAMESPACE',
  ]);
});

test('sidecar config: per-port inbound, ClusterIP and per-endpoint outbound with the server SPIFFE ID', () => {
  const v = world([pa('mesh', 'echo', 'STRICT', { selector: { app: 'echo' }, ports: { 8080: 'PERMISSIVE' } })], { automtls: true });
  const cfgEcho = sidecarConfigFor(v, echo(v));
  assert.equal(cfgEcho.inbound.defaultMode, 'STRICT');
  assert.equal(cfgEcho.inbound.ports?.['8080'], 'PERMISSIVE');
  const cfg = sidecarConfigFor(v, client(v));
  assert.deepEqual(cfg.outbound.destinations?.['10.96.0.20:8080'], { mode: 'ISTIO_MUTUAL', sans: ['spiffe://cluster.local/ns/mesh/sa/echo'] });
  assert.deepEqual(cfg.outbound.destinations?.['10.1.0.10:8080'], { mode: 'ISTIO_MUTUAL', sans: ['spiffe://cluster.local/ns/mesh/sa/echo'] });
  assert.deepEqual(cfg.outbound.default, { mode: 'DISABLE' });
});

test('describe: a Service with 53/UDP and 53/TCP (kube-dns) is one outbound row, the TCP port (sidecars carry TCP only)', () => {
  const dns: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kube-dns', namespace: 'kube-system' },
    spec: {
      clusterIP: '10.96.0.10',
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, protocol: 'TCP' },
        { name: 'metrics', port: 9153 },
      ],
    },
  };
  const rows = describeWorkload(world([dns]), client(world([dns])))
    .outbound.filter((r) => r.service === 'kube-dns')
    .map((r) => r.port);
  assert.deepEqual(rows, [53, 9153]);
});
