// scripts/setup-system.sh --check: says so when everything is installed, and says which Go
// `npm test` needs (test/k8s/apiserver/go.mod) when Go is missing or too old.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const script = join(root, 'scripts', 'setup-system.sh');
const check = (path: string) => spawnSync('bash', [script, '--check'], { encoding: 'utf8', env: { ...process.env, PATH: path } });
const PATH = process.env['PATH'] ?? '';
const allInstalled = check(PATH).status === 0;
// the highest `go` line of the test peers' go.mod files (the list setup-system.sh reads)
const WANT = ['test/k8s/apiserver/go.mod', 'test/gitea/server/go.mod', 'test/argocd/cli/go.mod']
  .map((f) => /^go (\S+)$/m.exec(readFileSync(join(root, f), 'utf8'))?.[1] ?? '0')
  .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
  .at(-1) as string;

test('--check on a machine with everything installed says so (exit 0)', { skip: allInstalled ? false : 'some Debian packages are missing here' }, () => {
  const r = check(PATH);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /all \d+ system commands strait needs are installed/);
});

test('--check names the Go version npm test needs when the Go on PATH is too old', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-fakego-'));
  try {
    writeFileSync(join(dir, 'go'), '#!/bin/sh\n[ "$1" = env ] && echo go1.19.8\n');
    chmodSync(join(dir, 'go'), 0o755);
    const r = check(`${dir}${delimiter}${PATH}`);
    assert.match(
      r.stderr,
      new RegExp(
        `Go 1\\.19\\.8 at .* is older than ${WANT.replace(/\./g, '\\.')}, which 'npm test' needs to build kube-apiserver and Gitea \\(test/k8s/apiserver/go\\.mod`,
      ),
    );
    assert.match(r.stderr, new RegExp(`install Go ${WANT.replace(/\./g, '\\.')} or newer`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--check says Go is missing and how to get it when no go is on PATH', () => {
  const noGo = PATH.split(delimiter)
    .filter((d) => !existsSync(join(d, 'go')))
    .join(delimiter);
  const r = check(noGo);
  assert.match(
    r.stderr,
    new RegExp(`Go >= ${WANT.replace(/\./g, '\\.')} is not installed: 'npm test' skips the tests that need kube-apiserver or Gitea without it`),
  );
  assert.match(r.stderr, /golang-go is 1\.19, too old/);
});
