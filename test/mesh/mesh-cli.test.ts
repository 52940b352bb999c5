// strait mesh describe / check over manifests loaded with --from-file (golden text).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const m = (f: string) => join(root, 'test', 'mesh', 'manifests', f);
const golden = (f: string) => readFileSync(join(root, 'test', 'mesh', 'golden', f), 'utf8');
const strait = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { encoding: 'utf8' });

test('mesh describe: STRICT namespace, ISTIO_MUTUAL rule (golden)', () => {
  const r = strait('mesh', 'describe', 'cluster-a/mesh/echo', '-f', m('world-mesh.yaml'), m('strict.yaml'));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, golden('describe-echo-strict.txt'));
});

test('mesh describe: a pod without a sidecar (golden)', () => {
  const r = strait('mesh', 'describe', 'cluster-a/mesh/outsider', '-f', m('world-mesh.yaml'));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, golden('describe-outsider.txt'));
});

test('mesh describe -o json names the deciding policy per port', () => {
  const r = strait('mesh', 'describe', 'mesh/echo', '-o', 'json', '-f', m('world-mesh.yaml'), m('strict.yaml'));
  assert.equal(r.status, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.inbound.ports[0].port, 8080);
  assert.equal(d.inbound.ports[0].mode, 'STRICT');
  assert.equal(d.inbound.ports[0].sources.at(-1).name, 'default');
  assert.equal(d.outbound[0].mode, 'ISTIO_MUTUAL');
});

test('mesh describe: unknown pod exits 3 with the known pods', () => {
  const r = strait('mesh', 'describe', 'cluster-a/mesh/nope', '-f', m('world-mesh.yaml'));
  assert.equal(r.status, 3);
  assert.match(r.stderr, /STRAIT_ERR_MESH_WORKLOAD_NOT_FOUND.*mesh\/client/);
});

test('mesh check: STRICT without ISTIO_MUTUAL is an error (exit 1), outsiders a warning', () => {
  const r = strait('mesh', 'check', '-o', 'json', '-f', m('world-mesh.yaml'), m('strict-no-dr.yaml'));
  assert.equal(r.status, 1);
  const rules = JSON.parse(r.stdout)
    .map((f: { rule: string }) => f.rule)
    .sort();
  assert.deepEqual(rules, ['STRICT_OUT_OF_MESH_CLIENT', 'STRICT_PLAINTEXT_CLIENT']);
  assert.match(r.stderr, /STRAIT_ERR_MESH_CHECK_FAILED/);
});

test('mesh check: the STRICT setup of docs/mesh.md has warnings only (exit 0)', () => {
  const r = strait('mesh', 'check', '-f', m('world-mesh.yaml'), m('strict.yaml'));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /STRICT_OUT_OF_MESH_CLIENT.*mesh\/outsider/);
});

test('mesh check: a manifest that is not YAML exits 2', () => {
  const r = strait('mesh', 'check', '-f', join(root, 'package.json'));
  assert.equal(r.status, 2, r.stderr);
});

test('mesh describe: PeerAuthentication security.istio.io/v1 and DestinationRule v1alpha3 count like v1beta1', () => {
  const r = strait('mesh', 'describe', 'cluster-a/mesh/echo', '-f', m('world-mesh.yaml'), m('strict-v1.yaml'));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, golden('describe-echo-strict.txt'));
});

