// A spliced side that closes before its end (src/mesh/dataplane/proxy/splice.ts) cut the stream
// short: the client must see a reset, never a clean end of a truncated download. A side
// that ends cleanly still passes a clean end on.
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { connectSpliced, splice } from '../../src/mesh/dataplane/proxy/index.js';

const listen = (s: Server): Promise<number> => new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));

interface Outcome {
  bytes: number;
  how: 'end' | 'error';
  code?: string;
}

/** A download through a splice; `cut`: the proxy's upstream socket is destroyed after the first bytes. */
async function download(cut: boolean): Promise<Outcome> {
  const held: Socket[] = [];
  const source = createServer({ allowHalfOpen: true }, (s) => {
    held.push(s);
    s.on('error', () => {});
    s.write(Buffer.alloc(4096, 1));
    // the rest only when the test says so (a clean end), never when the upstream is cut
    if (!cut) setTimeout(() => s.end(Buffer.alloc(4096, 2)), 50);
  });
  const sourcePort = await listen(source);
  const ups: Socket[] = [];
  const front = createServer({ allowHalfOpen: true }, (down) => {
    down.on('error', () => {});
    const up = connectSpliced({ host: '127.0.0.1', port: sourcePort, allowHalfOpen: true });
    up.on('error', () => {});
    ups.push(up);
    splice(down, up);
  });
  const frontPort = await listen(front);
  try {
    const c = connect({ host: '127.0.0.1', port: frontPort, allowHalfOpen: true });
    let bytes = 0;
    c.on('data', (d: Buffer) => {
      bytes += d.length;
      if (cut && bytes >= 4096) ups[0]?.destroy(); // the upstream goes away in the proxy, before its end
    });
    const how = await new Promise<Omit<Outcome, 'bytes'>>((resolve) => {
      c.once('end', () => resolve({ how: 'end' }));
      c.once('error', (err: NodeJS.ErrnoException) => resolve({ how: 'error', code: err.code }));
    });
    c.destroy();
    return { bytes, ...how };
  } finally {
    for (const s of [...held, ...ups]) s.destroy();
    front.close();
    source.close();
  }
}

test('a spliced side destroyed before its end resets the peer (no clean end of a cut stream)', async () => {
  const r = await download(true);
  assert.equal(r.bytes, 4096);
  assert.deepEqual({ how: r.how, code: r.code }, { how: 'error', code: 'ECONNRESET' });
});

test('a spliced side that ends cleanly passes a clean end on', async () => {
  const r = await download(false);
  assert.deepEqual(r, { bytes: 8192, how: 'end' });
});
