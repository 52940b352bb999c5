// PodFlows (src/mesh/control/observe/pod-flows.ts): reports are network input in Kubernetes mode
// (POST /v1/flows): times a Date cannot print are refused, running sums stay safe integers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PodFlows, readReportEntry } from '../../src/mesh/control/observe/index.js';

const entry = (over: Record<string, unknown> = {}) => ({
  address: '10.0.0.9',
  port: 8080,
  tls: 'plaintext',
  outcome: 'accepted',
  mode: 'PERMISSIVE',
  count: 1,
  firstSeen: 1_700_000_000_000,
  lastSeen: 1_700_000_000_000,
  ...over,
});

test('a time past what a Date prints is not an entry (toISOString would throw when the object is written)', () => {
  assert.ok(readReportEntry(entry()));
  for (const t of [1e16, 8.64e15 + 1, Infinity, -1]) {
    assert.equal(readReportEntry(entry({ lastSeen: t })), undefined, String(t));
    assert.equal(readReportEntry(entry({ firstSeen: t })), undefined, String(t));
  }
  assert.ok(readReportEntry(entry({ lastSeen: 8.64e15 })));
  const p = new PodFlows(4);
  assert.deepEqual(p.merge({ limit: 4, evicted: 0, flows: [entry({ lastSeen: 1e16 }), entry()] }), { merged: 1, skipped: 1 });
  for (const f of p.flows.values()) assert.doesNotThrow(() => new Date(f.lastSeen).toISOString());
});

test('counts and evictions add up to at most Number.MAX_SAFE_INTEGER', () => {
  const p = new PodFlows(4);
  const big = Number.MAX_SAFE_INTEGER - 1;
  p.merge({ limit: 4, evicted: big, flows: [entry({ count: big })] });
  p.merge({ limit: 4, evicted: big, flows: [entry({ count: big })] });
  assert.equal(p.evicted, Number.MAX_SAFE_INTEGER);
  assert.equal([...p.flows.values()][0]?.count, Number.MAX_SAFE_INTEGER);
});
