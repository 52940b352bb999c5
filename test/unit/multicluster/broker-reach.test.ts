// Whether the agent reaches its broker (broker-reach.ts): a probe that does not answer within
// its 3 s, one refused, an answer that is a refusal (still the broker), and the return.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../../src/base/clock/index.js';
import { E } from '../../../src/base/errors/index.js';
import { BrokerReach, type BrokerReachState } from '../../../src/multicluster/control/clusterset/index.js';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

test('a broker that stops answering is unreachable 3 s into the probe; its answer makes it reachable again', async () => {
  const clock = new ManualClock(1_700_000_000_000);
  let mode: 'answer' | 'silent' | 'refused' | 'forbidden' = 'answer';
  const probe = (): Promise<unknown> => {
    if (mode === 'answer') return Promise.resolve(undefined);
    if (mode === 'refused') return Promise.reject(E.storeUnavailable('/x/broker.sock', 'connect ECONNREFUSED'));
    if (mode === 'forbidden') return Promise.reject(E.unauthorized('no'));
    return new Promise(() => undefined);
  };
  const changes: BrokerReachState[] = [];
  const reach = new BrokerReach(probe, (s) => changes.push({ ...s }), { clock });
  reach.start();
  await flush();
  assert.equal(reach.current.reachable, true);
  mode = 'silent';
  clock.advance(1000); // the next probe starts
  await flush();
  clock.advance(2999);
  await flush();
  assert.equal(reach.unreachable, false, 'not before its 3 s');
  clock.advance(1);
  await flush();
  assert.equal(reach.unreachable, true);
  assert.equal(changes.at(-1)?.error, 'no answer within 3 s');
  assert.equal(changes.at(-1)?.since, clock.now());
  mode = 'answer';
  clock.advance(1000);
  await flush();
  assert.equal(reach.current.reachable, true);
  // refused: at once, with the store's reason; a refusal that is an answer (unauthorized): reachable
  mode = 'refused';
  clock.advance(1000);
  await flush();
  assert.equal(reach.unreachable, true);
  assert.equal(reach.current.error, 'connect ECONNREFUSED');
  mode = 'forbidden';
  clock.advance(1000);
  await flush();
  assert.equal(reach.current.reachable, true);
  assert.deepEqual(
    changes.map((c) => c.reachable),
    [true, false, true, false, true],
  );
  reach.stop();
});

test("every broker call's outcome counts: an unavailable error is unreachable at once, another error is an answer", () => {
  const reach = new BrokerReach(
    () => new Promise(() => undefined),
    () => undefined,
    { clock: new ManualClock(0) },
  );
  reach.observe(E.storeUnavailable('https://broker:6443', 'ETIMEDOUT'));
  assert.equal(reach.unreachable, true);
  reach.observe(E.unauthorized('token'));
  assert.equal(reach.unreachable, false);
});
