// `strait app get`'s Last Sync line: the revision the last operation was about, and whether it
// is still the one the Application is compared to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastSync, syncText } from '../../src/gitops/cli/index.js';
import type { Application } from '../../src/gitops/control/index.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const app = (status: Application['status']): Application => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'x' }, status });
const op = (phase: 'Succeeded' | 'Error', message: string, revision: string) => ({
  phase,
  message,
  startedAt: '',
  finishedAt: '',
  operation: { sync: { revision } },
});

const cases: { name: string; status: Application['status']; want: string }[] = [
  { name: 'no operation', status: {}, want: '<none>' },
  {
    name: 'success',
    status: { sync: { status: 'Synced', revision: A }, operationState: op('Succeeded', 'successfully synced (all tasks run)', A) },
    want: 'Succeeded at aaaaaaaaaaaa: successfully synced (all tasks run)',
  },
  {
    name: 'refusal of the current target',
    status: { sync: { status: 'Sync Error', revision: B }, operationState: op('Error', 'Revision is not signed', A) },
    want: 'Error at aaaaaaaaaaaa: Revision is not signed',
  },
  {
    name: 'refusal of an earlier target, now Synced',
    status: { sync: { status: 'Synced', revision: B }, operationState: op('Error', 'Revision is not signed', A) },
    want: 'Error at aaaaaaaaaaaa: Revision is not signed (an earlier target; the current one, bbbbbbbbbbbb, is Synced)',
  },
];
for (const c of cases) {
  test(`Last Sync: ${c.name}`, () => assert.equal(lastSync(app(c.status)), c.want));
}

// `strait app get`'s Sync Status: about the revision the target resolves to now, the last
// good revision beside it, labelled, when that is another one
const sig = (status: string, objectSHA: string) => ({
  status,
  keyID: '',
  primaryKeyID: '',
  signer: '',
  message: '',
  verifiedObject: 'commit' as const,
  objectSHA,
  enforced: true,
});
const good = (revision: string) => ({ ...op('Error', 'Revision is not signed', B), syncResult: { revision, resources: [] } });
const syncCases: { name: string; status: Application['status']; want: string }[] = [
  { name: 'never reconciled', status: {}, want: 'Unknown' },
  { name: 'synced', status: { sync: { status: 'Synced', revision: A } }, want: `Synced to ${A}` },
  {
    name: 'refused unsigned revision after a good one',
    status: { sync: { status: 'Sync Error', revision: B }, signature: sig('unsigned', B) as never, operationState: good(A) },
    want: `Sync Error to ${B} (refused: unsigned); last good: ${A}`,
  },
  {
    name: 'refused before any sync',
    status: { sync: { status: 'Sync Error', revision: B }, signature: sig('unsigned', B) as never, operationState: op('Error', 'Revision is not signed', B) },
    want: `Sync Error to ${B} (refused: unsigned)`,
  },
  {
    name: 'refused for a bad manifest',
    status: {
      sync: { status: 'Sync Error', revision: B },
      signature: sig('valid', B) as never,
      operationState: good(A),
      conditions: [{ type: 'ComparisonError', status: 'True', reason: 'ManifestInvalid', message: 'bad', lastTransitionTime: '' }],
    },
    want: `Sync Error to ${B} (refused: ManifestInvalid); last good: ${A}`,
  },
  {
    name: 'repository not answering',
    status: {
      sync: { status: 'Unknown' },
      operationState: { ...op('Succeeded', 'ok', A), syncResult: { revision: A, resources: [] } },
      conditions: [{ type: 'ComparisonError', status: 'True', reason: 'FetchFailed', message: 'connection refused', lastTransitionTime: '' }],
    },
    want: `Unknown (FetchFailed); last good: ${A}`,
  },
  {
    name: 'last good from the history',
    status: { sync: { status: 'Unknown' }, history: [{ revision: A, deployedAt: '', id: 0 }] },
    want: `Unknown; last good: ${A}`,
  },
];
for (const c of syncCases) {
  test(`Sync Status: ${c.name}`, () => assert.equal(syncText(app(c.status)), c.want));
}
