// Argo CD's wire format as strait declares it: field numbers checked against bytes written
// by hand from upstream's .proto files, and the JSON bridge (metav1.Time as RFC 3339).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { jsonToMessage, messageToJson } from '../../src/gitops/control/index.js';
import { argocdMessage, argocdService } from '../../src/gitops/wire/index.js';

const V1A1 = 'github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1';
const str = (tag: number, s: string): number[] => [tag, s.length, ...Buffer.from(s)];

test('field numbers: bytes as upstream numbers them (session.proto, gpgkey.proto, generated.proto)', () => {
  const cases: [string, Record<string, unknown>, number[]][] = [
    // GetUserInfoResponse: loggedIn = 1 (varint), username = 2, iss = 3
    ['session.GetUserInfoResponse', { loggedIn: true, username: 'admin', iss: 'strait' }, [0x08, 1, ...str(0x12, 'admin'), ...str(0x1a, 'strait')]],
    ['session.SessionCreateRequest', { username: 'a', password: 'b' }, [...str(0x0a, 'a'), ...str(0x12, 'b')]],
    // GnuPGPublicKey: keyID = 1, subType = 5, keyData = 6
    [`${V1A1}.GnuPGPublicKey`, { keyID: 'K', subType: 'rsa', keyData: 'D' }, [...str(0x0a, 'K'), ...str(0x2a, 'rsa'), ...str(0x32, 'D')]],
    // ApplicationSource: repoURL = 1, targetRevision = 4
    [`${V1A1}.ApplicationSource`, { repoURL: 'r', targetRevision: 'main' }, [...str(0x0a, 'r'), ...str(0x22, 'main')]],
    // OperationState: phase = 2, finishedAt = 7 (metav1.Time: seconds = 1)
    [`${V1A1}.OperationState`, { phase: 'Error', finishedAt: '1970-01-01T00:01:40Z' }, [...str(0x12, 'Error'), 0x3a, 2, 0x08, 100]],
    // ApplicationWatchEvent: type = 1, application = 2 (metadata = 1: name = 1)
    [`${V1A1}.ApplicationWatchEvent`, { type: 'ADDED', application: { metadata: { name: 'g' } } }, [...str(0x0a, 'ADDED'), 0x12, 5, 0x0a, 3, ...str(0x0a, 'g')]],
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
    status: { sync: { status: 'Synced', revision: 'abc' }, signature: { status: 'valid' }, operationState: { phase: 'Succeeded', startedAt: '2026-01-02T03:04:05.250Z' } },
  };
  assert.deepEqual(messageToJson(desc, jsonToMessage(desc, app)), {
    metadata: { name: 'guestbook', namespace: 'argocd', labels: { a: 'b' }, creationTimestamp: '2026-01-02T03:04:05Z' },
    status: { sync: { status: 'Synced', revision: 'abc' }, operationState: { phase: 'Succeeded', startedAt: '2026-01-02T03:04:05.250Z' } },
  });
});

test('the services and methods the argocd CLI calls are declared', () => {
  const methods = (s: string): string[] => argocdService(s).methods.map((m) => m.name).sort();
  assert.deepEqual(methods('session.SessionService'), ['Create', 'Delete', 'GetUserInfo']);
  assert.deepEqual(methods('gpgkey.GPGKeyService'), ['Create', 'Delete', 'Get', 'List']);
  assert.deepEqual(methods('application.ApplicationService'), ['Get', 'List', 'Sync', 'Watch']);
  assert.equal(argocdService('application.ApplicationService').method['watch']?.methodKind, 'server_streaming');
});
