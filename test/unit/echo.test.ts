// The world's strait/echo image (docs/world.md) answers every request with who asked.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startEcho } from '../../src/world/workloads/index.js';

test('echo: any method and path gets 200 and JSON naming the peer address and port it saw', async () => {
  const echo = await startEcho({ cluster: 'c', namespace: 'ns', pod: 'p', node: 'n' }, 0, '127.0.0.1');
  try {
    // curl binds 127.0.0.2 on its side: the echo must report exactly that
    const { stdout } = await promisify(execFile)(
      'curl',
      [
        '-s',
        '--interface',
        '127.0.0.2',
        '--local-port',
        '40111-40199',
        '-X',
        'POST',
        '-d',
        'x',
        '-w',
        '\n%{http_code} %{local_port}',
        `http://127.0.0.1:${echo.port}/a/b?c=1`,
      ],
      { encoding: 'utf8' },
    );
    const lines = stdout.trim().split('\n');
    const body = lines[0];
    const [code, localPort] = (lines.at(-1) ?? '').split(' ');
    assert.equal(code, '200');
    assert.deepEqual(JSON.parse(body ?? ''), {
      remoteAddress: '127.0.0.2',
      remotePort: Number(localPort),
      cluster: 'c',
      namespace: 'ns',
      pod: 'p',
      node: 'n',
      method: 'POST',
      path: '/a/b?c=1',
      host: `127.0.0.1:${echo.port}`,
    });
    assert.equal(echo.counters.requests, 1);
  } finally {
    await echo.close();
  }
});
