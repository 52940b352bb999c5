import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const strait = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { encoding: 'utf8' });

test('strait --help lists commands and exits 0', () => {
  const r = strait('--help');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: strait/);
  assert.match(r.stdout, /version/);
});

test('strait with an unknown command exits 2 with a message', () => {
  const r = strait('no-such-command');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown command/);
});

test("strait version -o json prints the package version (package.json's, the one place it is written)", () => {
  const r = strait('version', '-o', 'json');
  assert.equal(r.status, 0, r.stderr);
  const pkg = JSON.parse(readFileSync(join(process.env['STRAIT_ROOT'] ?? process.cwd(), 'package.json'), 'utf8')) as { version: string };
  assert.equal(JSON.parse(r.stdout).version, pkg.version);
  assert.match(strait('version').stdout, new RegExp(`^strait ${pkg.version.replaceAll('.', '\\.')} \\(node v`));
});

// --cluster and --state-dir are the program's: before or after the command, in any order
const positions: { name: string; args: (dir: string) => string[] }[] = [
  { name: 'after the command', args: (d) => ['show', 'connections', '-o', 'json', '--cluster', 'cluster-b', '--state-dir', d] },
  { name: 'before the command', args: (d) => ['--cluster', 'cluster-b', '--state-dir', d, 'show', 'connections', '-o', 'json'] },
  { name: 'one before, one after', args: (d) => ['--state-dir', d, 'show', 'connections', '--cluster=cluster-b', '-o', 'json'] },
  { name: 'between the group and its command', args: (d) => ['show', '--cluster', 'cluster-b', 'connections', '-o', 'json', '--state-dir', d] },
];
for (const p of positions) {
  test(`global --cluster and --state-dir ${p.name}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-cli-globals-'));
    try {
      mkdirSync(join(dir, 'stores', 'cluster-b'), { recursive: true });
      const r = strait(...p.args(dir));
      assert.equal(r.status, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).cluster, 'cluster-b');
      assert.ok(readdirSync(join(dir, 'stores', 'cluster-b')).length > 0, 'the state dir given is the one used');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('a command shows the global options it takes in --help and refuses the others (exit 2)', () => {
  const show = strait('show', 'connections', '--help');
  assert.equal(show.status, 0, show.stderr);
  assert.match(show.stdout, /Global Options:[\s\S]*--cluster <name>[\s\S]*--state-dir <dir>/);
  const up = strait('up', '--help');
  assert.match(up.stdout, /--state-dir <dir>/);
  assert.doesNotMatch(up.stdout, /--cluster/);
  assert.doesNotMatch(strait('version', '--help').stdout, /Global Options/);
  for (const args of [
    ['up', '--cluster', 'x'],
    ['--cluster', 'x', 'version'],
    ['version', '--state-dir', '/nonexistent'],
  ]) {
    const r = strait(...args);
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, /unknown option '--(cluster|state-dir)'/);
  }
});

test('show, diagnose and verify with no world and no store of the cluster exit 5 and create nothing', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'strait-cli-noworld-')), 'state');
  try {
    for (const args of [['show', 'connections'], ['diagnose'], ['verify', '--tocluster', 'cluster-b']]) {
      const r = strait(...args, '--state-dir', dir);
      assert.equal(r.status, 5, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /STRAIT_ERR_WORLD_NOT_RUNNING: no world is running with state dir ".*state"/);
      assert.equal(existsSync(dir), false, `${args.join(' ')} created ${dir}`);
    }
  } finally {
    rmSync(dirname(dir), { recursive: true, force: true });
  }
});

test('strait --help into a reader that closes early (| head -1) exits without a stack', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [join(root, 'bin', 'strait.js'), 'verify', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy(); // the reader is gone before the help is written
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /EPIPE|Unhandled/);
});

test('strait up --detach names the state dir in its `strait down` hint unless it is the default one', async () => {
  const { downCommand } = await import('../../src/cli/world-file.js');
  const { resolveStateDir } = await import('../../src/platform/cli-kit/index.js');
  assert.equal(downCommand(resolveStateDir()), 'strait down');
  assert.equal(downCommand('/tmp/w1'), 'strait down --state-dir /tmp/w1');
  assert.equal(downCommand("/tmp/my world's"), "strait down --state-dir '/tmp/my world'\\''s'");
});
