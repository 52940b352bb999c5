// What a new user meets in a fresh world: the namespaces kubectl would list, READY counting
// the sidecar, exec's exit for a missing program, logs of pods and processes (and -f), and
// the down hint of `strait up --detach`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, strait, upWorld, type TestWorld } from '../helpers/world.js';
import { waitFor } from '../helpers/wait.js';

describe('a fresh world, as a new user meets it', () => {
  let world: TestWorld;
  const S = () => ['--state-dir', world.stateDir];
  before(() => {
    world = upWorld();
  });
  after(() => world?.cleanup());

  test("strait get ns lists argocd (the control module's namespace) with the others", () => {
    const r = strait(['get', 'ns', '-o', 'name', ...S()]);
    assert.equal(r.status, 0, r.stderr);
    for (const ns of ['argocd', 'default', 'istio-system', 'kube-system', 'mesh', 'submariner-operator'])
      assert.match(r.stdout, new RegExp(`^namespace/${ns}$`, 'm'));
  });

  test('pods with a sidecar count it: READY 2/2; pods without one 1/1', async () => {
    const rows = await waitFor(
      () => {
        const r = strait(['get', 'pods', '-n', 'mesh', ...S()]);
        return /^client\s+2\/2\s+Running/m.test(r.stdout) && /^echo-\S+\s+2\/2\s+Running/m.test(r.stdout) ? r.stdout : undefined;
      },
      15_000,
      'mesh pods 2/2',
    );
    assert.match(rows, /^outsider\s+1\/1\s+Running/m, 'outsider has no sidecar');
    const def = strait(['get', 'pods', '-n', 'default', ...S()]);
    assert.match(def.stdout, /^client\s+1\/1\s+Running/m);
    const statuses = JSON.parse(strait(['get', 'pods', '-n', 'mesh', '-o', 'json', ...S()]).stdout) as {
      items: { metadata: { name: string }; status: { containerStatuses?: { name: string; ready: boolean }[] } }[];
    };
    const client = statuses.items.find((p) => p.metadata.name === 'client');
    assert.deepEqual(
      client?.status.containerStatuses?.map((c) => [c.name, c.ready]),
      [
        ['idle', true],
        ['istio-proxy', true],
      ],
    );
  });

  test('strait exec of a program that does not exist exits 127, as shells and kubectl do', () => {
    const r = world.exec('cluster-a/default/client', ['no-such-program-here']);
    assert.equal(r.status, 127, r.stderr);
    assert.match(r.stderr, /no-such-program-here/);
    assert.equal(world.exec('cluster-a/default/client', ['sh', '-c', 'exit 3']).status, 3);
  });

  test("strait logs: a pod by its Deployment's name, its sidecar with -c istio-proxy, a process by its name", () => {
    const pod = strait(['logs', 'cluster-a/default/echo', ...S()]);
    assert.equal(pod.status, 0, pod.stderr);
    assert.match(pod.stdout, /"pod":"echo-[a-z0-9]+-[a-z0-9]+".*"msg":"echo serving"/);
    assert.doesNotMatch(pod.stdout, /"cluster":"cluster-b"/, "only this pod's lines");
    const sidecar = strait(['logs', 'cluster-a/mesh/echo', '-c', 'istio-proxy', ...S()]);
    assert.equal(sidecar.status, 0, sidecar.stderr);
    assert.match(sidecar.stdout, /"msg":"sidecar ready"/);
    const proc = strait(['logs', 'cluster-a.control', '--tail', '1', ...S()]);
    assert.equal(proc.status, 0, proc.stderr);
    assert.equal(proc.stdout.trim().split('\n').length, 1);
    const nope = strait(['logs', 'cluster-a.nothing', ...S()]);
    assert.equal(nope.status, 2);
    assert.match(nope.stderr, /no log of "cluster-a\.nothing" in .*; components: .*cluster-a\.control/);
    assert.equal(strait(['logs', 'cluster-a/default/nothing', ...S()]).status, 3);
  });

  test('strait logs -f prints lines as they are written, and stops on SIGINT', async () => {
    const log = join(world.stateDir, 'logs', 'world.log');
    appendFileSync(log, '{"msg":"the last line before"}\n');
    const child = spawn(process.execPath, [BIN, 'logs', 'world', '-f', '--tail', '5', ...S()], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    await waitFor(() => (out.includes('the last line before') ? true : undefined), 10_000, 'the last lines (--tail 5)');
    appendFileSync(log, '{"msg":"a line written while following"}\n');
    await waitFor(() => (out.includes('a line written while following') ? true : undefined), 5_000, 'the new line');
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    assert.equal(code, 0);
    assert.ok(out.indexOf('the last line before') < out.indexOf('a line written while following'), out);
    assert.equal(out.split('\n').filter((l) => l.includes('a line written while following')).length, 1, 'printed once');
  });

  test('a second strait up on the same state dir names the down command with that state dir', () => {
    const r = strait(['up', '--detach', ...S()]);
    assert.equal(r.status, 4, r.stderr);
    assert.match(r.stderr, new RegExp(`stop it with 'strait down --state-dir ${world.stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`));
  });

  test("strait get -o jsonpath reads the world's objects", () => {
    const r = strait(['get', 'svc', 'echo', '-o', 'jsonpath={.spec.clusterIP}', ...S()]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^100\.1\.\d+\.\d+$/);
  });
});
