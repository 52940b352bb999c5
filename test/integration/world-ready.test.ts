// World readiness (docs/world.md): "world ready" means every server a README command talks to
// answers. Right after `strait up --detach` returns, without a retry: `strait show
// connections` lists every gateway pair connected (remote gateway and RTT known), `strait status` lists the control API
// and githost on host loopback, dig in a pod answers a cluster.local name, `strait login`
// to the host URL works (and to the world-internal address is refused, naming the host
// URL), and githost's links name its host URL.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freeTcpPort } from '../helpers/free-port.js';
import { BIN, strait, upWorld } from '../helpers/world.js';

test('the README commands work the moment strait up --detach returns', async () => {
  // githost's host port is not 3000 here, so that 127.0.0.1:PORT does not also exist in the
  // world root: the control module must fetch the host-URL repoURL through the world's address
  const githostPort = await freeTcpPort();
  process.env['STRAIT_GITHOST_HOST_PORT'] = String(githostPort);
  const world = upWorld();
  delete process.env['STRAIT_GITHOST_HOST_PORT'];
  const config = mkdtempSync(join(tmpdir(), 'strait-cfg-'));
  try {
    const { stateDir } = world;
    const s = (...args: string[]) => strait([...args, '--state-dir', stateDir]);
    // every gateway pair is connected and its records are written
    for (const [cluster, remote] of [
      ['cluster-a', 'cluster-b'],
      ['cluster-b', 'cluster-a'],
    ] as const) {
      const r = s('show', 'connections', '--cluster', cluster);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^GATEWAY +CLUSTER +REMOTE IP .*\\n.* ${remote} +198\\.18\\.\\d+\\.\\d+ .* connected `, 'm'), r.stdout);
      // ... naming the remote gateway and with a first RTT already (no `<none>` in the row)
      const row = r.stdout.split('\n').find((l) => l.includes(` ${remote} `)) ?? '';
      assert.doesNotMatch(row, /<none>/, r.stdout);
      assert.match(row, /connected +\d+(\.\d+)?(µs|ms)/, r.stdout);
    }
    const rec = JSON.parse(s('status', '-o', 'json').stdout) as {
      control?: string;
      githost?: string;
      inWorld: { control?: string; githost?: string };
      clusters: { name: string; services: { name: string; clusterIP?: string }[] }[];
    };
    assert.match(rec.control ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(rec.githost, `http://127.0.0.1:${githostPort}`);
    assert.equal(rec.inWorld.control, 'http://198.18.0.1:8080');
    assert.equal(rec.inWorld.githost, 'http://198.18.0.1:3000');
    const text = s('status');
    assert.equal(text.status, 0, text.stderr);
    assert.ok(text.stdout.includes(`control API: ${rec.control} — strait login ${rec.control!.slice('http://'.length)} --plaintext`), text.stdout);
    assert.ok(text.stdout.includes(`githost: ${rec.githost} (in the world http://198.18.0.1:3000)`), text.stdout);

    // DNS answers in a pod
    const echoIP = rec.clusters.find((c) => c.name === 'cluster-a')!.services.find((x) => x.name === 'echo')!.clusterIP;
    const dig = world.exec('cluster-a/default/client', ['dig', '+short', '+time=2', '+tries=1', 'echo.default.svc.cluster.local']);
    assert.equal(dig.stdout.trim(), echoIP, dig.stderr);

    // the login of the README, from the host
    const password = readFileSync(join(stateDir, 'control', 'initial-admin-password'), 'utf8').trim();
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [BIN, ...args], {
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, STRAIT_CONFIG_DIR: config, STRAIT_STATE_DIR: stateDir },
      });
    const login = cli('login', rec.control!.slice('http://'.length), '--plaintext', '--username', 'admin', '--password', password);
    assert.equal(login.status, 0, login.stderr);
    assert.match(login.stdout, /'admin:login' logged in successfully/);
    const apps = cli('app', 'list');
    assert.equal(apps.status, 0, apps.stderr);
    // the world-internal address is refused from the host, naming the host URL
    const inside = cli('login', '198.18.0.1:8080', '--plaintext', '--username', 'admin', '--password', password);
    assert.equal(inside.status, 2, inside.stderr);
    assert.match(
      inside.stderr,
      /STRAIT_ERR_WORLD_ADDRESS: "198\.18\.0\.1:8080" is an address inside the local world.*from the host use http:\/\/127\.0\.0\.1:\d+/,
    );
    assert.ok(inside.stderr.includes(rec.control!), inside.stderr);
    // ... while inside a pod it is the address to use
    const fromPod = world.exec('cluster-a/default/client', [
      process.execPath,
      BIN,
      'login',
      '198.18.0.1:8080',
      '--plaintext',
      '--username',
      'admin',
      '--password',
      password,
    ]);
    assert.equal(fromPod.status, 0, fromPod.stderr);

    // githost answers on its host URL, and its links name it
    const user = s('admin', 'user', 'create', '--username', 'gitea_admin', '--password', 'secret-pass', '--email', 'a@example.com', '--admin');
    assert.equal(user.status, 0, user.stderr);
    const created = spawnSync(
      'curl',
      ['-s', '-u', 'gitea_admin:secret-pass', '-H', 'Content-Type: application/json', '-d', '{"name":"app"}', `${rec.githost}/api/v1/user/repos`],
      { encoding: 'utf8' },
    );
    const repo = JSON.parse(created.stdout) as { clone_url: string; html_url: string };
    assert.equal(repo.clone_url, `${rec.githost}/gitea_admin/app.git`);
    assert.equal(repo.html_url, `${rec.githost}/gitea_admin/app`);
    const missing = JSON.parse(spawnSync('curl', ['-s', `${rec.githost}/api/v1/nope`], { encoding: 'utf8' }).stdout) as { url: string };
    assert.equal(missing.url, `${rec.githost}/api/swagger`);
    // git clones by that link from the host
    const dir = join(config, 'clone');
    const clone = spawnSync('git', ['clone', '-q', repo.clone_url, dir], { encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    assert.equal(clone.status, 0, clone.stderr);
    // ... and an Application whose repoURL is that link syncs: the control module fetches it inside the world
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        encoding: 'utf8',
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
      });
      assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
    };
    mkdirSync(join(dir, 'app'));
    writeFileSync(join(dir, 'app', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: from-git }\ndata: { via: host-url }\n');
    git('add', '.');
    git('commit', '-q', '-m', 'a ConfigMap');
    git('push', '-q', repo.clone_url.replace('http://', 'http://gitea_admin:secret-pass@'), 'HEAD:main');
    const app = [
      'apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: { name: ready, namespace: argocd }\nspec:\n  sourceRepos: ["*"]\n  destinations: [{ server: "https://kubernetes.default.svc", namespace: default }]\n',
      `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: { name: from-host-url, namespace: argocd }\nspec:\n  project: ready\n  source: { repoURL: "${repo.clone_url}", path: app, targetRevision: main }\n  destination: { server: "https://kubernetes.default.svc", namespace: default }\n  syncPolicy: { automated: { prune: true } }\n`,
    ].join('---\n');
    const applied = strait(['apply', '--cluster', 'cluster-a', '-f', '-', '--state-dir', stateDir], app);
    assert.equal(applied.status, 0, applied.stderr);
    const synced = (): boolean => s('get', 'configmap', 'from-git', '-n', 'default', '--cluster', 'cluster-a').status === 0;
    const deadline = Date.now() + 30_000;
    while (!synced() && Date.now() < deadline) spawnSync('sleep', ['0.5']);
    const status = s('get', 'application', 'from-host-url', '-n', 'argocd', '--cluster', 'cluster-a', '-o', 'json').stdout;
    assert.ok(synced(), `the Application synced from ${repo.clone_url}: ${status}`);
  } finally {
    world.cleanup();
    rmSync(config, { recursive: true, force: true });
  }
});
