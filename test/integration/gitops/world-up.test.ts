// GitOps in the local world (docs/gitops.md): `strait up` runs the control module of cluster-a; a pod reaches its API at
// http://198.18.0.1:8080, and the admin password is read from the Secret with
// `strait get`, as docs/gitops.md says.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { strait, upWorld, type TestWorld } from '../../helpers/world.js';

let world: TestWorld;

before(() => {
  world = upWorld();
});
after(() => world?.cleanup());

test('the control module runs in the world and a pod logs in with the password from the Secret', () => {
  assert.ok(
    world.record().components.some((c) => c.name === 'cluster-a.control'),
    JSON.stringify(world.record().components),
  );
  const secret = strait(['get', 'secret', 'argocd-secret', '-n', 'argocd', '--cluster', 'cluster-a', '-o', 'json', '--state-dir', world.stateDir]);
  assert.equal(secret.status, 0, secret.stderr);
  const password = Buffer.from(JSON.parse(secret.stdout).data['admin.password'], 'base64').toString();
  assert.match(password, /^[\w-]{16}$/);
  const bad = world.exec('cluster-a/default/client', [
    'curl',
    '-s',
    '-m',
    '5',
    '-X',
    'POST',
    'http://198.18.0.1:8080/api/v1/session',
    '-d',
    '{"username":"admin","password":"x"}',
  ]);
  assert.equal(bad.status, 0, bad.stderr);
  assert.equal(JSON.parse(bad.stdout).message, 'Invalid username or password');
  const good = world.exec('cluster-a/default/client', [
    'curl',
    '-s',
    '-m',
    '5',
    '-X',
    'POST',
    'http://198.18.0.1:8080/api/v1/session',
    '-d',
    JSON.stringify({ username: 'admin', password }),
  ]);
  assert.match(JSON.parse(good.stdout).token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
});
