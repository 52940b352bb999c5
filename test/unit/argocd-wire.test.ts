// Argo CD's wire format as strait declares it: field numbers checked against bytes written
// by hand from upstream's .proto files, and the JSON bridge (metav1.Time as RFC 3339).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { claimsSourceIntegrity, jsonToMessage, messageToJson, projectSpecFromRpc } from '../../src/gitops/control/index.js';
import { argocdMessage, argocdService } from '../../src/gitops/wire/index.js';

const V1A1 = 'github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1';
const str = (tag: number, s: string): number[] => [tag, s.length, ...Buffer.from(s)];
const msg = (tag: number, ...parts: number[][]): number[] => {
  const body = parts.flat();
  return [tag, body.length, ...body];
};

test('field numbers: bytes as upstream numbers them (session.proto, gpgkey.proto, generated.proto)', () => {
  const cases: [string, Record<string, unknown>, number[]][] = [
    // GetUserInfoResponse: loggedIn = 1 (varint), username = 2, iss = 3
    ['session.GetUserInfoResponse', { loggedIn: true, username: 'admin', iss: 'strait' }, [0x08, 1, ...str(0x12, 'admin'), ...str(0x1a, 'strait')]],
    ['session.SessionCreateRequest', { username: 'a', password: 'b' }, [...str(0x0a, 'a'), ...str(0x12, 'b')]],
    // GnuPGPublicKey: keyID = 1, subType = 5, keyData = 6
    [`${V1A1}.GnuPGPublicKey`, { keyID: 'K', subType: 'rsa', keyData: 'D' }, [...str(0x0a, 'K'), ...str(0x2a, 'rsa'), ...str(0x32, 'D')]],
    // ApplicationSource: repoURL = 1, targetRevision = 4
    [`${V1A1}.ApplicationSource`, { repoURL: 'r', targetRevision: 'main' }, [...str(0x0a, 'r'), ...str(0x22, 'main')]],
    // OperationState: phase = 2, finishedAt = 7 (metav1.Time: seconds = 1, nanos = 2, both written as go-to-protobuf's Marshal does)
    [`${V1A1}.OperationState`, { phase: 'Error', finishedAt: '1970-01-01T00:01:40Z' }, [...str(0x12, 'Error'), 0x3a, 4, 0x08, 100, 0x10, 0]],
    // ApplicationWatchEvent: type = 1, application = 2 (metadata = 1: name = 1)
    [
      `${V1A1}.ApplicationWatchEvent`,
      { type: 'ADDED', application: { metadata: { name: 'g' } } },
      [...str(0x0a, 'ADDED'), 0x12, 5, 0x0a, 3, ...str(0x0a, 'g')],
    ],
    // meta/v1 GroupKind is proto2 (go-to-protobuf): a core-group entry's empty group = 1 is present, kind = 2
    ['k8s.io.apimachinery.pkg.apis.meta.v1.GroupKind', { group: '', kind: 'Namespace' }, [0x0a, 0, ...str(0x12, 'Namespace')]],
    // AppProjectSpec.clusterResourceWhitelist = 5 keeps it
    [`${V1A1}.AppProjectSpec`, { clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }] }, msg(0x2a, [0x0a, 0], str(0x12, 'Namespace'))],
    // SyncPolicyAutomated.enabled = 4 (*bool upstream): false is sent, not dropped
    [`${V1A1}.SyncPolicyAutomated`, { enabled: false }, [0x20, 0]],
    // AppProjectSpec.sourceIntegrity = 15 (argo-cd v3.5.7): git = 1, policies = 1, repos = 1 (url = 1), gpg = 2 (mode = 1, keys = 3)
    [
      `${V1A1}.AppProjectSpec`,
      { sourceIntegrity: { git: { policies: [{ repos: [{ url: 'u' }], gpg: { mode: 'strict', keys: ['K'] } }] } } },
      msg(0x7a, msg(0x0a, msg(0x0a, msg(0x0a, str(0x0a, 'u')), msg(0x12, str(0x0a, 'strict'), str(0x1a, 'K'))))),
    ],
  ];
  for (const [name, json, bytes] of cases) {
    const desc = argocdMessage(name);
    assert.deepEqual([...toBinary(desc, jsonToMessage(desc, json))], bytes, name);
    assert.deepEqual(messageToJson(desc, fromBinary(desc, Uint8Array.from(bytes))), json, `${name} back to JSON`);
  }
});

