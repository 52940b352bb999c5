// The mesh in the local world (`strait up`): the traffic outcomes table (docs/mesh.md) with the real
// curl through `strait exec`, for each mode applied as the default PeerAuthentication of
// the server's namespace: in-mesh client, out-of-mesh client, host through the ingress.
// One suite, run by mesh-world.test.ts (a sidecar process per injected pod) and
// mesh-world-node.test.ts (world file `meshDataplane: node`: one proxy per node).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DEFAULT_WORLD } from '../../src/world/world-file/index.js';
import { run } from '../helpers/run.js';
import { BIN, strait, upWorld, type TestWorld } from '../helpers/world.js';

/** pids of this world's processes running `script` (found by the world's state dir in their environment) */
function worldProcesses(stateDir: string, script: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(script)) continue;
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(`STRAIT_STATE_DIR=${stateDir}`)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The default world with the given mesh dataplane (the default one: sidecar). */
export function upMeshWorld(dataplane: 'sidecar' | 'node'): TestWorld {
  if (dataplane === 'sidecar') return upWorld();
  const file = join(mkdtempSync(join(tmpdir(), 'strait-world-file-')), 'world.json');
  writeFileSync(file, JSON.stringify({ ...DEFAULT_WORLD, meshDataplane: dataplane }));
  return upWorld(['--world', file]);
}

