// Every file the CLI reads (manifests, keys, broker-info, world files, its own state) goes
// through readInput: at most `limit` bytes (default 4 MiB), read in chunks, so that
// `apply -f /dev/zero`, `gpg add --from /dev/zero` or an endless pipe on `-f -` stop at
// the limit with STRAIT_ERR_INPUT_TOO_LARGE naming the input and the limit, instead of
// growing until the kernel kills the process.
import { closeSync, openSync, readSync } from 'node:fs';
import { E } from '../../base/errors/index.js';

/** Default limit for one input: manifests, OpenPGP keys, broker-info, world files. */
export const INPUT_LIMIT = 4 * 1024 * 1024;
const CHUNK = 64 * 1024;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * The text of `path` ("-" = standard input), at most `limit` bytes.
 * STRAIT_ERR_FILE_UNREADABLE when it cannot be read, STRAIT_ERR_INPUT_TOO_LARGE past the limit.
 */
export function readInput(path: string, opts: { limit?: number } = {}): string {
  const limit = opts.limit ?? INPUT_LIMIT;
  const stdin = path === '-';
  const name = stdin ? '<stdin>' : path;
  let fd: number;
  try {
    fd = stdin ? 0 : openSync(path, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw E.fileUnreadable(name, code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : (err as Error).message);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, limit + 1 - total));
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // a non-blocking standard input with nothing yet: wait a little and read again
        if (code === 'EAGAIN') {
          Atomics.wait(pause, 0, 0, 10);
          continue;
        }
        if (code === 'EOF') break;
        throw E.fileUnreadable(name, code === 'EISDIR' ? 'is a directory' : (err as Error).message);
      }
      if (n === 0) break;
      total += n;
      if (total > limit) throw E.inputTooLarge(name, limit);
      chunks.push(buf.subarray(0, n));
    }
  } finally {
    if (!stdin) closeSync(fd);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}
