// The CLI reads every input file with a size limit: an endless file (/dev/zero) or an
// endless pipe on `-f -` stops at the limit with STRAIT_ERR_INPUT_TOO_LARGE naming the
// input and the limit, quickly and in little memory, instead of growing until the
// kernel kills the process (~20 GB before the limit existed).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { BIN } from '../helpers/world.js';

/** Run the CLI with standard input from `stdinFile`; its peak RSS (kB) from /proc while it runs. */
function runCli(args: string[], stdinFile = '/dev/null'): Promise<{ status: number | null; stderr: string; peakKb: number; ms: number }> {
  const fd = openSync(stdinFile, 'r');
  const t0 = Date.now();
  // a cap well above the limit, so the old code is killed here instead of by the OOM killer
  const child = spawn(process.execPath, ['--max-old-space-size=256', BIN, ...args], { stdio: [fd, 'ignore', 'pipe'] });
  closeSync(fd);
  let stderr = '';
  let peakKb = 0;
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const sampler = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
      // a CLI without the limit is stopped here, long before it could hurt the machine
      if (peakKb > 1024 * 1024) child.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }, 20);
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.on('exit', (status) => {
      clearInterval(sampler);
      clearTimeout(killer);
      resolve({ status, stderr, peakKb, ms: Date.now() - t0 });
    }),
  );
}

const CASES: { name: string; args: string[]; stdin?: string; input: string }[] = [
  { name: 'apply -f /dev/zero', args: ['apply', '-f', '/dev/zero'], input: '"/dev/zero"' },
  { name: 'apply -f - from an endless pipe', args: ['apply', '-f', '-'], stdin: '/dev/zero', input: '"<stdin>"' },
  { name: 'gpg add --from /dev/zero', args: ['gpg', 'add', '--from', '/dev/zero'], input: '"/dev/zero"' },
  { name: 'join /dev/zero', args: ['join', '/dev/zero', '--clusterid', 'x'], input: '"/dev/zero"' },
  { name: 'up --world /dev/zero', args: ['up', '--world', '/dev/zero', '--state-dir', '/nonexistent-strait-test'], input: '"/dev/zero"' },
];

for (const c of CASES) {
  test(`${c.name}: refused at the 4 MiB limit with a clear error, in bounded memory`, async () => {
    const r = await runCli(c.args, c.stdin);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(
      r.stderr,
      `error STRAIT_ERR_INPUT_TOO_LARGE: ${c.input} is larger than 4194304 bytes (4 MiB), the most strait reads from one input; split it or check that it is the file you meant\n`,
    );
    assert.ok(r.peakKb < 200 * 1024, `peak RSS ${r.peakKb} kB`);
    assert.ok(r.ms < 15_000, `${r.ms} ms`);
  });
}
