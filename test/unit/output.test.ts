import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTable } from '../../src/platform/cli-kit/index.js';

test('formatTable pads columns like subctl', () => {
  const out = formatTable(['NODE', 'HA STATUS', 'SUMMARY'], [['gw-a', 'active', 'All connections (1) are established'], ['gateway-node-2', 'passive', '']]);
  assert.equal(out,
    'NODE             HA STATUS   SUMMARY\n' +
    'gw-a             active      All connections (1) are established\n' +
    'gateway-node-2   passive     <none>\n');
});
