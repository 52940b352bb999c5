// Fuzz every decoder: random and mutated inputs must decode or throw StraitError
// (STRAIT_ERR_TUNNEL_MALFORMED), never anything else. Deterministic PRNG, bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { vxlan } from '../../src/wire/vxlan/index.js';
import { ipv4, udp } from '../../src/wire/ipv4/index.js';
import { handshakeInit, handshakeResponse, cookieReply, dataPacket, initPayload, responsePayload } from '../../src/wire/tunnel/index.js';
import { computeVectors } from '../helpers/vectors.js';

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s;
  };
}

const v = computeVectors();
const seeds: Buffer[] = [
  Buffer.from(v['initiation']!, 'hex'), Buffer.from(v['response']!, 'hex'), Buffer.from(v['dataPacket']!, 'hex'),
  vxlan.encode({ vni: 1, dst: Buffer.alloc(6), src: Buffer.alloc(6), etherType: 0x800, payload: Buffer.alloc(40) }),
  ipv4.encode({ tos: 0, id: 0, flags: 0, fragmentOffset: 0, ttl: 1, protocol: 17, src: 1, dst: 2, payload: udp.encode({ srcPort: 1, dstPort: 2, payload: Buffer.alloc(9) }) }),
];

const decoders: [string, (b: Buffer, off: number) => unknown][] = [
  ['vxlan', vxlan.decode], ['ipv4', ipv4.decode], ['udp', (b, o) => udp.decode(b, o, { src: 1, dst: 2 })],
  ['handshakeInit', handshakeInit.decode], ['handshakeResponse', handshakeResponse.decode], ['cookieReply', cookieReply.decode],
  ['dataPacket', dataPacket.decode], ['initPayload', initPayload.decode], ['responsePayload', responsePayload.decode],
];

for (const [name, decode] of decoders) {
  test(`fuzz ${name}: 20k random and mutated inputs, only StraitError`, () => {
    const rnd = prng(0x5eed ^ name.length * 7919);
    let ok = 0;
    for (let i = 0; i < 20_000; i++) {
      let b: Buffer;
      if (i % 2 === 0) {
        b = Buffer.alloc(rnd() % 160);
        for (let j = 0; j < b.length; j++) b[j] = rnd() & 255;
      } else {
        const s = seeds[rnd() % seeds.length]!;
        b = Buffer.from(s.subarray(0, rnd() % (s.length + 1)));
        for (let k = rnd() % 4; k >= 0 && b.length; k--) b[rnd() % b.length] = rnd() & 255;
      }
      const off = i % 5 === 0 ? rnd() % 8 : 0;
      try {
        decode(b, off);
        ok++;
      } catch (err) {
        assert.ok(isStraitError(err, 'STRAIT_ERR_TUNNEL_MALFORMED'), `${name} threw ${String(err)} on ${b.toString('hex')} at ${off}`);
      }
    }
    assert.ok(ok >= 0);
  });
}
