// AppProject spec.sourceIntegrity: which policy applies to a repository (Argo CD 3.5's
// rules), and the schema and rules every write path checks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { integrityPolicyFor as integrityPolicyForTest, policyMatches as policyMatchesForTest, type AppProject } from '../../src/gitops/control/index.js';
import { validateObject } from '../../src/platform/resources/index.js';

const KEY = '0123456789ABCDEF';
const proj = (spec: AppProject['spec']): AppProject => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AppProject',
  metadata: { name: 'p', namespace: 'argocd' },
  spec,
});
const pol = (...urls: string[]) => ({ repos: urls.map((url) => ({ url })), gpg: { mode: 'strict' as const, keys: [KEY] } });

test('a policy applies when a glob matches and no "!" glob does; "*" crosses "/"; URLs compare normalized', () => {
  const cases: [string[], string, boolean][] = [
    [['https://github.com/foo/*'], 'https://github.com/foo/bar.git', true],
    [['https://github.com/foo/*'], 'https://github.com/foo/group/sub/repo', true],
    [['https://github.com/foo/*'], 'HTTPS://GitHub.com:443/foo/bar/', true],
    [['https://github.com/foo/*'], 'https://github.com/foobar/x', false],
    [['https://github.com/*', '!https://github.com/public/*'], 'https://github.com/public/docs', false],
    [['https://github.com/*', '!https://github.com/public/*'], 'https://github.com/team/app', true],
    [['!https://github.com/public/*'], 'https://github.com/team/app', false],
    [['*'], '/srv/git/repo', true],
    [['git@github.com:foo/*'], 'ssh://git@github.com/foo/bar', true],
  ];
  for (const [urls, repo, want] of cases) assert.equal(policyMatchesForTest(pol(...urls), repo), want, `${urls.join(' ')} ~ ${repo}`);
});

test('which rules apply: legacy signatureKeys as one head policy, first and only matching policy, none, conflicts', () => {
  const legacy = integrityPolicyForTest(proj({ signatureKeys: [{ keyID: KEY }] }), 'https://x/y');
  assert.equal(legacy.kind, 'enforced');
  assert.equal(legacy.kind === 'enforced' && legacy.policy.mode, 'head');
  assert.equal(legacy.kind === 'enforced' && legacy.policy.name, 'signatureKeys');
  assert.equal(integrityPolicyForTest(proj({}), 'https://x/y').kind, 'open');
  const si = proj({
    sourceIntegrity: { git: { policies: [pol('https://a/*'), { ...pol('https://b/*'), gpg: { mode: 'none' } }, pol('https://c/*'), pol('https://c/x*')] } },
  });
  const a = integrityPolicyForTest(si, 'https://a/r');
  assert.equal(a.kind === 'enforced' && a.policy.name, 'sourceIntegrity.git.policies[0]');
  assert.deepEqual(a.kind === 'enforced' && a.policy.rules, { allowedKeyIDs: [KEY], allowedBy: "the project's sourceIntegrity.git.policies[0].gpg.keys" });
  assert.equal(integrityPolicyForTest(si, 'https://b/r').kind, 'open', 'mode none');
  assert.equal(integrityPolicyForTest(si, 'https://z/r').kind, 'open', 'no policy matches');
  const conflict = integrityPolicyForTest(si, 'https://c/xyz');
  assert.equal(conflict.kind, 'conflict');
  assert.match(
    conflict.kind === 'conflict' ? conflict.message : '',
    /^multiple \(2\) git source integrity policies of project 'p' match repo URL https:\/\/c\/xyz \(policies 2, 3\)/,
  );
  const rules = integrityPolicyForTest(
    proj({ sourceIntegrity: { git: { policies: [{ ...pol('*'), strait: { signerIdentities: ['* <*@x>'], committerEmailMatchesSigner: true } }] } } }),
    'r',
  );
  assert.deepEqual(rules.kind === 'enforced' && rules.policy.rules.identities, ['* <*@x>']);
  assert.equal(rules.kind === 'enforced' && rules.policy.rules.committerEmailMatchesSigner, true);
});

