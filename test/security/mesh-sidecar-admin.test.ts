// Sidecar admin API (docs/mesh.md): a workload shares its sidecar's network namespace; under the mesh agent
// (--config-ipc) it must not be able to reconfigure the sidecar (e.g. switch STRICT off)
// through the admin listener. Only the agent's IPC channel configures it.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { curl, serverConfig, startEchoApp, testCa } from '../mesh/helpers.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

test("PUT /config is refused with --config-ipc; the agent's IPC push applies", async () => {
  const app = await startEchoApp();
  const dir = mkdtempSync(join(tmpdir(), 'strait-admin-'));
  const cert = testCa().issueSync('mesh', 'echo');
  writeFileSync(join(dir, 'c.json'), JSON.stringify(serverConfig(cert, 'STRICT')));
  const child = fork(
    join(root, 'dist', 'agents', 'sidecar', 'main.js'),
    [
      '--config',
      join(dir, 'c.json'),
      '--config-ipc',
      '--bind',
      '127.0.0.1',
      '--inbound-port',
      '0',
      '--outbound-port',
      '0',
      '--admin',
      '127.0.0.1:0',
      '--app',
      `127.0.0.1:${app.port}`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } },
  );
  try {
    const ready = await new Promise<{ inbound: number }>((r) => child.once('message', (m) => r(m as { inbound: number })));
    const adminLine = await new Promise<string>((r) => child.stdout!.once('data', (d) => r(String(d))));
    const admin = JSON.parse(adminLine.split('\n')[0] as string).admin as number;
    const res = await fetch(`http://127.0.0.1:${admin}/config`, { method: 'PUT', body: JSON.stringify(serverConfig(cert, 'DISABLE')) });
    assert.equal(res.status, 403);
    assert.equal((await curl([`http://127.0.0.1:${ready.inbound}/`])).exit, 56, 'still STRICT');
    const applied = new Promise((r) =>
      child.on('message', (m: { type?: string }) => {
        if (m.type === 'config-applied') r(m);
      }),
    );
    child.send({ type: 'config', config: serverConfig(cert, 'PERMISSIVE') });
    await applied;
    assert.equal((await curl([`http://127.0.0.1:${ready.inbound}/`])).code, '200');
  } finally {
    child.kill('SIGTERM');
    await app.close();
  }
});