test('the JSON bridge drops what Argo CD has no field for and keeps maps', () => {
  const desc = argocdMessage(`${V1A1}.Application`);
  const app = {
    metadata: { name: 'guestbook', namespace: 'argocd', labels: { a: 'b' }, creationTimestamp: '2026-01-02T03:04:05Z' },
    status: {
      sync: { status: 'Synced', revision: 'abc' },
      signature: { status: 'valid' },
      operationState: { phase: 'Succeeded', startedAt: '2026-01-02T03:04:05.250Z' },
    },
  };
  assert.deepEqual(messageToJson(desc, jsonToMessage(desc, app)), {
    metadata: { name: 'guestbook', namespace: 'argocd', labels: { a: 'b' }, creationTimestamp: '2026-01-02T03:04:05Z' },
    status: { sync: { status: 'Synced', revision: 'abc' }, operationState: { phase: 'Succeeded', startedAt: '2026-01-02T03:04:05.250Z' } },
  });
});

test('the services and methods the argocd CLI calls are declared', () => {
  const methods = (s: string): string[] =>
    argocdService(s)
      .methods.map((m) => m.name)
      .sort();
  assert.deepEqual(methods('session.SessionService'), ['Create', 'Delete', 'GetUserInfo']);
  assert.deepEqual(methods('gpgkey.GPGKeyService'), ['Create', 'Delete', 'Get', 'List']);
  assert.deepEqual(methods('application.ApplicationService'), ['Get', 'List', 'Sync', 'Watch']);
  assert.equal(argocdService('application.ApplicationService').method['watch']?.methodKind, 'server_streaming');
});

