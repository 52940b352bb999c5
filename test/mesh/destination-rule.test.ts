// Outbound TLS resolution: DestinationRule selection as Istio does it, then auto mTLS.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostMatches, resolveOutbound, resolveShortname, type DestinationRule, type EndpointFacts } from '../../src/mesh/control/index.js';
import { dr } from './fixtures.js';

const ROOT = 'istio-system';
const ECHO = { host: 'echo.mesh.svc.cluster.local', namespace: 'mesh', port: 8080 };
const SIDECAR: EndpointFacts = { sidecar: true, inboundMode: 'PERMISSIVE' };

const cases: {
  name: string;
  rules: DestinationRule[];
  client?: string;
  dest?: typeof ECHO;
  ep?: EndpointFacts;
  auto?: boolean;
  mode: string;
  rule?: string;
  reason?: RegExp;
}[] = [
  {
    name: "short host is resolved in the rule's namespace",
    rules: [dr('mesh', 'r', 'echo', 'ISTIO_MUTUAL')],
    ep: { sidecar: false },
    auto: false,
    mode: 'ISTIO_MUTUAL',
    rule: 'mesh/r',
  },
  {
    name: "a short host in the client's namespace names a service there, not the destination",
    rules: [dr('client', 'r', 'echo', 'ISTIO_MUTUAL')],
    auto: false,
    mode: 'DISABLE',
    reason: /no destination rule/,
  },
  { name: '"*" matches every host', rules: [dr(ROOT, 'all', '*', 'ISTIO_MUTUAL')], auto: false, mode: 'ISTIO_MUTUAL', rule: `${ROOT}/all` },
  {
    name: '"*.mesh.svc.cluster.local" matches services of mesh',
    rules: [dr('client', 'w', '*.mesh.svc.cluster.local', 'ISTIO_MUTUAL')],
    auto: false,
    mode: 'ISTIO_MUTUAL',
  },
  {
    name: '"*.other.svc.cluster.local" does not match services of mesh',
    rules: [dr('client', 'w', '*.other.svc.cluster.local', 'ISTIO_MUTUAL')],
    auto: false,
    mode: 'DISABLE',
  },
  { name: 'FQDN host matches exactly', rules: [dr('client', 'f', 'echo.mesh.svc.cluster.local', 'ISTIO_MUTUAL')], auto: false, mode: 'ISTIO_MUTUAL' },
  {
    name: 'client namespace before server namespace',
    rules: [dr('mesh', 'server', 'echo', 'ISTIO_MUTUAL'), dr('client', 'mine', 'echo.mesh.svc.cluster.local', 'DISABLE')],
    mode: 'DISABLE',
    rule: 'client/mine',
  },
  {
    name: 'server namespace before root namespace',
    rules: [dr(ROOT, 'root', '*', 'DISABLE'), dr('mesh', 'server', 'echo', 'ISTIO_MUTUAL')],
    mode: 'ISTIO_MUTUAL',
    rule: 'mesh/server',
  },
  {
    name: 'root namespace when nothing closer matches',
    rules: [dr(ROOT, 'root', '*.local', 'ISTIO_MUTUAL'), dr('third', 'x', '*', 'DISABLE')],
    mode: 'ISTIO_MUTUAL',
    rule: `${ROOT}/root`,
  },
  { name: 'a rule in an unrelated namespace does not apply', rules: [dr('third', 'x', '*', 'ISTIO_MUTUAL')], auto: false, mode: 'DISABLE' },
  {
    name: 'exact host beats wildcard in the same namespace',
    rules: [dr('mesh', 'wild', '*', 'DISABLE', { t: 1 }), dr('mesh', 'exact', 'echo', 'ISTIO_MUTUAL', { t: 2 })],
    mode: 'ISTIO_MUTUAL',
    rule: 'mesh/exact',
  },
  {
    name: 'longer wildcard beats shorter',
    rules: [dr('mesh', 'short', '*.local', 'DISABLE', { t: 1 }), dr('mesh', 'long', '*.mesh.svc.cluster.local', 'ISTIO_MUTUAL', { t: 2 })],
    mode: 'ISTIO_MUTUAL',
    rule: 'mesh/long',
  },
  {
    name: 'oldest among equal hosts',
    rules: [dr('mesh', 'new', 'echo', 'DISABLE', { t: 9 }), dr('mesh', 'old', 'echo', 'ISTIO_MUTUAL', { t: 8 })],
    mode: 'ISTIO_MUTUAL',
    rule: 'mesh/old',
  },
  {
    name: 'exportTo "." hides a server-namespace rule from other clients',
    rules: [dr('mesh', 'private', 'echo', 'ISTIO_MUTUAL', { exportTo: ['.'] })],
    auto: false,
    mode: 'DISABLE',
  },
  {
    name: 'exportTo "." applies inside its own namespace',
    client: 'mesh',
    rules: [dr('mesh', 'private', 'echo', 'ISTIO_MUTUAL', { exportTo: ['.'] })],
    auto: false,
    mode: 'ISTIO_MUTUAL',
  },
  { name: 'no rule, auto mTLS on, destination with sidecar → ISTIO_MUTUAL', rules: [], mode: 'ISTIO_MUTUAL', reason: /auto-mtls/ },
  { name: 'no rule, auto mTLS on, destination without sidecar → plaintext', rules: [], ep: { sidecar: false }, mode: 'DISABLE', reason: /no sidecar/ },
  { name: 'auto mTLS honours a DISABLE destination', rules: [], ep: { sidecar: true, inboundMode: 'DISABLE' }, mode: 'DISABLE', reason: /DISABLE/ },
  { name: 'no rule, auto mTLS off → plaintext even toward a sidecar', rules: [], auto: false, mode: 'DISABLE' },
  { name: 'rule DISABLE wins over auto mTLS', rules: [dr('mesh', 'off', 'echo', 'DISABLE')], mode: 'DISABLE', reason: /destination-rule/ },
  { name: 'rule ISTIO_MUTUAL holds without a sidecar', rules: [dr('mesh', 'on', 'echo', 'ISTIO_MUTUAL')], ep: { sidecar: false }, mode: 'ISTIO_MUTUAL' },
  {
    name: 'a rule without tls falls back to auto mTLS',
    rules: [dr('mesh', 'lb-only', 'echo', undefined)],
    mode: 'ISTIO_MUTUAL',
    rule: 'mesh/lb-only',
    reason: /auto-mtls/,
  },
  { name: 'a rule without tls and auto mTLS off → plaintext', rules: [dr('mesh', 'lb-only', 'echo', undefined)], auto: false, mode: 'DISABLE' },
  {
    name: 'portLevelSettings tls wins for its port',
    rules: [dr('mesh', 'p', 'echo', 'ISTIO_MUTUAL', { portLevel: [{ port: 8080, mode: 'DISABLE' }] })],
    mode: 'DISABLE',
  },
  {
    name: 'portLevelSettings of another port does not apply',
    rules: [dr('mesh', 'p', 'echo', 'ISTIO_MUTUAL', { portLevel: [{ port: 9999, mode: 'DISABLE' }] })],
    mode: 'ISTIO_MUTUAL',
  },
];

for (const c of cases) {
  test(`DestinationRule: ${c.name}`, () => {
    const r = resolveOutbound(c.rules, c.client ?? 'client', c.dest ?? ECHO, c.ep ?? SIDECAR, { rootNamespace: ROOT, autoMtls: c.auto ?? true });
    assert.equal(r.mode, c.mode, r.reason);
    if (c.rule) assert.equal(`${r.rule?.namespace}/${r.rule?.name}`, c.rule);
    if (c.reason) assert.match(r.reason, c.reason);
  });
}

test('host names: short, FQDN, wildcard and IP', () => {
  assert.equal(resolveShortname('echo', 'mesh'), 'echo.mesh.svc.cluster.local');
  assert.equal(resolveShortname('echo.mesh', 'x'), 'echo.mesh');
  assert.equal(resolveShortname('*', 'x'), '*');
  assert.equal(resolveShortname('10.0.0.1', 'x'), '10.0.0.1');
  assert.ok(hostMatches('*.local', 'echo.mesh.svc.cluster.local'));
  assert.ok(!hostMatches('*.mesh.svc.cluster.local', 'mesh.svc.cluster.local'));
  assert.ok(!hostMatches('echo.mesh', 'echo.mesh.svc.cluster.local'));
});
