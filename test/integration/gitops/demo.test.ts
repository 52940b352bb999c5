// `strait demo` walks the signed-GitOps scenario (docs/gitops.md) with the real gpg, git, the
// code-hosting API and the strait CLI, and shows both outcomes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { run } from '../../helpers/run.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

test('strait demo shows the refused unsigned push and the synced signed push', async () => {
  const r = await run(process.execPath, [join(root, 'bin', 'strait.js'), 'demo'], { env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /POST \/api\/v1\/users\/gitea_admin\/tokens -> token/);
  assert.match(r.stdout, /Created 1 key\(s\) from input file\./);
  assert.match(r.stdout, /KEYID\s+TYPE\s+IDENTITY\n\s+[0-9A-F]{16}\s+ED25519\s+Developer <developer@example.com>/);
  assert.match(
    r.stdout,
    /unsigned commit [0-9a-f]{12} pushed -> Application guestbook: Sync Error; last sync: "Revision is not signed"; condition ComparisonError; Event ResourceComparison x1; applied: nothing/,
  );
  assert.match(
    r.stdout,
    /signed commit [0-9a-f]{12} pushed -> Application guestbook: Synced to [0-9a-f]{12}, signed by Developer <developer@example.com> \([0-9A-F]{16}\); ConfigMap guestbook\/guestbook-ui release=2-signed/,
  );
  assert.match(r.stdout, /demo: both outcomes as docs\/gitops\.md describes/);
});

test('strait demo gitops --world: without a running world exit 5; world-only options without --world and --keep with it exit 2', () => {
  const S = mkdtempSync(join(tmpdir(), 'strait-noworld-'));
  try {
    const cli = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'demo', 'gitops', ...args], { encoding: 'utf8', cwd: S });
    const none = cli('--world', '--state-dir', S);
    assert.equal(none.status, 5, none.stderr);
    assert.match(none.stderr, /STRAIT_ERR_WORLD_NOT_RUNNING/);
    assert.equal(existsSync(join(S, 'alice.asc')), false, 'nothing written');
    for (const [args, flag] of [
      [['--public-key', 'k.asc'], '--public-key'],
      [['--dir', 'd'], '--dir'],
      [['--state-dir', S], '--state-dir'],
      [['--world', '--keep', '--state-dir', S], '--keep'],
    ] as const) {
      const r = cli(...args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`STRAIT_ERR_USAGE.*${flag}`));
    }
    const help = cli('--help');
    assert.match(help.stdout, /--world/);
    assert.match(help.stdout, /--public-key <file>/);
  } finally {
    rmSync(S, { recursive: true, force: true });
  }
});