test('mesh describe takes a Deployment name as istioctl x describe takes a workload, and keeps the pod form', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'strait-mesh-deploy-'));
  try {
    const file = join(dir, 'pods.yaml');
    writeFileSync(
      file,
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: mesh}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {sidecar.istio.io/inject: "true"}}
    spec: {containers: [{name: web, image: strait/echo, ports: [{containerPort: 8080}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-5d8f7c9b4-x2x7k, namespace: mesh, labels: {app: web}, annotations: {sidecar.istio.io/inject: "true"}}
spec: {containers: [{name: web, image: strait/echo, ports: [{containerPort: 8080}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-5d8f7c9b4-a1b2c, namespace: mesh, labels: {app: web}, annotations: {sidecar.istio.io/inject: "true"}}
spec: {containers: [{name: web, image: strait/echo, ports: [{containerPort: 8080}]}]}
`,
    );
    const byDeployment = strait('mesh', 'describe', 'cluster-a/mesh/web', '-f', m('world-mesh.yaml'), m('strict.yaml'), file);
    assert.equal(byDeployment.status, 0, byDeployment.stderr);
    assert.match(byDeployment.stdout, /^Pod:\s+cluster-a\/mesh\/web-5d8f7c9b4-a1b2c \(Deployment web\)\n/);
    assert.match(byDeployment.stdout, /\n\s+8080\s+STRICT\s/);
    const byPod = strait('mesh', 'describe', 'cluster-a/mesh/web-5d8f7c9b4-x2x7k', '-f', m('world-mesh.yaml'), m('strict.yaml'), file);
    assert.equal(byPod.status, 0, byPod.stderr);
    assert.match(byPod.stdout, /^Pod:\s+cluster-a\/mesh\/web-5d8f7c9b4-x2x7k \(Deployment web\)\n/);
    const json = JSON.parse(strait('mesh', 'describe', 'mesh/web', '-o', 'json', '-f', m('world-mesh.yaml'), file).stdout) as {
      name: string;
      deployment: string;
    };
    assert.deepEqual([json.name, json.deployment], ['web-5d8f7c9b4-a1b2c', 'web']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('mesh flows: every observed flow, with who STRICT would reset under the policy in force (PERMISSIVE)', () => {
  const r = strait('mesh', 'flows', '-o', 'json', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as {
    namespace: string;
    workload: string;
    pod: string;
    tls: string;
    outcome: string;
    client: { address: string; identity?: string };
    strictWouldReset: boolean;
  }[];
  assert.deepEqual(
    rows.map((x) => [x.namespace, x.workload, x.client.identity ?? x.client.address, x.tls, x.outcome, x.strictWouldReset]),
    [
      ['mesh', 'echo', 'spiffe://cluster.local/ns/mesh/sa/client', 'mtls', 'accepted', false],
      ['mesh', 'echo', '10.1.0.9', 'plaintext', 'accepted', true],
      ['mesh', 'echo', '10.1.0.11', 'plaintext', 'reset', false],
    ],
  );
  const text = strait('mesh', 'flows', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.equal(text.status, 0, text.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  assert.match(lines[0] as string, /^NAMESPACE\s+WORKLOAD\s+PORT\s+CLIENT\s+TLS\s+OUTCOME\s+MODE\s+COUNT\s+LAST SEEN\s+STRICT$/);
  assert.match(lines[1] as string, /^mesh\s+echo\s+8080\s+spiffe:\/\/cluster\.local\/ns\/mesh\/sa\/client\s+mtls\s+accepted\s+PERMISSIVE\s+3\s+\S+\s+-$/);
  assert.match(lines[2] as string, /^mesh\s+echo\s+8080\s+mesh\/outsider \(no sidecar\)\s+plaintext\s+accepted\s+PERMISSIVE\s+2\s+\S+\s+would reset$/);
  assert.match(lines[3] as string, /^mesh\s+echo\s+8080\s+10\.1\.0\.11\s+plaintext\s+reset \(plaintext\)\s+STRICT\s+1\s+\S+\s+-$/);
  const wide = strait('mesh', 'flows', '-o', 'wide', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.match(wide.stdout.split('\n')[0] as string, /STRICT\s+POD\s+ADDRESS\s+CLIENT POD\s+FIRST SEEN$/);
  assert.match(wide.stdout, /would reset\s+echo\s+10\.1\.0\.9\s+mesh\/outsider\s+\S+\n/);
});

test('mesh flows --strict-would-reset: the plaintext client under PERMISSIVE, nobody once STRICT is in force', () => {
  const permissive = strait('mesh', 'flows', '--strict-would-reset', '-o', 'json', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.equal(permissive.status, 0, permissive.stderr);
  assert.deepEqual(
    (JSON.parse(permissive.stdout) as { client: { pod?: string } }[]).map((x) => x.client.pod),
    ['outsider'],
  );
  // the stored objects still say true: the CLI decides again against the policy now
  const strict = strait('mesh', 'flows', '--strict-would-reset', '-o', 'json', '-f', m('world-mesh.yaml'), m('observed.yaml'), m('strict.yaml'));
  assert.equal(strict.status, 0, strict.stderr);
  assert.deepEqual(JSON.parse(strict.stdout), []);
  const none = strait('mesh', 'flows', '--strict-would-reset', '-f', m('world-mesh.yaml'), m('observed.yaml'), m('strict.yaml'));
  assert.match(none.stdout, /^no flows observed/);
});

test('mesh flows -n / --workload filter; a bad -o is a usage error (exit 2)', () => {
  const other = strait('mesh', 'flows', '-n', 'default', '-o', 'json', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.deepEqual(JSON.parse(other.stdout), []);
  const wl = strait('mesh', 'flows', '--workload', 'client', '-o', 'json', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.deepEqual(JSON.parse(wl.stdout), []);
  const echo = strait('mesh', 'flows', '-n', 'mesh', '--workload', 'echo', '-o', 'json', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.equal((JSON.parse(echo.stdout) as unknown[]).length, 3);
  const bad = strait('mesh', 'flows', '-o', 'table', '-f', m('world-mesh.yaml'));
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown output format "table"; use one of: text, wide, json, yaml/);
});

test('mesh describe: the observed clients and who STRICT would reset', () => {
  const r = strait('mesh', 'describe', 'cluster-a/mesh/echo', '-f', m('world-mesh.yaml'), m('observed.yaml'));
  assert.equal(r.status, 0, r.stderr);
  const section = r.stdout.slice(r.stdout.indexOf('Observed clients'));
  assert.match(
    section,
    /^Observed clients \(inbound flows the sidecar saw\):\n {2}PORT\s+CLIENT\s+ADDRESS\s+TLS\s+OUTCOME\s+MODE\s+COUNT\s+LAST SEEN\s+STRICT\n/,
  );
  assert.match(section, /\n {2}8080\s+mesh\/outsider \(no sidecar\)\s+10\.1\.0\.9\s+plaintext\s+accepted\s+PERMISSIVE\s+2\s+\S+\s+would reset\n/);
  assert.match(
    section,
    /\n {2}STRICT would reset 1 client: mesh\/outsider \(no sidecar\) \(10\.1\.0\.9\) on 8080\n {2}2 older flows evicted \(at most 256 are kept\)\n$/,
  );
  const json = JSON.parse(strait('mesh', 'describe', 'mesh/echo', '-o', 'json', '-f', m('world-mesh.yaml'), m('observed.yaml')).stdout);
  assert.equal(json.observed.flows.length, 3);
  assert.equal(json.observed.evictedFlows, 2);
  const strict = strait('mesh', 'describe', 'mesh/echo', '-f', m('world-mesh.yaml'), m('observed.yaml'), m('strict.yaml'));
  assert.match(strict.stdout, /\n {2}STRICT would reset no observed client\n/);
});
