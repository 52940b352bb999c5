// `strait app get`'s Last Sync line: the revision the last operation was about, and whether it
// is still the one the Application is compared to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastSync } from '../../src/gitops/cli/index.js';
import type { Application } from '../../src/gitops/control/index.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const app = (status: Application['status']): Application => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'x' }, status });
const op = (phase: 'Succeeded' | 'Error', message: string, revision: string) =>
  ({ phase, message, startedAt: '', finishedAt: '', operation: { sync: { revision } } });

const cases: { name: string; status: Application['status']; want: string }[] = [
  { name: 'no operation', status: {}, want: '<none>' },
  { name: 'success', status: { sync: { status: 'Synced', revision: A }, operationState: op('Succeeded', 'successfully synced (all tasks run)', A) }, want: 'Succeeded at aaaaaaaaaaaa: successfully synced (all tasks run)' },
  { name: 'refusal of the current target', status: { sync: { status: 'Sync Error', revision: B }, operationState: op('Error', 'Revision is not signed', A) }, want: 'Error at aaaaaaaaaaaa: Revision is not signed' },
  { name: 'refusal of an earlier target, now Synced', status: { sync: { status: 'Synced', revision: B }, operationState: op('Error', 'Revision is not signed', A) },
    want: 'Error at aaaaaaaaaaaa: Revision is not signed (an earlier target; the current one, bbbbbbbbbbbb, is Synced)' },
];
for (const c of cases) {
  test(`Last Sync: ${c.name}`, () => assert.equal(lastSync(app(c.status)), c.want));
}
