// connectSpliced reads into one reused buffer (src/mesh/dataplane/proxy/splice.ts): a chunk its peer still holds
// (queued in the peer's writable state, or half taken by the kernel) must not be
// overwritten by the next read. The peer here is corked most of the time, so that chunks
// queue up below its high-water mark while reading goes on, as a slow peer makes them.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { connectSpliced, splice } from '../../src/mesh/dataplane/proxy/index.js';

const listen = (s: Server): Promise<number> => new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));

test('a spliced plaintext upstream relays byte for byte while its peer holds chunks back', async () => {
  const data = randomBytes(2 << 20);
  const want = createHash('sha256').update(data).digest('hex');
  // the source writes 0.5-4 KiB at a time, yielding after each, so that reads stay small
  const source = createServer((s) => {
    let off = 0;
    const more = (): void => {
      while (off < data.length) {
        const n = Math.min(data.length - off, 512 + Math.floor(Math.random() * 3.5 * 1024));
        const ok = s.write(data.subarray(off, off + n));
        off += n;
        if (!ok) {
          s.once('drain', more);
          return;
        }
        setImmediate(more);
        return;
      }
      s.end();
    };
    more();
  });
  const sourcePort = await listen(source);
  let timer: NodeJS.Timeout | undefined;
  const front = createServer({ allowHalfOpen: true }, (down: Socket) => {
    splice(down, connectSpliced({ host: '127.0.0.1', port: sourcePort, allowHalfOpen: true }));
    down.cork();
    timer = setInterval(() => {
      down.uncork();
      down.cork();
    }, 3);
    down.once('finish', () => clearInterval(timer));
  });
  const frontPort = await listen(front);
  try {
    const got = await new Promise<string>((resolve, reject) => {
      const h = createHash('sha256');
      const c = connect({ host: '127.0.0.1', port: frontPort });
      c.on('data', (d: Buffer) => h.update(d));
      c.on('end', () => resolve(h.digest('hex')));
      c.on('error', reject);
    });
    assert.equal(got, want);
  } finally {
    clearInterval(timer);
    front.close();
    source.close();
  }
});
