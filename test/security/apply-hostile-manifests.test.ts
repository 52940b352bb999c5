// Hostile manifests through the real `strait apply` process: a YAML alias bomb ("billion
// laughs") and nesting deeper than any manifest needs are the user's input errors: exit
// 2 with STRAIT_ERR_MANIFEST_PARSE naming the file and document, no stack trace, and
// quickly (nothing is expanded). No store is needed: manifests are read before any write.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

function strait(args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr, ms: Date.now() - t0 });
    });
    child.stdin?.end(input);
  });
}

// nine levels of nine aliases each: 9^9 (387 million) strings if expanded
const BOMB = [
  'apiVersion: v1',
  'kind: ConfigMap',
  'metadata: {name: lol}',
  'data:',
  '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((l, i) => {
    const p = 'abcdefghi'[i];
    return `  ${l}: &${l} [*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p}]`;
  }),
  '',
].join('\n');

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'strait-apply-hostile-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const cases: { name: string; file: string; text: string; reason: RegExp }[] = [
  { name: 'a YAML alias bomb', file: 'bomb.yaml', text: BOMB, reason: /aliases expand more than 100 times/ },
  {
    name: 'a second document that is an alias bomb',
    file: 'two.yaml',
    text: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n${BOMB}`,
    reason: /document 2: .*aliases expand/,
  },
  {
    name: 'mappings nested 300 deep',
    file: 'deep.yaml',
    text: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${'{a: '.repeat(300)}x${'}'.repeat(300)}\n`,
    reason: /nest deeper than 128 levels/,
  },
  {
    name: 'sequences nested 10,000 deep',
    file: 'deeper.yaml',
    text: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`,
    reason: /not valid YAML\/JSON/,
  },
];
for (const c of cases) {
  test(`strait apply of ${c.name}: exit 2, STRAIT_ERR_MANIFEST_PARSE, no stack trace`, async () => {
    const file = join(dir, c.file);
    writeFileSync(file, c.text);
    const r = await strait(['apply', '-f', file, '--state-dir', join(dir, 'no-world')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error STRAIT_ERR_MANIFEST_PARSE: /);
    assert.ok(r.stderr.includes(file), r.stderr);
    assert.match(r.stderr, c.reason);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });
}

test('the same alias bomb on standard input: exit 2', async () => {
  const r = await strait(['apply', '-f', '-', '--state-dir', join(dir, 'no-world')], BOMB);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^error STRAIT_ERR_MANIFEST_PARSE: <stdin> document 1: .*aliases expand/);
});
