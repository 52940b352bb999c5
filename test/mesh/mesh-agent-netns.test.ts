// The mesh agent in network namespaces: it starts the proxies of injected pods by itself
// and pushes each PeerAuthentication/DestinationRule change to them; measured from
// apply() to the first reset of the outsider's curl. Both dataplanes run the same table:
// a sidecar process per pod (redirect rules, uid 1337) and the node-level proxy (one
// process, listeners inside each pod's namespace, its sockets spared by their mark).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

for (const dataplane of ['sidecar', 'node'] as const)
  test(`mesh agent (${dataplane} dataplane): proxies started for injected pods, policy changes pushed without restarts, ingress daemon follows`, () => {
    const r = spawnSync(
      'unshare',
      [
        '--net',
        '--mount',
        '--propagation',
        'private',
        '--fork',
        '--kill-child',
        '--',
        process.execPath,
        join(root, 'dist', 'test', 'mesh', 'netns-agent-child.js'),
      ],
      { encoding: 'utf8', timeout: 90_000, env: { ...process.env, STRAIT_ROOT: root, STRAIT_TEST_DATAPLANE: dataplane } },
    );
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.status.map((s: { pod: string; ready: boolean; restarts: number }) => [s.pod, s.ready, s.restarts]).sort(), [
      ['mesh/client', true, 0],
      ['mesh/echo-0', true, 0],
    ]);
    const pids = new Set(out.status.map((s: { pid: number }) => s.pid));
    // a process per pod, or one for the node
    assert.equal(pids.size, dataplane === 'node' ? 1 : 2);
    const cell = (c: { exit: number; code: string }) => (c.exit === 0 ? `HTTP ${c.code}` : `exit ${c.exit}`);
    type Cell = { exit: number; code: string };
    const got = Object.fromEntries(
      Object.entries(out.table as Record<string, { inMesh: Cell; outsider: Cell; ingress: Cell; ingressUnix: Cell }>).map(([m, row]) => [
        m,
        [cell(row.inMesh), cell(row.outsider), cell(row.ingress), cell(row.ingressUnix)],
      ]),
    );
    // columns: in-mesh client, out-of-mesh client, ingress gateway (TCP), ingress gateway (unix socket)
    assert.deepEqual(got, {
      PERMISSIVE: ['HTTP 200', 'HTTP 200', 'HTTP 200', 'HTTP 200'],
      DISABLE: ['HTTP 200', 'HTTP 200', 'HTTP 200', 'HTTP 200'],
      STRICT: ['HTTP 200', 'exit 56', 'HTTP 200', 'HTTP 200'],
    });
    assert.ok(out.strictMs > 0);
    // the server pod's sidecar metrics, scraped from outside the pod on 15020 (not redirected)
    assert.match(out.metrics, /strait_mesh_inbound_reset_total\{mode="STRICT",reason="plaintext"\} [1-9]/);
    assert.match(out.metrics, /strait_mesh_inbound_accepted_total\{mode="STRICT",how="mtls"\} [1-9]/);
    // each pod speaks with its own identity (in the node dataplane both pods' TLS contexts live in one process):
    // the server pod saw the client pod's SPIFFE ID, and only that one
    assert.match(out.metrics, /strait_mesh_inbound_mtls_connections_total\{source_principal="spiffe:\/\/cluster\.local\/ns\/mesh\/sa\/client"\} [1-9]/);
    assert.doesNotMatch(out.metrics, /source_principal="spiffe:\/\/cluster\.local\/ns\/mesh\/sa\/echo"/);
    const pt = spawnSync('promtool', ['check', 'metrics'], { input: out.metrics, encoding: 'utf8' });
    assert.equal(pt.status, 0, pt.stdout + pt.stderr);
    console.log(`# ${dataplane}: STRICT enforced ${out.strictMs.toFixed(0)} ms after apply (agent: store watch → config → IPC push; includes curl runs)`);
  });
