// `npm ci` (prepare) links bin/strait.js as `strait` so the README's bare commands work:
// created once, silent when already there, a dangling link replaced, anything else left
// alone with a message; and the linked command runs under any name and directory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const source = join(root, 'bin', 'strait.js');
const link = (dir: string) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'link-bin.mjs'), '--dir', dir], { encoding: 'utf8', env: { ...process.env, CI: '', STRAIT_NO_LINK: '' } });

test('link-bin: creates the link, then is silent; the linked strait runs from any directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-link-'));
  try {
    const first = link(dir);
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.stderr, `strait: linked ${join(dir, 'strait')} → ${source}\n`);
    assert.equal(readlinkSync(join(dir, 'strait')), source);
    const again = link(dir);
    assert.equal(again.status, 0);
    assert.equal(again.stderr, '', 'idempotent and quiet');
    const run = spawnSync(join(dir, 'strait'), ['version'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^strait \d+\.\d+\.\d+/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('link-bin: replaces a link to a checkout that is gone, leaves a live one and a file alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-link-'));
  try {
    symlinkSync('/nonexistent/checkout/bin/strait.js', join(dir, 'strait'));
    const r = link(dir);
    assert.match(r.stderr, /relinked .* \(it pointed to \/nonexistent\/checkout\/bin\/strait\.js, which is gone\)/);
    assert.equal(readlinkSync(join(dir, 'strait')), source);
    rmSync(join(dir, 'strait'));
    const other = join(dir, 'other.js');
    writeFileSync(other, '');
    symlinkSync(other, join(dir, 'strait'));
    assert.match(link(dir).stderr, /points to .*other\.js; left as is/);
    assert.equal(readlinkSync(join(dir, 'strait')), other);
    rmSync(join(dir, 'strait'));
    writeFileSync(join(dir, 'strait'), '#!/bin/sh\n');
    assert.match(link(dir).stderr, /exists and is not a link strait made; left as is/);
    assert.ok(lstatSync(join(dir, 'strait')).isFile());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
