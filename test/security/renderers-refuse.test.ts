// Defense in depth behind the store's validation: what renders data-plane state takes
// typed values only and refuses (never escapes) anything else, one bad object never stops
// the others, and mesh policy fails closed. Each case feeds the hostile object past the
// store (a non-validating in-memory store, or a value cast to the renderer's type), as an
// object that bypassed the write path would arrive.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { silentLogger } from '../../src/base/log/index.js';
import { buildMeshView, findWorkload, sidecarConfigFor } from '../../src/mesh/control/index.js';
import type { KubeObject } from '../../src/platform/store/index.js';
import { renderProxyRules, type ProxyService } from '../../src/world/service-proxy/index.js';
import { buildPlan, DEFAULT_WORLD, parseWorld, serviceViews, startClusterSync, type ServiceViews } from '../../src/world/supervisor/index.js';
import { MemoryStore } from '../helpers/memory-store.js';
import { dr, pa, pod, smcp, smmr, svc } from '../mesh/fixtures.js';

const CRAFTED_IP =
  '100.1.0.99 . tcp . 1 }\n  }\n  chain evil {\n    type filter hook input priority 0; policy accept;\n  }\n  set pad {\n' +
  '    type ipv4_addr . inet_proto . inet_service\n    elements = { 100.1.0.98';

const service = (name: string, spec: Record<string, unknown>, t = 1): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', creationTimestamp: `2026-01-01T00:00:0${t}Z` },
  spec,
});

test('service proxy renderer: a crafted clusterIP is refused, never escaped; a contested key goes to the first service; nft takes the script', () => {
  const services = [
    { namespace: 'default', name: 'first', clusterIP: '100.1.0.11', ports: [{ protocol: 'TCP', port: 80, endpoints: [{ ip: '10.1.0.2', port: 8080 }] }] },
    { namespace: 'default', name: 'evil', clusterIP: CRAFTED_IP, ports: [{ protocol: 'TCP', port: 80, endpoints: [] }] },
    { namespace: 'default', name: 'bad-port', clusterIP: '100.1.0.13', ports: [{ protocol: 'TCP', port: 70000, endpoints: [] }] },
    { namespace: 'default', name: 'a-dup', clusterIP: '100.1.0.11', ports: [{ protocol: 'TCP', port: 80, endpoints: [{ ip: '10.1.0.3', port: 8080 }] }] },
    { namespace: 'x y', name: 'spaced', clusterIP: '100.1.0.14', ports: [{ protocol: 'TCP', port: 80, endpoints: [] }] },
  ] as unknown as ProxyService[];
  const script = renderProxyRules(services);
  assert.doesNotMatch(script, /evil|70000|spaced|10\.1\.0\.3/);
  assert.match(script, /100\.1\.0\.11 \. tcp \. 80 : goto svc_default_first_tcp_80/);
  const r = spawnSync('unshare', ['--net', 'sh', '-c', `nft -f - <<'EOF'\n${script}EOF\nnft list table ip strait-proxy`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /chain evil/);
});

test('service views: each Service is parsed on its own; bad ones are refused with a reason, the oldest keeps a contested ClusterIP', () => {
  const views = serviceViews(
    [
      service('good', { clusterIP: '100.1.0.11', ports: [{ port: 80 }] }, 1),
      service('ports-x', { clusterIP: '100.1.0.12', ports: 'x' }, 2),
      service('crafted', { clusterIP: CRAFTED_IP, ports: [{ port: 80 }] }, 3),
      service('dup', { clusterIP: '100.1.0.11', ports: [{ port: 80 }] }, 4),
      service('headless', { clusterIP: 'None' }, 5),
    ],
    [],
  );
  assert.deepEqual(
    views.proxy.map((p) => p.name),
    ['good'],
  );
  assert.deepEqual(
    views.dns.map((d) => d.name),
    ['good', 'headless'],
  );
  assert.deepEqual(
    views.refused.map((r) => [r.name, r.reason]),
    [
      ['ports-x', 'spec.ports must be a list (got "x")'],
      ['crafted', `spec.clusterIP ${JSON.stringify(CRAFTED_IP)} is not an IPv4 address`],
      ['dup', 'spec.clusterIP 100.1.0.11 is already allocated to Service default/good'],
    ],
  );
});

test('cluster sync: a Service with ports: "x" that got into the store is skipped and reported with an Event; the others are programmed', async () => {
  const store = new MemoryStore();
  const cluster = buildPlan(parseWorld(DEFAULT_WORLD)).clusters[0]!;
  await store.apply(service('bad', { selector: { app: 'x' }, ports: 'x' }));
  await store.apply(service('fine', { ports: [{ port: 80 }] }));
  const programmed: ServiceViews[] = [];
  const sync = startClusterSync(cluster, store, silentLogger(), async (v) => {
    programmed.push(v);
  });
  try {
    await sync.settled();
    const last = programmed.at(-1)!;
    assert.ok(
      last.proxy.some((p) => p.name === 'fine' && /^100\.1\.0\.\d+$/.test(p.clusterIP)),
      JSON.stringify(last),
    );
    assert.ok(last.dns.some((d) => d.name === 'fine'));
    assert.ok(!last.dns.some((d) => d.name === 'bad'));
    const ev = store.events.find((e) => e.involvedObject.name === 'bad');
    assert.equal(ev?.reason, 'ServiceRefused');
    assert.equal(ev?.type, 'Warning');
  } finally {
    sync.stop();
  }
});

test('mesh: a DestinationRule with host: 5 is ignored and reported; a STRICT PeerAuthentication is still enforced', () => {
  const bad = dr('mesh', 'crash', 'x', undefined);
  (bad.spec as Record<string, unknown>)['host'] = 5;
  const v = buildMeshView([
    smcp('istio-system', {}),
    smmr('istio-system', ['mesh']),
    pod('mesh', 'echo-1', { labels: { app: 'echo' }, inject: 'annotation', ip: '10.1.0.10', port: 8080 }),
    svc('mesh', 'echo', 8080, { clusterIP: '10.96.0.20' }),
    bad,
    pa('mesh', 'default', 'STRICT'),
  ]);
  assert.deepEqual(
    v.invalid.map((i) => [i.kind, i.name]),
    [['DestinationRule', 'crash']],
  );
  const cfg = sidecarConfigFor(v, findWorkload(v, 'mesh', 'echo-1')!);
  assert.equal(cfg.inbound.defaultMode, 'STRICT');
});

test('mesh: a PeerAuthentication that does not parse is enforced as STRICT for its scope, never weaker', () => {
  const unknownMode = pa('mesh', 'default', 'PERMISSIVE');
  (unknownMode.spec as Record<string, unknown>)['mtls'] = { mode: 'OFF' };
  const stringSpec = pa('mesh', 'wl', undefined, { selector: { app: 'echo' } });
  (stringSpec as Record<string, unknown>)['spec'] = 'DISABLE';
  for (const [what, objs] of [
    ['an unknown mode', [unknownMode]],
    ['a spec that is a string', [stringSpec]],
  ] as const) {
    const v = buildMeshView([
      smcp('istio-system', {}),
      smmr('istio-system', ['mesh']),
      pod('mesh', 'echo-1', { labels: { app: 'echo' }, inject: 'annotation', ip: '10.1.0.10', port: 8080 }),
      ...objs,
    ]);
    assert.equal(v.invalid.length, 1, what);
    assert.match(v.invalid[0]!.action, /enforced as STRICT/);
    assert.equal(sidecarConfigFor(v, findWorkload(v, 'mesh', 'echo-1')!).inbound.defaultMode, 'STRICT', what);
  }
});
