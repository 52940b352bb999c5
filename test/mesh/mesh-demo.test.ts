// `strait demo mesh`: the table printed from a measured result (golden text), a differing
// cell reported with curl's error, and the command's exit without a world. The run against a
// real world is in test/integration/mesh-world.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEMO_MODES, EXPECTED_OUTCOMES, formatMeshDemo, type DemoCell, type DemoClient, type MeshDemoResult } from '../../src/cli/mesh-demo.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const golden = (f: string) => readFileSync(join(root, 'test', 'mesh', 'golden', f), 'utf8');

function result(override?: { mode: string; client: DemoClient; measured: string; error: string }): MeshDemoResult {
  const rows = DEMO_MODES.map((mode, i) => {
    const cell = (c: DemoClient): DemoCell => {
      const measured = override && override.mode === mode && override.client === c ? override.measured : EXPECTED_OUTCOMES[mode][c].outcome;
      return {
        measured,
        expected: EXPECTED_OUTCOMES[mode][c].outcome,
        spec: EXPECTED_OUTCOMES[mode][c].spec,
        ok: measured === EXPECTED_OUTCOMES[mode][c].outcome,
        command:
          c === 'ingress'
            ? 'curl http://127.0.0.1:40000/'
            : `strait exec cluster-a/mesh/${c === 'inMesh' ? 'client' : 'outsider'} -- curl http://echo.mesh.svc.cluster.local:8080/`,
        ...(override && measured === override.measured && override.mode === mode && override.client === c ? { error: override.error } : {}),
      };
    };
    return {
      mode,
      applied: [`PeerAuthentication mesh/default ${mode}`],
      observedAfterMs: 100 * (i + 1),
      cells: { inMesh: cell('inMesh'), outsider: cell('outsider'), ingress: cell('ingress') },
    };
  });
  return {
    cluster: 'cluster-a',
    namespace: 'mesh',
    url: 'http://echo.mesh.svc.cluster.local:8080/',
    ingress: 'http://127.0.0.1:40000',
    rows,
    restored: ['PeerAuthentication mesh/default deleted (there was none)', 'DestinationRule mesh/default deleted (there was none)'],
    ok: rows.every((r) => Object.values(r.cells).every((c) => c.ok)),
  };
}

test('demo mesh: the traffic table with the measured outcome next to the expected one (golden)', () => {
  assert.equal(formatMeshDemo(result()), golden('demo-mesh.txt'));
});

test("demo mesh: a cell that differs is marked and curl's error shown", () => {
  const r = result({ mode: 'STRICT', client: 'outsider', measured: 'HTTP 200', error: '' });
  assert.equal(r.ok, false);
  const text = formatMeshDemo(r);
  assert.match(text, /STRICT\s+HTTP 200 = expected\s+HTTP 200 ≠ expected exit 56/);
  assert.match(text, /demo: 1 cell\(s\) differ from docs\/mesh\.md/);
  const e = formatMeshDemo(result({ mode: 'PERMISSIVE', client: 'inMesh', measured: 'exit 7', error: 'curl: (7) Failed to connect' }));
  assert.match(e, /PERMISSIVE: strait exec cluster-a\/mesh\/client -- curl http:\/\/echo.mesh.svc.cluster.local:8080\/: curl: \(7\) Failed to connect/);
});

test('demo mesh without a running world exits 5 (STRAIT_ERR_WORLD_NOT_RUNNING)', () => {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'demo', 'mesh', '--state-dir', mkdtempSync(join(tmpdir(), 'strait-nodemo-'))], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 5, r.stderr);
  assert.match(r.stderr, /STRAIT_ERR_WORLD_NOT_RUNNING/);
});

test('demo --help lists both scenarios', () => {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'demo', '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /gitops \[options\]/);
  assert.match(r.stdout, /mesh \[options\]/);
});
