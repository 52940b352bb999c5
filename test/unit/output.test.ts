import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { escapeControls, formatJson, formatJsonLine, formatTable, formatYaml } from '../../src/platform/cli-kit/index.js';

test('formatTable pads columns like subctl', () => {
  const out = formatTable(
    ['NODE', 'HA STATUS', 'SUMMARY'],
    [
      ['gw-a', 'active', 'All connections (1) are established'],
      ['gateway-node-2', 'passive', ''],
    ],
  );
  assert.equal(
    out,
    'NODE             HA STATUS   SUMMARY\n' + 'gw-a             active      All connections (1) are established\n' + 'gateway-node-2   passive     <none>\n',
  );
});

// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

test('escapeControls shows C0 (but tab and newline), DEL and C1 controls; other text is unchanged', () => {
  assert.equal(escapeControls('a\x1b[2Kb\rc\x07d\x7fe\u009bf\tg\nh'), 'a^[[2Kb^Mc^Gd^?e\\u009bf\tg\nh');
  assert.equal(escapeControls('Grüße, 日本, \u00a0'), 'Grüße, 日本, \u00a0');
});

test('formatJson, formatJsonLine and formatYaml print no raw control character and parse back exactly', () => {
  const values: unknown[] = [
    { author: 'Eve\x1b[2K\r\x1b[32mSynced\u009b2J\u0085\x7f', 'k\u009bey': ['\x00', 'plain\u0090'], n: 1, multi: 'a\nb\u009b\n' },
    { plain: 'text', list: [1, 'two', { three: true }], empty: '', quote: 'a: b' },
  ];
  for (const v of values) {
    for (const [name, text, back] of [
      ['json', formatJson(v), JSON.parse(formatJson(v))],
      ['json line', formatJsonLine(v), JSON.parse(formatJsonLine(v))],
      ['yaml', formatYaml(v), parseYaml(formatYaml(v))],
    ] as const) {
      assert.doesNotMatch(text, RAW, name);
      assert.deepEqual(back, v, name);
      assert.equal(escapeControls(text), text, `${name}: the terminal guard changes nothing`);
    }
  }
  // without control characters, YAML is what yaml.stringify writes
  assert.equal(formatYaml(values[1]), stringifyYaml(values[1], { lineWidth: 0 }));
});
