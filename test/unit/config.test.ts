import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineConfig, parseCidr, cidrsOverlap, type ConfigSchema } from '../../src/base/config/index.js';
import { isStraitError, type ErrorCode } from '../../src/base/errors/index.js';

interface Cfg { port: number; name: string }
const schema: ConfigSchema<Cfg> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: { port: { type: 'integer', minimum: 1, maximum: 65535, default: 4500 }, name: { type: 'string', default: 'gw' } },
};
const cfg = defineConfig(schema, { prefix: 'gateway', renamed: { 'gateway.udpPort': 'port' } });

const cases: { name: string; input: unknown; code?: ErrorCode; expect?: Cfg; match?: RegExp }[] = [
  { name: 'defaults applied', input: {}, expect: { port: 4500, name: 'gw' } },
  { name: 'unknown key refused', input: { prot: 1 }, code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY', match: /"prot"/ },
  { name: 'renamed key pointed', input: { udpPort: 1 }, code: 'STRAIT_ERR_CONFIG_RENAMED_KEY', match: /renamed to "port"/ },
  { name: 'bad value quoted', input: { port: 70000 }, code: 'STRAIT_ERR_CONFIG_INVALID', match: /gateway\.port: 70000/ },
];
for (const c of cases) {
  test(`config: ${c.name}`, () => {
    if (c.code) {
      assert.throws(() => cfg.parse(c.input), (err) => isStraitError(err, c.code) && (!c.match || c.match.test(err.message)));
    } else {
      const out = cfg.parse(c.input);
      assert.deepEqual({ ...out }, c.expect);
      assert.ok(Object.isFrozen(out));
    }
  });
}

test('cidr parsing and overlap', () => {
  assert.ok(cidrsOverlap(parseCidr('10.1.0.0/16'), parseCidr('10.1.2.0/24')));
  assert.ok(!cidrsOverlap(parseCidr('10.1.0.0/16'), parseCidr('10.2.0.0/16')));
  assert.throws(() => parseCidr('10.1.0.1/16'), /host bits set; did you mean 10\.1\.0\.0\/16/);
  assert.throws(() => parseCidr('10.1/16'), /"10\.1\/16"/);
});
