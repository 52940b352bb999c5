// Signer rules (key list, identity globs, committer e-mail) and the one table of refusals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { E } from '../../../src/base/errors/index.js';
import {
  aboutSubject,
  checkSigner,
  emailOf,
  failureKind,
  identityGlobMatch,
  signatureFormatOf,
  SIGNATURE_FAILURES,
  type Signer,
} from '../../../src/platform/signatures/index.js';

const alice: Signer = {
  keyID: '1111222233334444',
  primaryKeyID: 'AAAABBBBCCCCDDDD',
  identities: ['Alice Tester <alice@example.com>', 'Alice <ALICE@work.example>'],
};

test('identity globs: "*" and "?" over the whole user ID, case-insensitive, nothing else special', () => {
  const cases: [string, string, boolean][] = [
    ['* <*@example.com>', 'Alice Tester <alice@example.com>', true],
    ['* <*@example.com>', 'Alice Tester <alice@example.com.evil>', false],
    ['* <*@example.com>', 'Mallory <mallory@evil.example> <x@example.com>', true],
    ['Alice Tester <alice@example.com>', 'alice tester <ALICE@example.com>', true],
    ['Alice ?ester*', 'Alice Tester <a@b>', true],
    ['a.c', 'abc', false],
    ['[ab]*', 'a', false],
    ['*', '', true],
  ];
  for (const [p, v, want] of cases) assert.equal(identityGlobMatch(p, v), want, `${p} ~ ${v}`);
});

test('emailOf takes the address in angle brackets, lower-cased', () => {
  assert.equal(emailOf('Alice <ALICE@Example.com>'), 'alice@example.com');
  assert.equal(emailOf('no address'), '');
  assert.equal(emailOf('bare@example.com'), 'bare@example.com');
});

test('checkSigner: the key list, then identities, then the committer e-mail', () => {
  assert.equal(checkSigner(alice, {}), undefined, 'no rules: any key');
  assert.equal(checkSigner(alice, { allowedKeyIDs: ['aaaabbbbccccdddd'] }), undefined, 'the primary key listed (any case)');
  assert.equal(checkSigner(alice, { allowedKeyIDs: ['1111222233334444'] }), undefined, 'the signing subkey listed');
  assert.equal(
    checkSigner(alice, { allowedKeyIDs: ['0000000000000000AAAABBBBCCCCDDDD'.padStart(40, '0')] }),
    undefined,
    'a fingerprint ending in the primary key ID',
  );
  const notListed = checkSigner(alice, { allowedKeyIDs: ['9999999999999999'], allowedBy: 'policy 3' });
  assert.deepEqual(notListed, {
    status: 'not-allowed',
    message: 'Revision is signed with key 1111222233334444 (subkey of AAAABBBBCCCCDDDD), which is not allowed by policy 3',
  });

  assert.equal(checkSigner(alice, { identities: ['* <*@work.example>'] }), undefined);
  const noMatch = checkSigner(alice, { identities: ['* <*@other.example>'] });
  assert.equal(noMatch?.status, 'signer-not-allowed');
  assert.equal(
    noMatch?.message,
    'Revision is signed with key 1111222233334444 (subkey of AAAABBBBCCCCDDDD) of "Alice Tester <alice@example.com>", "Alice <ALICE@work.example>", which matches none of the allowed signer identities ("* <*@other.example>")',
  );

  assert.equal(checkSigner(alice, { committerEmailMatchesSigner: true }, 'Alice@Example.com'), undefined);
  const other = checkSigner(alice, { committerEmailMatchesSigner: true }, 'mallory@example.com');
  assert.equal(other?.status, 'signer-not-allowed');
  assert.match(
    other?.message ?? '',
    /but its committer e-mail "mallory@example.com" is not the signer's verified e-mail \("alice@example.com", "alice@work.example"\)$/,
  );
  // the e-mail must belong to an identity that matched the pattern, not to any of the key's
  const tied = checkSigner(alice, { identities: ['* <*@work.example>'], committerEmailMatchesSigner: true }, 'alice@example.com');
  assert.equal(tied?.status, 'signer-not-allowed');
  assert.equal(checkSigner(alice, { committerEmailMatchesSigner: true })?.status, 'signer-not-allowed', 'no committer e-mail');
  assert.equal(
    checkSigner({ ...alice, identities: [] }, { committerEmailMatchesSigner: true }, 'alice@example.com')?.status,
    'signer-not-allowed',
    'no verified identity: no e-mail',
  );
});

test("the refusal table: one code, one reason per kind; codes are the error factories'", () => {
  const reasons = new Set<string>();
  for (const [kind, info] of Object.entries(SIGNATURE_FAILURES)) {
    assert.match(info.code, /^STRAIT_ERR_SIGNATURE_[A-Z_]+$/, kind);
    assert.equal(info.error.code, info.code);
    assert.equal(info.error('x').code, info.code);
    assert.equal(info.error('x').kind, 'denied');
    assert.match(info.reason, /^Signature[A-Z][A-Za-z]+$/);
    assert.ok(!reasons.has(info.reason), `${kind}: reason ${info.reason} is used twice`);
    reasons.add(info.reason);
  }
  assert.equal(SIGNATURE_FAILURES['history-unsigned'].code, E.signatureHistoryUnsigned.code);
  assert.equal(failureKind('unsigned', true), 'history-unsigned');
  assert.equal(failureKind('unsigned', false), 'unsigned');
  assert.equal(failureKind('revoked', true), 'revoked');
});

test('aboutSubject rewrites a message about the revision for another subject', () => {
  assert.equal(aboutSubject('Revision is not signed', 'History commit abc by A <a@x>'), 'History commit abc by A <a@x> is not signed');
  assert.equal(aboutSubject('Revision has a bad signature from key K: x', 'Commit c'), 'Commit c has a bad signature from key K: x');
  assert.equal(aboutSubject('something else', 'Commit c'), 'Commit c: something else');
});

test('signature formats are told apart by their armour', () => {
  assert.equal(signatureFormatOf('-----BEGIN PGP SIGNATURE-----\n...'), 'openpgp');
  assert.equal(signatureFormatOf('-----BEGIN SSH SIGNATURE-----\n...'), 'ssh');
  assert.equal(signatureFormatOf('-----BEGIN SIGNED MESSAGE-----\n...'), 'x509');
  assert.equal(signatureFormatOf('garbage'), undefined);
});
