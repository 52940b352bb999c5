// Malformed TLS records after the hand-off to the native relay, as an attacker on the path
// (or a broken peer) would send them: random bytes, records that do not open (forged or
// replayed, a flipped bit), bad lengths, wrong types and versions, a record cut short by
// FIN. Each must end the connection with an error (both sides closed), deliver nothing of
// the bad record to the application, and leave the proxy serving the next connection.
// Seeded (test/helpers/prng.ts) and bounded: a failure names the seed and case.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { prng } from '../helpers/prng.js';
import {
  closedOf,
  meshClient,
  relayCounts,
  roundTrip,
  startEcho,
  startForwarder,
  startStrictServer,
  type Echo,
  type Forwarder,
  type StrictServer,
} from '../mesh/tls-relay-helpers.js';

const SEED = 0x5eed7115;
const CASES = 40;

type Attack = { name: string; run: (f: Forwarder, rnd: () => number) => void };

function bytes(rnd: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = rnd() & 0xff;
  return b;
}

function header(type: number, version: number, len: number): Buffer {
  const h = Buffer.alloc(5);
  h[0] = type;
  h.writeUInt16BE(version, 1);
  h.writeUInt16BE(len, 3);
  return h;
}

const ATTACKS: Attack[] = [
  { name: 'random bytes', run: (f, rnd) => f.upstream!.write(bytes(rnd, 1 + (rnd() % 300))) },
  {
    name: 'forged application record (does not open)',
    run: (f, rnd) => {
      const len = 17 + (rnd() % 2000);
      f.upstream!.write(Buffer.concat([header(23, 0x0303, len), bytes(rnd, len)]));
    },
  },
  { name: 'length past 2^14 + 256', run: (f, rnd) => f.upstream!.write(Buffer.concat([header(23, 0x0303, 16641 + (rnd() % 48000)), bytes(rnd, 64)])) },
  { name: 'length too short for a tag', run: (f, rnd) => f.upstream!.write(Buffer.concat([header(23, 0x0303, rnd() % 17), bytes(rnd, 16)])) },
  {
    name: 'wrong content type',
    run: (f, rnd) => {
      const types = [0, 20, 21, 22, 24, 255];
      f.upstream!.write(Buffer.concat([header(types[rnd() % types.length]!, 0x0303, 40), bytes(rnd, 40)]));
    },
  },
  { name: 'wrong version', run: (f, rnd) => f.upstream!.write(Buffer.concat([header(23, [0x0301, 0x0302, 0x0304, 0xffff][rnd() % 4]!, 40), bytes(rnd, 40)])) },
  { name: 'replayed record', run: (f) => f.upstream!.write(f.lastUp!) },
  {
    name: 'record cut short, then FIN',
    run: (f, rnd) => {
      f.upstream!.write(Buffer.concat([header(23, 0x0303, 100), bytes(rnd, 1 + (rnd() % 98))]));
      f.upstream!.end();
    },
  },
];

describe('native TLS relay: malformed records close the connection, never crash', () => {
  let echo: Echo;
  let srv: StrictServer;
  let fwd: Forwarder;
  before(async () => {
    echo = await startEcho();
    srv = await startStrictServer(echo.port);
    fwd = await startForwarder(srv.port);
  });
  after(async () => {
    await fwd.close();
    await srv.proxy.close();
    await echo.close();
  });

  test(`${CASES} seeded cases (seed ${SEED.toString(16)})`, { timeout: 120_000 }, async () => {
    const rnd = prng(SEED);
    const before = relayCounts();
    for (let i = 0; i < CASES; i++) {
      const flip = i % (ATTACKS.length + 1) === ATTACKS.length;
      const attack = flip ? undefined : ATTACKS[i % ATTACKS.length]!;
      const what = `case ${i}: ${attack?.name ?? 'a flipped bit in the next record'}`;
      const c = await meshClient(fwd.port, srv);
      c.on('error', () => {});
      const closed = closedOf(c);
      // the first request hands the connection to the relay, the second goes through it
      assert.equal((await roundTrip(c, Buffer.from(`first ${i}`))).toString(), `first ${i}`, what);
      assert.equal((await roundTrip(c, Buffer.from(`second ${i}`))).toString(), `second ${i}`, what);
      const app = echo.conns[echo.conns.length - 1]!;
      if (attack) attack.run(fwd, rnd);
      else {
        fwd.flipBit = rnd() % (40 * 8);
        c.write('0123456789012345678901234567890123456789');
      }
      await app.closed;
      await closed;
      // nothing of the bad record reached the application
      assert.equal(Buffer.concat(app.got).toString(), `first ${i}second ${i}`, what);
    }
    const after = relayCounts();
    assert.equal(after.started - before.started, CASES, 'every case ran on the native relay');
    assert.equal(after.failed - before.failed, CASES, 'every case ended the relay with an error');
    // the proxy still serves
    const c = await meshClient(srv.port, srv);
    assert.equal((await roundTrip(c, Buffer.from('still here'))).toString(), 'still here');
    c.destroy();
  });
});
