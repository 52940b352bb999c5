// githost's ref name rule (a full-SHA-looking branch or tag is refused) and Gitea's tag
// protection patterns (a glob without separator, or a regular expression between "/").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refNameRefusal, tagMatcher } from '../../src/githost/server/index.js';

const SHA1 = 'a'.repeat(40);
const SHA256 = '0123456789abcdef'.repeat(4);

test('branch and tag names of 40 or 64 hex digits (any case) are refused; others are not', () => {
  for (const ref of [`refs/heads/${SHA1}`, `refs/tags/${SHA1}`, `refs/heads/${SHA1.toUpperCase()}`, `refs/heads/${SHA256}`]) {
    assert.match(refNameRefusal(ref) ?? '', /looks like a full commit SHA/, ref);
  }
  for (const ref of [
    `refs/heads/${SHA1.slice(1)}`,
    `refs/heads/${SHA1}0`,
    `refs/heads/x/${SHA1}`,
    `refs/heads/${'g'.repeat(40)}`,
    'refs/heads/main',
    `refs/notes/${SHA1}`,
    `refs/heads/${'a'.repeat(63)}`,
  ]) {
    assert.equal(refNameRefusal(ref), undefined, ref);
  }
});

test('tag protection patterns: globs cross nothing special, /regex/ is a regular expression, a pattern that does not compile is refused', () => {
  const cases: [string, string, boolean][] = [
    ['v*', 'v1.0', true],
    ['v*', 'release/v1', false],
    ['*', 'anything/at/all', true],
    ['v[0-9]', 'v7', true],
    ['v[0-9]', 'v10', false],
    ['{v,rel}-*', 'rel-x', true],
    ['/^v\\d+$/', 'v12', true],
    ['/^v\\d+$/', 'v1.2', false],
  ];
  for (const [pattern, tag, want] of cases) assert.equal(tagMatcher(pattern).test(tag), want, `${pattern} ~ ${tag}`);
  for (const bad of ['v{1,2', '[ab', '/(/']) assert.throws(() => tagMatcher(bad), /name_pattern .* is not a valid/, bad);
});