test('a project update over gRPC keeps what the messages cannot carry, sourceIntegrity left out too, whatever the client says it is', () => {
  const A = 'D56C4FCA57A46444';
  const B = '4AEE18F83AFDEB23';
  const rules = (who: string): Record<string, unknown> => ({ signerIdentities: [`* <${who}@example.com>`] });
  const pol = (url: string, keys: string[], strait?: Record<string, unknown>): Record<string, unknown> => ({
    repos: [{ url }],
    gpg: { mode: 'strict', keys },
    ...(strait ? { strait } : {}),
  });
  const stored = {
    sourceRepos: ['*'],
    sshSigners: [{ principal: 'alice@example.com' }],
    roles: [{ name: 'ci' }],
    sourceIntegrity: {
      git: { policies: [pol('https://a/*', [A], rules('alice')), pol('https://b/*', [B], rules('bob')), pol('https://c/*', [A])] },
      helm: { policies: [] },
    },
  };
  // what the client read: the stored spec through the message
  const wire = (spec: unknown): Record<string, unknown> =>
    messageToJson(argocdMessage(`${V1A1}.AppProjectSpec`), jsonToMessage(argocdMessage(`${V1A1}.AppProjectSpec`), spec));
  const seen = wire(stored) as { sourceIntegrity: { git: { policies: Record<string, unknown>[] } } };
  assert.equal(JSON.stringify(seen).includes('strait'), false, 'the client never sees the strait rules');
  const v35 = 'argocd-client/v3.5.7+unknown grpc-go/1.79.0';
  const v32 = 'argocd-client/v3.2.6+unknown grpc-go/1.75.0';
  const policiesOf = (spec: unknown): unknown[] => (spec as typeof stored).sourceIntegrity.git.policies;
  const with_ = (policies: unknown[]): Record<string, unknown> => ({ ...seen, sourceIntegrity: { git: { policies } } });
  const [p0, p1, p2] = seen.sourceIntegrity.git.policies as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  const cases: [string, Record<string, unknown>, unknown[]][] = [
    ['unchanged', with_([p0, p1, p2]), stored.sourceIntegrity.git.policies],
    [
      'policy 1 edited (--add-gpg-key): its rules stay',
      with_([p0, { ...p1, gpg: { mode: 'strict', keys: [B, A] } }, p2]),
      [pol('https://a/*', [A], rules('alice')), pol('https://b/*', [B, A], rules('bob')), pol('https://c/*', [A])],
    ],
    [
      'policy 0 edited to look like policy 2: paired by index',
      with_([p2, p1, p2]),
      [pol('https://c/*', [A], rules('alice')), pol('https://b/*', [B], rules('bob')), pol('https://c/*', [A])],
    ],
    ['a policy appended: new, no rules', with_([p0, p1, p2, pol('https://d/*', [B])]), [...stored.sourceIntegrity.git.policies, pol('https://d/*', [B])]],
    ['policy 0 deleted: the others keep theirs', with_([p1, p2]), [pol('https://b/*', [B], rules('bob')), pol('https://c/*', [A])]],
    ['policies 0 and 1 deleted', with_([p2]), [pol('https://c/*', [A])]],
  ];
  for (const [name, incoming, want] of cases) {
    const out = projectSpecFromRpc('p', incoming, stored as never, v35) as unknown as typeof stored;
    assert.deepEqual(policiesOf(out), want, name);
    assert.deepEqual(out.sshSigners, stored.sshSigners, `${name}: sshSigners kept`);
    assert.deepEqual(out.roles, stored.roles, `${name}: roles kept`);
    assert.deepEqual(out.sourceIntegrity.helm, stored.sourceIntegrity.helm, `${name}: helm kept`);
  }
  const { sourceIntegrity: _si, ...noSi } = seen;
  // left out, it is kept whatever the client says it is (a user agent proves nothing; an unstamped build says v99.99.99)
  for (const ua of [v32, '', 'grpc-go/1.79.0', 'curl/8.5.0', 'argocd-client/v3.4.13 grpc-go/1.75.0', 'argocd-client/v99.99.99+unknown grpc-go/1.75.0']) {
    assert.deepEqual(projectSpecFromRpc('p', noSi, stored as never, ua).sourceIntegrity, stored.sourceIntegrity, ua);
  }
  // a client that says it is argocd >= 3.5 leaves it out only to remove it: refused, with the explicit ways
  assert.throws(
    () => projectSpecFromRpc('p', noSi, stored as never, v35),
    (e: Error & { code?: string }) => e.code === 'STRAIT_ERR_GITOPS_SOURCE_INTEGRITY_LEFT_OUT' && /--gpg-mode none/.test(e.message),
  );
  // named but empty: removed (strait's helm part stays)
  assert.deepEqual(projectSpecFromRpc('p', { ...noSi, sourceIntegrity: {} }, stored as never, v32).sourceIntegrity, { helm: { policies: [] } });
  const { helm: _h, ...gitOnly } = stored.sourceIntegrity;
  assert.equal(projectSpecFromRpc('p', { ...noSi, sourceIntegrity: {} }, { ...stored, sourceIntegrity: gitOnly } as never, v32).sourceIntegrity, null);
  assert.deepEqual(
    [
      v35,
      'argocd-client/v3.6.1 grpc-go/1',
      'argocd-client/v4.0.0',
      v32,
      'argocd-client/v3.4.9',
      'xargocd-client/v3.5.0',
      'argocd-client/v99.99.99+unknown',
    ].map(claimsSourceIntegrity),
    [true, true, true, false, false, false, false],
  );
});
