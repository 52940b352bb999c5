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
  const rules = JSON.parse(r.stdout).map((f: { rule: string }) => f.rule).sort();
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
