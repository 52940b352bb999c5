// The control module process: configuration is validated once at start (unknown and
// renamed keys refused with a pointed message).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { run } from '../../helpers/run.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const main = join(root, 'dist', 'daemon', 'control', 'main.js');
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'strait-control-cfg-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const cases: { name: string; yaml: string; code: string; message: RegExp }[] = [
  { name: 'unknown key', yaml: 'namespace: argocd\nnamepsace: x\n', code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY', message: /unknown configuration key "namepsace"/ },
  { name: 'renamed key', yaml: 'port: 8080\n', code: 'STRAIT_ERR_CONFIG_RENAMED_KEY', message: /"port" .* was renamed to "listen"/ },
  { name: 'bad listen address', yaml: 'listen: "8080"\n', code: 'STRAIT_ERR_CONFIG_INVALID', message: /listen: "8080"/ },
  { name: 'bad namespace', yaml: 'namespace: Argo_CD\n', code: 'STRAIT_ERR_CONFIG_INVALID', message: /namespace: "Argo_CD"/ },
];

for (const c of cases) {
  test(`config: ${c.name}`, async () => {
    const file = join(dir, `${c.name.replace(/\W+/g, '-')}.yaml`);
    writeFileSync(file, c.yaml);
    const r = await run(process.execPath, [main, '--config', file, '--state-dir', dir]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^error ${c.code}: `));
    assert.match(r.stderr, c.message);
  });
}

test('the control module process starts on an embedded store, serves the API and /metrics, and stops on SIGTERM', async () => {
  const child = spawn(
    process.execPath,
    [main, '--state-dir', join(dir, 'state'), '--insecure', '--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0', '--poll-interval', '5'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  try {
    const deadline = Date.now() + 20_000;
    while (!out.includes('\n') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    const ready = JSON.parse(out.split('\n')[0] ?? '{}') as { ready?: boolean; api?: string; metrics?: string };
    assert.equal(ready.ready, true, err);
    const bad = await run('curl', ['-s', '-w', '\n%{http_code}', '-X', 'POST', `${ready.api}/api/v1/session`, '-d', '{"username":"admin","password":"wrong"}']);
    assert.match(bad.stdout, /Invalid username or password[\s\S]*\n401$/);
    // the generated password: in the Secret, and for this standalone process also in a 0600 file
    const pwFile = join(dir, 'state', 'initial-admin-password');
    assert.equal(statSync(pwFile).mode & 0o777, 0o600);
    const password = readFileSync(pwFile, 'utf8').trim();
    const good = await run('curl', ['-s', '-X', 'POST', `${ready.api}/api/v1/session`, '-d', JSON.stringify({ username: 'admin', password })]);
    assert.match(good.stdout, /^\{"token":"[\w-]+\.[\w-]+\.[\w-]+"\}$/);
    const metrics = await run('curl', ['-sf', ready.metrics as string]);
    assert.equal(metrics.status, 0);
    assert.match(metrics.stdout, /# TYPE strait_gitops_syncs_total counter/);
    const check = await run('promtool', ['check', 'metrics'], { input: metrics.stdout });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  } finally {
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, err);
  }
});