export function meshWorldSuite(dataplane: 'sidecar' | 'node'): void {
  let world: TestWorld;
  before(() => {
    world = upMeshWorld(dataplane);
  });
  after(() => world?.cleanup());

  test(`the injected pods' proxies run as the ${dataplane} dataplane says`, () => {
    const sidecars = worldProcesses(world.stateDir, 'agents/sidecar/main.js');
    const nodeProxies = worldProcesses(world.stateDir, 'agents/mesh-node/main.js');
    if (dataplane === 'sidecar') {
      assert.equal(nodeProxies.length, 0);
      assert.ok(sidecars.length >= 2, `a sidecar per injected pod: ${sidecars.length}`);
    } else {
      assert.equal(sidecars.length, 0, 'no sidecar process');
      assert.ok(nodeProxies.length >= 1 && nodeProxies.length <= 2, `a proxy per node with injected pods: ${nodeProxies.length}`);
    }
  });

  const URL_ = 'http://echo.mesh.svc.cluster.local:8080/';
  const curlFrom = (pod: string) => {
    const r = world.exec(`cluster-a/mesh/${pod}`, ['curl', '-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', URL_]);
    return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
  };
  const ingressURL = (): string => {
    const url = (world.record().clusters.find((c) => c.name === 'cluster-a') as { ingress?: string } | undefined)?.ingress;
    assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, 'strait status reports the ingress host URL of cluster-a');
    return url as string;
  };
  // the host (this test's namespace) through the loopback port `strait up` bound for the ingress gateway
  const viaIngress = () => {
    const r = spawnSync('curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', `${ingressURL()}/`], { encoding: 'utf8' });
    return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
  };
  // and through the unix socket in the state dir
  const viaSocket = () => {
    const r = spawnSync(
      'curl',
      [
        '-sS',
        '-m',
        '5',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--unix-socket',
        join(world.stateDir, 'mesh', 'cluster-a', 'ingress.sock'),
        'http://echo.mesh/',
      ],
      { encoding: 'utf8' },
    );
    return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
  };
  const until = (want: () => boolean, ms = 20_000) => {
    const end = Date.now() + ms;
    while (Date.now() < end && !want()) spawnSync('sleep', ['0.1']);
  };

  const SETUPS: Record<string, string> = {
    PERMISSIVE:
      'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: PERMISSIVE}}\n',
    DISABLE:
      'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: DISABLE}}\n---\napiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: default, namespace: mesh}\nspec: {host: "*", trafficPolicy: {tls: {mode: DISABLE}}}\n',
    STRICT:
      'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: STRICT}}\n---\napiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: default, namespace: mesh}\nspec: {host: "*.mesh.svc.cluster.local", trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}\n',
  };
  const EXPECT: Record<string, string[]> = {
    PERMISSIVE: ['HTTP 200', 'HTTP 200', 'HTTP 200'],
    DISABLE: ['HTTP 200', 'HTTP 200', 'HTTP 200'],
    STRICT: ['HTTP 200', 'exit 56', 'HTTP 200'],
  };

  for (const mode of ['PERMISSIVE', 'DISABLE', 'STRICT']) {
    test(`traffic table, ${mode}: in-mesh client, outsider, ingress`, () => {
      strait(['delete', 'destinationrule', 'default', '-n', 'mesh', '--state-dir', world.stateDir]);
      const a = strait(['apply', '-f', '-', '--state-dir', world.stateDir], SETUPS[mode]);
      assert.equal(a.status, 0, a.stderr);
      const want = EXPECT[mode] as string[];
      until(() => curlFrom('outsider') === want[1] && curlFrom('client') === want[0]);
      assert.deepEqual([curlFrom('client'), curlFrom('outsider'), viaIngress()], want);
      assert.equal(viaSocket(), 'HTTP 200');
    });
  }

  test("the echo pod's sidecar counted the mTLS connections and the reset (metrics on 15020, promtool)", () => {
    const echo = world
      .record()
      .clusters.find((c) => c.name === 'cluster-a')
      ?.pods.find((p) => p.namespace === 'mesh' && p.name.startsWith('echo-'));
    assert.ok(echo?.ip);
    const r = world.exec('cluster-a/mesh/outsider', ['curl', '-sS', '-m', '5', `http://${echo.ip}:15020/metrics`]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /strait_mesh_inbound_accepted_total\{mode="STRICT",how="mtls"\} [1-9]/);
    assert.match(r.stdout, /strait_mesh_inbound_reset_total\{mode="STRICT",reason="plaintext"\} [1-9]/);
    const pt = spawnSync('promtool', ['check', 'metrics'], { input: r.stdout, encoding: 'utf8' });
    assert.equal(pt.status, 0, pt.stdout + pt.stderr);
  });

  test('the mesh root certificate is published as ConfigMap istio-ca-root-cert (root-cert.pem) in the member namespace', () => {
    const r = strait(['get', 'configmap', 'istio-ca-root-cert', '-n', 'mesh', '-o', 'json', '--state-dir', world.stateDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match((JSON.parse(r.stdout) as { data: Record<string, string> }).data['root-cert.pem'] ?? '', /^-----BEGIN CERTIFICATE-----/);
  });

  test('strait mesh describe over the world', () => {
    const r = strait(['mesh', 'describe', 'cluster-a/mesh/client', '--state-dir', world.stateDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Sidecar:\s+yes/);
  });

  test("every cluster has its ingress host URL in `strait status -o json`; cluster-b's routes to its echo (no mesh there: plaintext)", () => {
    const rec = world.record() as unknown as { clusters: { name: string; ingress?: string }[] };
    for (const c of rec.clusters) assert.match(c.ingress ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, `ingress of ${c.name}`);
    const b = rec.clusters.find((c) => c.name === 'cluster-b')?.ingress as string;
    const a = rec.clusters.find((c) => c.name === 'cluster-a')?.ingress as string;
    assert.notEqual(a, b);
    let r = spawnSync('curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', `${b}/`], { encoding: 'utf8' });
    for (let i = 0; i < 50 && r.stdout !== '200'; i++) {
      spawnSync('sleep', ['0.2']);
      r = spawnSync('curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', `${b}/`], { encoding: 'utf8' });
    }
    assert.equal(r.stdout, '200', r.stderr);
    const st = strait(['status', '--state-dir', world.stateDir]);
    assert.match(st.stdout, /ingress cluster-a: http:\/\/127\.0\.0\.1:\d+ → \/ → echo\.mesh \((ISTIO_MUTUAL|DISABLE)\)/);
    assert.match(st.stdout, /ingress cluster-b: http:\/\/127\.0\.0\.1:\d+ → \/ → echo\.default \(DISABLE\)/);
  });

  test('strait demo mesh stopped with Ctrl-C still puts the original policy back', async () => {
    const child = spawn(process.execPath, [BIN, 'demo', 'mesh', '--state-dir', world.stateDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    let sent = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    const status = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (!sent && /PERMISSIVE: applied/.test(stderr)) {
          sent = true;
          child.kill('SIGINT');
          resolve();
        } // once: a second Ctrl-C ends at once
      });
      child.on('close', () => resolve());
    });
    assert.equal(await status, 1, stdout + stderr);
    assert.match(stderr, /restoring the original policy/);
    assert.match(stdout, /Restored: PeerAuthentication mesh\/default STRICT; DestinationRule mesh\/default host "\*\.mesh\.svc\.cluster\.local" ISTIO_MUTUAL/);
    const pa = strait(['get', 'peerauthentication', 'default', '-n', 'mesh', '-o', 'json', '--state-dir', world.stateDir]);
    assert.equal((JSON.parse(pa.stdout) as { spec: { mtls: { mode: string } } }).spec.mtls.mode, 'STRICT');
  });

  test('strait demo mesh -o json: the traffic table measured with the real clients, the original policy restored', async () => {
    // the tests above left STRICT + the ISTIO_MUTUAL rule; the demo must put them back
    const r = await run(process.execPath, [BIN, 'demo', 'mesh', '-o', 'json', '--state-dir', world.stateDir]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      cluster: string;
      rows: { mode: string; observedAfterMs?: number; cells: Record<string, { measured: string; expected: string; ok: boolean }> }[];
      restored: string[];
    };
    assert.equal(out.cluster, 'cluster-a');
    assert.deepEqual(
      out.rows.map((row) => [row.mode, row.cells['inMesh']?.measured, row.cells['outsider']?.measured, row.cells['ingress']?.measured]),
      [
        ['PERMISSIVE', 'HTTP 200', 'HTTP 200', 'HTTP 200'],
        ['DISABLE', 'HTTP 200', 'HTTP 200', 'HTTP 200'],
        ['STRICT', 'HTTP 200', 'exit 56', 'HTTP 200'],
      ],
    );
    assert.equal(out.ok, true);
    for (const row of out.rows) assert.equal(typeof row.observedAfterMs, 'number');
    console.log(`# demo mesh: modes seen after ${out.rows.map((row) => `${row.mode} ${row.observedAfterMs} ms`).join(', ')}`);
    assert.deepEqual(out.restored, ['PeerAuthentication mesh/default STRICT', 'DestinationRule mesh/default host "*.mesh.svc.cluster.local" ISTIO_MUTUAL']);
    const pa = strait(['get', 'peerauthentication', 'default', '-n', 'mesh', '-o', 'json', '--state-dir', world.stateDir]);
    assert.equal((JSON.parse(pa.stdout) as { spec: { mtls: { mode: string } } }).spec.mtls.mode, 'STRICT');
  });
}
