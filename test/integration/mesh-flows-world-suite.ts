// Observed traffic in the local world (docs/mesh.md, Observed traffic): an in-mesh client and an
// out-of-mesh client call the PERMISSIVE echo workload with the real curl (`strait exec`); the
// echo pod's sidecar reports, the mesh agent writes its MeshTrafficObservation, and
// `strait mesh flows` shows the in-mesh client as mtls with its SPIFFE ID and the outsider as
// plaintext with its pod IP, the one STRICT would reset. After STRICT is applied the outsider is
// reset (curl exit 56) and that is what the flows then say. Run for both dataplanes: the
// sidecars and the node-level proxy report the same flows.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { strait, type TestWorld } from '../helpers/world.js';
import { upMeshWorld } from './mesh-world-suite.js';

export function meshFlowsSuite(dataplane: 'sidecar' | 'node'): void {
  let world: TestWorld;
  before(() => {
    world = upMeshWorld(dataplane);
  });
  after(() => world?.cleanup());

  const URL_ = 'http://echo.mesh.svc.cluster.local:8080/';
  const curlFrom = (pod: string): string => {
    const r = world.exec(`cluster-a/mesh/${pod}`, ['curl', '-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', URL_]);
    return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
  };
  const until = (want: () => boolean, ms = 30_000): boolean => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (want()) return true;
      spawnSync('sleep', ['0.2']);
    }
    return want();
  };
  const S = () => ['--state-dir', world.stateDir];

  interface Row {
    namespace: string;
    workload: string;
    pod: string;
    port: number;
    tls: string;
    outcome: string;
    reason?: string;
    mode: string;
    count: number;
    client: { address: string; identity?: string; namespace?: string; pod?: string; sidecar?: boolean };
    strictWouldReset: boolean;
  }
  const flows = (...extra: string[]): Row[] => {
    const r = strait(['mesh', 'flows', '-n', 'mesh', '--workload', 'echo', '-o', 'json', ...extra, ...S()]);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Row[];
  };
  const podIp = (name: string): string => {
    const p = world
      .record()
      .clusters.find((c) => c.name === 'cluster-a')
      ?.pods.find((x) => x.namespace === 'mesh' && x.name === name);
    assert.ok(p?.ip, `pod mesh/${name} has an address`);
    return p.ip;
  };

  const PERMISSIVE =
    'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: PERMISSIVE}}\n---\n' +
    'apiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: default, namespace: mesh}\nspec: {host: "*.mesh.svc.cluster.local", trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}\n';
  const STRICT = 'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: STRICT}}\n';

  test(`${dataplane} dataplane, PERMISSIVE: the in-mesh client is an mTLS flow with its SPIFFE ID, the outsider a plaintext flow with its pod IP that STRICT would reset`, () => {
    const a = strait(['apply', '-f', '-', ...S()], PERMISSIVE);
    assert.equal(a.status, 0, a.stderr);
    assert.ok(
      until(() => curlFrom('client') === 'HTTP 200' && curlFrom('outsider') === 'HTTP 200'),
      'both clients reach echo',
    );
    const outsider = podIp('outsider');
    const client = podIp('client');
    let rows: Row[] = [];
    assert.ok(
      until(() => {
        rows = flows();
        return rows.some((x) => x.tls === 'mtls') && rows.some((x) => x.tls === 'plaintext' && x.client.address === outsider);
      }),
      `both flows observed; got ${JSON.stringify(rows)}`,
    );
    const mtls = rows.find((x) => x.tls === 'mtls') as Row;
    assert.deepEqual(
      [mtls.client.identity, mtls.client.address, mtls.client.pod, mtls.client.sidecar, mtls.outcome, mtls.mode, mtls.port, mtls.strictWouldReset],
      ['spiffe://cluster.local/ns/mesh/sa/default', client, 'client', true, 'accepted', 'PERMISSIVE', 8080, false],
    );
    const plain = rows.find((x) => x.tls === 'plaintext' && x.client.address === outsider) as Row;
    assert.deepEqual(
      [plain.client.identity, plain.client.pod, plain.client.sidecar, plain.outcome, plain.mode, plain.strictWouldReset],
      [undefined, 'outsider', false, 'accepted', 'PERMISSIVE', true],
    );
    assert.ok(plain.count >= 1);

    // the "what would STRICT break" view: the outsider, and only it
    const would = flows('--strict-would-reset');
    assert.deepEqual(
      would.map((x) => x.client.address),
      [outsider],
    );
    const text = strait(['mesh', 'flows', '-n', 'mesh', ...S()]);
    assert.match(
      text.stdout,
      new RegExp(`\\n\\S+\\s+echo\\s+8080\\s+mesh/outsider \\(no sidecar\\)\\s+plaintext\\s+accepted\\s+PERMISSIVE\\s+\\d+\\s+\\S+\\s+would reset\\n`),
    );
    // the same data as a resource, for the console and `strait get`
    const got = strait(['get', 'meshtrafficobservations', '-n', 'mesh', '-o', 'json', ...S()]);
    assert.equal(got.status, 0, got.stderr);
    const items = (
      JSON.parse(got.stdout) as {
        items: { metadata: { name: string }; spec: { deployment?: string }; status: { inbound: { mode: string }; summary: { strictWouldReset: number } } }[];
      }
    ).items;
    const echo = items.find((o) => o.spec.deployment === 'echo');
    assert.equal(echo?.status.inbound.mode, 'PERMISSIVE');
    assert.equal(echo?.status.summary.strictWouldReset, 1);
    assert.ok(
      items.some((o) => o.metadata.name === 'client'),
      'the in-mesh client pod has its (empty) observation too',
    );
    assert.ok(!items.some((o) => o.metadata.name === 'outsider'), 'no sidecar, no observation');
  });

  test(`${dataplane} dataplane, STRICT: the outsider is reset (exit 56) and recorded as reset; nothing is left that STRICT would reset`, () => {
    const a = strait(['apply', '-f', '-', ...S()], STRICT);
    assert.equal(a.status, 0, a.stderr);
    assert.ok(
      until(() => curlFrom('outsider') === 'exit 56'),
      'the outsider is refused',
    );
    assert.equal(curlFrom('client'), 'HTTP 200');
    const outsider = podIp('outsider');
    let rows: Row[] = [];
    assert.ok(
      until(() => {
        rows = flows();
        // both may come in different reports (each sent at most every 2 s)
        return rows.some((x) => x.client.address === outsider && x.outcome === 'reset') && rows.some((x) => x.tls === 'mtls' && x.mode === 'STRICT');
      }),
      `the reset and the in-mesh client's mTLS under STRICT observed; got ${JSON.stringify(rows)}`,
    );
    const reset = rows.find((x) => x.client.address === outsider && x.outcome === 'reset') as Row;
    assert.deepEqual([reset.tls, reset.reason, reset.mode, reset.client.pod, reset.strictWouldReset], ['plaintext', 'plaintext', 'STRICT', 'outsider', false]);
    assert.ok(
      rows.some((x) => x.tls === 'mtls' && x.mode === 'STRICT'),
      'the in-mesh client still comes in over mTLS',
    );
    assert.deepEqual(flows('--strict-would-reset'), []);
    // the agent rewrote the stored verdicts too (what the console reads)
    assert.ok(
      until(() => {
        const got = strait(['get', 'mto', '-n', 'mesh', '-o', 'json', ...S()]);
        const items = (
          JSON.parse(got.stdout) as { items: { spec: { deployment?: string }; status: { summary: { strictWouldReset: number; reset: number } } }[] }
        ).items;
        const s = items.find((o) => o.spec.deployment === 'echo')?.status.summary;
        return s?.strictWouldReset === 0 && s.reset >= 1;
      }),
      'the stored observation says STRICT would reset nobody now',
    );
    const d = strait(['mesh', 'describe', 'cluster-a/mesh/echo', ...S()]);
    assert.equal(d.status, 0, d.stderr);
    assert.match(d.stdout, /\nObserved clients \(inbound flows the sidecar saw\):\n/);
    assert.match(
      d.stdout,
      new RegExp(`\\n  8080\\s+mesh/outsider \\(no sidecar\\)\\s+${outsider.replace(/\./g, '\\.')}\\s+plaintext\\s+reset \\(plaintext\\)\\s+STRICT\\s+`),
    );
    assert.match(d.stdout, /\n {2}STRICT would reset no observed client\n/);
  });
}
