// Bounded fuzzing of what the proxies decode from outside: the first bytes of a connection
// (sniffTls) and configurations pushed to the admin API (validateSidecarConfig).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { sniffTls, validateSidecarConfig } from '../../src/mesh/dataplane/proxy/index.js';

test('sniffTls: 20k random and mutated inputs give -1, 0 or 1 and never throw', () => {
  const hello = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]);
  for (let i = 0; i < 20_000; i++) {
    const b = i % 2 ? randomBytes(i % 12) : Buffer.from(hello.subarray(0, i % 12));
    if (i % 3 === 0 && b.length > 0) b[i % b.length] = (b[i % b.length] as number) ^ (1 << (i % 8));
    const r = sniffTls(b);
    assert.ok(r === -1 || r === 0 || r === 1);
  }
  assert.equal(sniffTls(hello), 1);
  assert.equal(sniffTls(Buffer.from('GET / HTTP/1.1\r\n')), 0);
  assert.equal(sniffTls(Buffer.from([0x16, 0x03])), -1);
});

const valid = {
  inbound: { defaultMode: 'STRICT', ports: { '8080': 'PERMISSIVE' } },
  outbound: { default: { mode: 'DISABLE' }, destinations: { '10.0.0.1:80': { mode: 'ISTIO_MUTUAL', sans: ['spiffe://x/ns/a/sa/b'] } } },
};
const junk = [null, undefined, 0, -1, Infinity, '', 'STRICT', 'x'.repeat(300), [], {}, [1, 2], { mode: 'DISABLE' }, true, { __proto__: { mode: 'STRICT' } }];

function mutate(v: unknown, depth: number, seed: number): unknown {
  if (depth > 4 || typeof v !== 'object' || v === null) return junk[seed % junk.length];
  const o: Record<string, unknown> = Array.isArray(v) ? { ...v } : { ...(v as Record<string, unknown>) };
  const keys = Object.keys(o);
  const k = keys[seed % Math.max(1, keys.length)] ?? 'extra';
  if (seed % 7 === 0) o[`x${seed % 5}`] = junk[seed % junk.length];
  else if (seed % 5 === 0) delete o[k];
  else o[k] = mutate(o[k], depth + 1, Math.floor(seed / 3) + 1);
  return o;
}

test('validateSidecarConfig: 20k mutated configurations throw only StraitError', () => {
  let accepted = 0;
  for (let i = 0; i < 20_000; i++) {
    const seed = randomBytes(4).readUInt32LE(0);
    try {
      validateSidecarConfig(mutate(valid, 0, seed));
      accepted++;
    } catch (err) {
      assert.ok(isStraitError(err, 'STRAIT_ERR_MESH_CONFIG_INVALID'), String((err as Error)?.stack ?? err));
    }
  }
  assert.ok(accepted > 0 && accepted < 20_000, `accepted ${accepted}`);
});
