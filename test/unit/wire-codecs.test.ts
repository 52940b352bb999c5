import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { vxlan, macFromString, ETHERTYPE_IPV4 } from '../../src/multicluster/wire/vxlan/index.js';
import { ipv4, udp, PROTO_UDP } from '../../src/multicluster/wire/ipv4/index.js';
import {
  handshakeInit,
  handshakeResponse,
  cookieReply,
  dataPacket,
  initPayload,
  responsePayload,
  fragment,
  writeDataHeader,
} from '../../src/multicluster/wire/tunnel/index.js';
import { Session } from '../../src/multicluster/dataplane/tunnel/index.js';
import { computeVectors } from '../helpers/vectors.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

test('VXLAN: RFC 7348 header bytes for VNI 42 and an inner Ethernet frame', () => {
  const frame = {
    vni: 42,
    dst: macFromString('02:00:00:00:00:02'),
    src: macFromString('02:00:00:00:00:01'),
    etherType: ETHERTYPE_IPV4,
    payload: Buffer.from('abcd', 'hex'),
  };
  const b = vxlan.encode(frame);
  assert.equal(b.toString('hex'), '08000000' + '00002a00' + '020000000002' + '020000000001' + '0800' + 'abcd');
  assert.equal(vxlan.encodingLength(frame), b.length);
  const d = vxlan.decode(b, 0);
  assert.equal(d.vni, 42);
  assert.equal(d.etherType, 0x0800);
  assert.equal(Buffer.from(d.payload).toString('hex'), 'abcd');
  assert.equal(d.payload.buffer, b.buffer, 'decode returns views');
  const shifted = vxlan.encode(frame, Buffer.alloc(b.length + 5), 5);
  assert.equal(vxlan.decode(shifted, 5).vni, 42);
});

test('IPv4 + UDP: checksums verify, views are returned, corruption is malformed', () => {
  const payload = Buffer.from('hello');
  const ips = { src: 0x0a010007, dst: 0x0a020005 };
  const u = udp.encode({ srcPort: 1234, dstPort: 8080, payload }, undefined, 0, ips);
  const p = ipv4.encode({ tos: 0, id: 1, flags: 2, fragmentOffset: 0, ttl: 64, protocol: PROTO_UDP, ...ips, payload: u });
  // golden bytes of the IPv4 header (header checksum 0x26bd, computed independently with Python's struct)
  assert.equal(p.subarray(0, 20).toString('hex'), '4500002100014000401126bd' + '0a010007' + '0a020005');
  const d = ipv4.decode(p, 0);
  assert.equal(d.src, ips.src);
  assert.equal(d.protocol, PROTO_UDP);
  const du = udp.decode(d.payload, 0, ips);
  assert.equal(Buffer.from(du.payload).toString(), 'hello');
  const bad = Buffer.from(p);
  bad[12]! ^= 1;
  assert.throws(
    () => ipv4.decode(bad, 0),
    (e) => isStraitError(e, 'STRAIT_ERR_TUNNEL_MALFORMED'),
  );
  const badU = Buffer.from(u);
  badU[9]! ^= 1;
  assert.throws(
    () => udp.decode(badU, 0, ips),
    (e) => isStraitError(e, 'STRAIT_ERR_TUNNEL_MALFORMED'),
  );
});

test('tunnel messages round-trip', () => {
  const k = Buffer.alloc(32, 1);
  const m16 = Buffer.alloc(16, 2);
  const init = { version: 1, senderIndex: 7, ephemeral: k, payload: Buffer.alloc(30, 3), mac1: m16, mac2: m16 };
  const bi = handshakeInit.encode(init);
  assert.equal(bi.length, handshakeInit.encodingLength(init));
  assert.deepEqual(Buffer.from(handshakeInit.decode(bi, 0).payload), init.payload);
  const resp = { ...init, receiverIndex: 9 };
  assert.equal(handshakeResponse.decode(handshakeResponse.encode(resp), 0).receiverIndex, 9);
  const c = cookieReply.encode({ version: 1, receiverIndex: 3, nonce: Buffer.alloc(12), cookie: Buffer.alloc(32) });
  assert.equal(cookieReply.decode(c, 0).receiverIndex, 3);
  const dp = dataPacket.encode({ next: 0, spi: 5, seq: 2 ** 40 + 3, ciphertext: Buffer.alloc(20) });
  assert.equal(dataPacket.decode(dp, 0).seq, 2 ** 40 + 3);
  assert.deepEqual(initPayload.decode(initPayload.encode({ timestamp: 123456789012, maxVersion: 1, features: 1, clusterId: 'cluster-a' }), 0), {
    timestamp: 123456789012,
    maxVersion: 1,
    features: 1,
    clusterId: 'cluster-a',
  });
  assert.deepEqual(responsePayload.decode(responsePayload.encode({ version: 1, features: 0, clusterId: 'b' }), 0), { version: 1, features: 0, clusterId: 'b' });
  assert.throws(
    () => initPayload.encode({ timestamp: 1, maxVersion: 1, features: 0, clusterId: 'Bad ID' }),
    (e) => isStraitError(e, 'STRAIT_ERR_TUNNEL_MALFORMED'),
  );
});

test('test vectors: fixed keys give fixed bytes (test/vectors/tunnel-v1.json)', () => {
  const file = JSON.parse(readFileSync(join(root, 'test', 'vectors', 'tunnel-v1.json'), 'utf8')) as { expected: Record<string, string> };
  // the ephemeral keys are RFC 7748 §6.1's Alice and Bob: their public keys are published
  assert.equal(file.expected['initiatorEphemeralPublic'], '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a');
  assert.equal(file.expected['responderEphemeralPublic'], 'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f');
  assert.deepEqual(computeVectors(), file.expected);
});

test('test vectors: the fragments of tunnel-v1.json reassemble and open under the responder key (any order)', () => {
  const file = JSON.parse(readFileSync(join(root, 'test', 'vectors', 'tunnel-v1.json'), 'utf8')) as {
    input: Record<string, number>;
    expected: Record<string, string>;
  };
  const e = file.expected;
  const frags = Object.keys(e)
    .filter((k) => k.startsWith('fragment'))
    .map((k) => fragment.decode(Buffer.from(e[k]!, 'hex')));
  assert.equal(frags.length, 3);
  for (const k of Object.keys(e).filter((x) => x.startsWith('fragment'))) assert.ok(e[k]!.length / 2 <= file.input['maxDatagram']!);
  const body = Buffer.alloc(16 + (frags.length - 1) * frags[0]!.size + frags[frags.length - 1]!.data.length);
  for (const f of [...frags].reverse()) Buffer.from(f.data).copy(body, 16 + f.index * f.size);
  writeDataHeader(body, 0, frags[0]!.next, frags[0]!.spi, frags[0]!.seq);
  const keys = {
    send: Buffer.from(e['keyResponderToInitiator']!, 'hex'),
    recv: Buffer.from(e['keyInitiatorToResponder']!, 'hex'),
    sendSalt: Buffer.from(e['saltResponderToInitiator']!, 'hex'),
    recvSalt: Buffer.from(e['saltInitiatorToResponder']!, 'hex'),
  };
  const plain = new Session(1, 2, false, 0, keys).open(body, frags[0]!.seq);
  assert.ok(plain);
  assert.equal(plain.length, file.input['fragmentedLength']);
  for (let i = 0; i < plain.length; i++) if (plain[i] !== (i & 0xff)) assert.fail(`byte ${i}`);
});
