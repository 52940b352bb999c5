import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closestKey, defineConfig, editDistance, parseCidr, cidrsOverlap, type ConfigSchema } from '../../src/base/config/index.js';
import { isStraitError, type ErrorCode } from '../../src/base/errors/index.js';

interface Cfg {
  port: number;
  name: string;
}
const schema: ConfigSchema<Cfg> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: { port: { type: 'integer', minimum: 1, maximum: 65535, default: 4500 }, name: { type: 'string', default: 'gw' } },
};
const cfg = defineConfig(schema, { prefix: 'gateway', renamed: { 'gateway.udpPort': 'port' } });

const cases: { name: string; input: unknown; code?: ErrorCode; expect?: Cfg; match?: RegExp }[] = [
  { name: 'defaults applied', input: {}, expect: { port: 4500, name: 'gw' } },
  { name: 'unknown key refused', input: { prot: 1 }, code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY', match: /"prot" at gateway; did you mean "port"\?$/ },
  {
    name: 'unknown key far from every known one: no guess',
    input: { zzzzzz: 1 },
    code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY',
    match: /"zzzzzz" at gateway; remove it or check its spelling$/,
  },
  { name: 'renamed key pointed', input: { udpPort: 1 }, code: 'STRAIT_ERR_CONFIG_RENAMED_KEY', match: /renamed to "port"/ },
  { name: 'bad value quoted', input: { port: 70000 }, code: 'STRAIT_ERR_CONFIG_INVALID', match: /gateway\.port: 70000/ },
];
for (const c of cases) {
  test(`config: ${c.name}`, () => {
    if (c.code) {
      assert.throws(
        () => cfg.parse(c.input),
        (err) => isStraitError(err, c.code) && (!c.match || c.match.test(err.message)),
      );
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

test('closestKey: a typo finds its key by edit distance; a stranger finds none', () => {
  assert.equal(editDistance('clustrCIDR', 'clusterCIDR'), 1);
  assert.equal(closestKey('clustrCIDR', ['name', 'clusterCIDR', 'serviceCIDR']), 'clusterCIDR');
  assert.equal(closestKey('servicecidr', ['clusterCIDR', 'serviceCIDR']), 'serviceCIDR');
  assert.equal(closestKey('tunels', ['tunnels', 'mesh', 'githost']), 'tunnels');
  assert.equal(closestKey('banana', ['tunnels', 'mesh', 'githost']), undefined);
});

test('a typo that also leaves a required key missing is reported as the unknown key', () => {
  interface Req {
    clusterCIDR: string;
  }
  const req = defineConfig<Req>({ type: 'object', additionalProperties: false, required: ['clusterCIDR'], properties: { clusterCIDR: { type: 'string' } } });
  assert.throws(
    () => req.parse({ clustrCIDR: '10.0.0.0/16' }),
    (err) => isStraitError(err, 'STRAIT_ERR_CONFIG_UNKNOWN_KEY') && /did you mean "clusterCIDR"/.test(err.message),
  );
  assert.throws(
    () => req.parse({}),
    (err) => isStraitError(err, 'STRAIT_ERR_CONFIG_INVALID') && /"clusterCIDR" is required and missing/.test(err.message),
  );
});
