// The control module's Kubernetes-mode settings from the environment (src/mesh/control/run/env.ts, src/multicluster/control/run/env.ts):
// defaults, "off", and bad values refused with the variable and the value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { meshConfigSettingsFromEnv, webhookRecheckMsFromEnv, webhookSettingsFromEnv } from '../../src/mesh/control/run/index.js';
import { dnsSettingsFromEnv } from '../../src/multicluster/control/run/index.js';

const refused = (fn: () => unknown, variable: string, value: string): void => {
  assert.throws(
    fn,
    (err: unknown) => isStraitError(err) && err.code === 'STRAIT_ERR_CONFIG_INVALID' && err.message.includes(variable) && err.message.includes(value),
  );
};

test('STRAIT_WEBHOOK_CONFIG: strait-sidecar-injector by default; "off" writes no caBundle (configName undefined)', () => {
  assert.equal(webhookSettingsFromEnv({}).configName, 'strait-sidecar-injector');
  assert.equal(webhookSettingsFromEnv({ STRAIT_WEBHOOK_CONFIG: 'mine' }).configName, 'mine');
  assert.equal(webhookSettingsFromEnv({ STRAIT_WEBHOOK_CONFIG: 'off' }).configName, undefined);
});

test('STRAIT_WEBHOOK_RECHECK_SECONDS: 30 s by default; whole seconds >= 1, else refused naming the value', () => {
  assert.equal(webhookRecheckMsFromEnv({}), 30_000);
  assert.equal(webhookRecheckMsFromEnv({ STRAIT_WEBHOOK_RECHECK_SECONDS: '1' }), 1000);
  for (const bad of ['0', '-1', '1.5', 'soon', ''])
    refused(() => webhookRecheckMsFromEnv({ STRAIT_WEBHOOK_RECHECK_SECONDS: bad }), 'STRAIT_WEBHOOK_RECHECK_SECONDS', bad);
});

test('STRAIT_DNS_PORT and STRAIT_MESH_CONFIG_PORT: defaults, "off", bad ports refused', () => {
  assert.deepEqual(dnsSettingsFromEnv({}), { host: '0.0.0.0', port: 5353 });
  assert.equal(dnsSettingsFromEnv({ STRAIT_DNS_PORT: 'off' }), undefined);
  refused(() => dnsSettingsFromEnv({ STRAIT_DNS_PORT: '70000' }), 'STRAIT_DNS_PORT', '70000');
  assert.equal(meshConfigSettingsFromEnv({}, 'strait-system')?.url, 'https://strait-control.strait-system.svc:15012');
  assert.equal(meshConfigSettingsFromEnv({ STRAIT_MESH_CONFIG_PORT: 'off' }, 'strait-system'), undefined);
  refused(() => meshConfigSettingsFromEnv({ STRAIT_MESH_CONFIG_PORT: 'x' }, 'strait-system'), 'STRAIT_MESH_CONFIG_PORT', 'x');
});
