// Version skew between the control module and the proxies it configures: the sidecar
// configuration carries an optional format version. No version is version 1 (what every
// control module sends today) and is read as before; a newer version is refused with
// STRAIT_ERR_VERSION_UNSUPPORTED before any key is looked at (never read as this format),
// and the proxy keeps the configuration it had (docs/upgrades.md, "Version skew").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { SidecarProxy, validateSidecarConfig } from '../../src/mesh/dataplane/proxy/index.js';
import { PodFlows } from '../../src/mesh/control/observe/index.js';

const v1 = { inbound: { defaultMode: 'PERMISSIVE' }, outbound: { default: { mode: 'DISABLE' } } };

test('a configuration without a version, and one with version 1, are read as before', () => {
  assert.equal(validateSidecarConfig(v1).inbound.defaultMode, 'PERMISSIVE');
  assert.equal(validateSidecarConfig({ version: 1, ...v1 }).inbound.defaultMode, 'PERMISSIVE');
});

test("a newer version is refused as such, even when it parses as today's format and even with keys today's format lacks", () => {
  const cases: [unknown, RegExp][] = [
    [
      { version: 2, ...v1 },
      /the sidecar configuration has format version 2, which this strait does not read \(it reads version 1; no version means 1\): a newer strait wrote it; upgrade this component/,
    ],
    [{ version: 3, ...v1, inbound: { defaultMode: 'STRICT', tiers: [1] }, egress: {} }, /format version 3.*a newer strait wrote it/],
    [{ version: '1', ...v1 }, /format version "1".*a version is a positive integer/],
    [{ version: 0, ...v1 }, /format version 0.*a version is a positive integer/],
  ];
  for (const [raw, want] of cases) {
    assert.throws(
      () => validateSidecarConfig(raw),
      (err: unknown) => {
        assert.ok(isStraitError(err, 'STRAIT_ERR_VERSION_UNSUPPORTED'), String(err));
        assert.match((err as Error).message, want);
        return true;
      },
    );
  }
});

test('a running proxy handed a newer configuration keeps the one it had', () => {
  const proxy = new SidecarProxy(v1);
  assert.throws(
    () => proxy.update({ version: 2, inbound: { defaultMode: 'STRICT' }, outbound: { default: { mode: 'DISABLE' } } }),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_VERSION_UNSUPPORTED'),
  );
  assert.equal(proxy.config.inbound.defaultMode, 'PERMISSIVE', 'not read as STRICT');
  proxy.update({ version: 1, inbound: { defaultMode: 'STRICT' }, outbound: { default: { mode: 'DISABLE' } } });
  assert.equal(proxy.config.inbound.defaultMode, 'STRICT');
});

test("a sidecar's flow report: no version and version 1 are merged; a newer one is refused whole, nothing merged", () => {
  const entry = { address: '10.1.0.7', port: 80, tls: 'mtls', outcome: 'accepted', mode: 'STRICT', count: 2, firstSeen: 1000, lastSeen: 2000 };
  const flows = new PodFlows(16);
  assert.deepEqual(flows.merge({ limit: 16, evicted: 0, flows: [entry] }), { merged: 1, skipped: 0 });
  assert.deepEqual(flows.merge({ version: 1, limit: 16, evicted: 0, flows: [entry] }), { merged: 1, skipped: 0 });
  assert.throws(
    () => flows.merge({ version: 2, limit: 16, evicted: 0, flows: [entry] }, Date.now(), 'the flow report of pod ns/p'),
    (err: unknown) =>
      isStraitError(err, 'STRAIT_ERR_VERSION_UNSUPPORTED') &&
      /^the flow report of pod ns\/p has format version 2, which this strait does not read \(it reads version 1; no version means 1\): a newer strait wrote it/.test(
        (err as Error).message,
      ),
  );
  assert.equal([...flows.flows.values()][0]?.count, 4, 'the refused report added nothing');
});
