// Store durability (docs/store.md): acknowledged writes survive kill -9 of the process holding the store.
// A server child holds the store; concurrent writer children write through the API and
// record every acknowledged write; the server is killed with SIGKILL mid-stream; the
// store is reopened here and every acknowledged write must be there.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openEmbeddedStore, type KubeObject } from '../../src/platform/store/index.js';

const fixtures = join(process.env['STRAIT_ROOT'] ?? process.cwd(), 'dist', 'test', 'fixtures');
const WRITERS = 4;

function lines(child: ChildProcess, onLine: (l: string) => void): Promise<number | null> {
  let buf = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

test('every acknowledged write survives kill -9 of the store server (4 concurrent writers)', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-durable-'));
  const storeDir = join(dir, 'store');
  const socketPath = join(dir, 'store.sock');
  const token = 'durability-token';
  const children: ChildProcess[] = [];
  try {
    const server = spawn(process.execPath, [join(fixtures, 'store-server.js'), storeDir, socketPath, token], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(server);
    let ready!: () => void;
    const isReady = new Promise<void>((r) => {
      ready = r;
    });
    const serverExit = lines(server, (l) => {
      if (l === 'ready') ready();
    });
    await isReady;

    // last acknowledged value and resourceVersion per object name
    const acked = new Map<string, { rv: number; value: string }>();
    let total = 0;
    let killAt: () => void;
    const enough = new Promise<void>((r) => {
      killAt = r;
    });
    const stops: string[] = [];
    const writerExits = [];
    for (let id = 0; id < WRITERS; id++) {
      const w = spawn(process.execPath, [join(fixtures, 'store-writer.js'), socketPath, token, String(id)], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(w);
      writerExits.push(
        lines(w, (l) => {
          const [what, name, rv, value] = l.split(' ');
          if (what === 'ack') {
            const prev = acked.get(name!);
            if (!prev || prev.rv < Number(rv)) acked.set(name!, { rv: Number(rv), value: value! });
            if (++total === 400) killAt();
          } else if (what === 'stop') stops.push(name!);
        }),
      );
    }
    await enough;
    server.kill('SIGKILL');
    assert.equal(await serverExit, null, 'the server died by a signal');
    await Promise.all(writerExits);
    assert.equal(stops.length, WRITERS);
    for (const s of stops) assert.equal(s, 'STRAIT_ERR_STORE_UNAVAILABLE');

    const store = openEmbeddedStore({ dir: storeDir });
    try {
      const kind = { apiVersion: 'v1', kind: 'ConfigMap' };
      let checked = 0;
      for (const [name, { rv, value }] of acked) {
        const o = await store.get(kind, name);
        assert.ok(o, `acknowledged ${name} is missing after kill -9`);
        // a hot object may have been written again after its last ack reached us; never older
        assert.ok(Number(o.metadata.resourceVersion) >= rv, `${name}: rv ${o.metadata.resourceVersion} older than acknowledged ${rv}`);
        if (Number(o.metadata.resourceVersion) === rv) assert.equal((o['data'] as { value: string }).value, value);
        checked++;
      }
      assert.ok(total >= 400, `acknowledged writes: ${total}`);
      assert.ok(checked > WRITERS, `objects checked: ${checked}`);
      const after = await store.apply<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-crash' }, data: {} });
      assert.ok(Number(after.metadata.resourceVersion) > Math.max(...[...acked.values()].map((a) => a.rv)), 'resourceVersion keeps growing after the crash');
    } finally {
      await store.close();
    }
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
