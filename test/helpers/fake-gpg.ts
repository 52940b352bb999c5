// A fake `gpg` (and `gpg2`, `gpgv`) put first on PATH: it records every call in a file
// and fails, so a test can prove that code under test never runs gpg.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function installFakeGpg(dir: string): { calls(): string[]; restore(): void } {
  const bin = join(dir, 'fake-gpg-bin');
  const log = join(dir, 'gpg-calls.log');
  mkdirSync(bin, { recursive: true });
  for (const name of ['gpg', 'gpg2', 'gpgv', 'gpgsm']) {
    writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*" >> '${log}'\nexit 2\n`);
    chmodSync(join(bin, name), 0o755);
  }
  const before = process.env['PATH'];
  process.env['PATH'] = `${bin}:${before ?? ''}`;
  return {
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
    restore: () => {
      process.env['PATH'] = before;
    },
  };
}