test('the schema and rules of spec.sourceIntegrity (every write path checks them)', () => {
  const bad: [AppProject['spec'] | Record<string, unknown>, RegExp][] = [
    [
      { signatureKeys: [{ keyID: KEY }], sourceIntegrity: { git: { policies: [pol('*')] } } },
      /spec.sourceIntegrity: cannot be used together with spec.signatureKeys/,
    ],
    [{ sourceIntegrity: {} }, /spec.sourceIntegrity: must specify at least one of git or helm/],
    [
      { sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }], gpg: { mode: 'paranoid' } }] } } },
      /spec.sourceIntegrity.git.policies\[0\].gpg.mode: must be one of none, head, strict/,
    ],
    [
      { sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }], gpg: { mode: 'head', keys: ['nope'] } }] } } },
      /gpg.keys\[0\]: must be an OpenPGP key ID/,
    ],
    [{ sourceIntegrity: { git: { policies: [{ repos: ['*'], gpg: { mode: 'head' } }] } } }, /policies\[0\].repos\[0\]: must be an object/],
    [{ sourceIntegrity: { git: { policies: [{ repos: [], gpg: { mode: 'head' } }] } } }, /policies\[0\].repos: must have at least 1 item/],
    [{ sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }] }] } } }, /policies\[0\].gpg: is required/],
    [
      { sourceIntegrity: { git: { policies: [{ ...pol('*'), strait: { signerIdentity: ['x'] } }] } } },
      /policies\[0\].strait.signerIdentity: is not a strait signer rule \(known: signerIdentities, committerEmailMatchesSigner\)/,
    ],
  ];
  for (const [spec, re] of bad) {
    assert.throws(
      () => validateObject(proj(spec as AppProject['spec'])),
      (e: Error) => re.test(e.message),
      `${JSON.stringify(spec)} -> ${re}`,
    );
  }
  // accepted: an empty signatureKeys list beside sourceIntegrity, and helm policies (kept, never applied)
  validateObject(proj({ signatureKeys: [], sourceIntegrity: { git: { policies: [pol('*')] }, helm: { policies: [] } } }));
});

test('spec.sshSigners keeps enforcing where no sourceIntegrity git policy applies (adding a policy for one repository does not open the others)', () => {
  const sshSigners = [{ principal: 'alice@example.com' }];
  const sshOnly = integrityPolicyForTest(proj({ sshSigners }), 'https://team/app');
  assert.equal(sshOnly.kind === 'enforced' && sshOnly.policy.name, 'sshSigners');
  const other = proj({ sshSigners, sourceIntegrity: { git: { policies: [pol('https://other/*')] } } });
  const app = integrityPolicyForTest(other, 'https://team/app');
  assert.equal(app.kind, 'enforced', 'no git policy matches, sshSigners still enforce');
  assert.deepEqual(app.kind === 'enforced' && [app.policy.mode, app.policy.rules.allowedKeyIDs, app.policy.sshRules], ['head', [], sshSigners]);
  const matched = integrityPolicyForTest(other, 'https://other/x');
  assert.deepEqual(matched.kind === 'enforced' && [matched.policy.name, matched.policy.mode, matched.policy.sshRules], [
    'sourceIntegrity.git.policies[0]',
    'strict',
    sshSigners,
  ]);
  assert.equal(integrityPolicyForTest(proj({ sshSigners, sourceIntegrity: { helm: {} } }), 'https://team/app').kind, 'enforced', 'helm-only sourceIntegrity');
  assert.equal(
    integrityPolicyForTest(proj({ sourceIntegrity: { git: { policies: [pol('https://other/*')] } } }), 'https://team/app').kind,
    'open',
    "without sshSigners: Argo CD's rule",
  );
});
