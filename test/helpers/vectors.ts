// Fixed inputs for the tunnel test vectors (test/vectors/tunnel-v1.json).
import {
  Session,
  createInitiation,
  consumeInitiation,
  createResponse,
  consumeResponse,
  keyPairFromPrivate,
  pskFromText,
  mac1Key,
} from '../../src/multicluster/dataplane/tunnel/index.js';
import {
  handshakeInit,
  handshakeResponse,
  writeDataHeader,
  writeFragmentHeader,
  fragmentPlan,
  NEXT_IPV4,
  NEXT_IPV4_VNET,
  FRAG_HEADER,
} from '../../src/multicluster/wire/tunnel/index.js';

export const VECTOR_INPUT = {
  psk: 'strait-test-vector-psk',
  initiatorEphemeralPrivate: '77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a',
  responderEphemeralPrivate: '5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb',
  initiatorIndex: 0x11223344,
  responderIndex: 0x55667788,
  timestamp: 1_700_000_000_000,
  initiatorCluster: 'cluster-a',
  responderCluster: 'cluster-b',
  dataPayload: '4500001c000000004011000a0a0100070a020005deadbeef00080000',
  dataSeq: 7,
  /** a 3000-byte virtio_net_hdr + super-packet (bytes i & 0xff), sequence 8, fragments for a 1472-byte datagram limit */
  fragmentedLength: 3000,
  fragmentedSeq: 8,
  maxDatagram: 1472,
};

export function computeVectors(): Record<string, string> {
  const v = VECTOR_INPUT;
  const psk = pskFromText(v.psk);
  const k1 = mac1Key(psk);
  const ie = keyPairFromPrivate(Buffer.from(v.initiatorEphemeralPrivate, 'hex'));
  const re = keyPairFromPrivate(Buffer.from(v.responderEphemeralPrivate, 'hex'));
  const { msg: init, state } = createInitiation({
    psk,
    mac1Key: k1,
    version: 1,
    maxVersion: 1,
    localIndex: v.initiatorIndex,
    clusterId: v.initiatorCluster,
    timestamp: v.timestamp,
    ephemeral: ie,
  });
  const got = consumeInitiation(psk, handshakeInit.decode(init, 0))!;
  const r = createResponse({
    ss: got.ss,
    remoteEphemeral: ie.publicRaw,
    mac1Key: k1,
    version: 1,
    localIndex: v.responderIndex,
    remoteIndex: v.initiatorIndex,
    clusterId: v.responderCluster,
    ephemeral: re,
  })!;
  const fin = consumeResponse(state, handshakeResponse.decode(r.msg, 0))!;
  const s = new Session(v.initiatorIndex, v.responderIndex, true, 0, fin.keys);
  const header = Buffer.alloc(16);
  writeDataHeader(header, 0, NEXT_IPV4, v.responderIndex, v.dataSeq);
  const [ct, tag] = s.seal(header, v.dataSeq, Buffer.from(v.dataPayload, 'hex'));
  return {
    initiatorEphemeralPublic: ie.publicRaw.toString('hex'),
    responderEphemeralPublic: re.publicRaw.toString('hex'),
    initiation: init.toString('hex'),
    response: r.msg.toString('hex'),
    keyInitiatorToResponder: fin.keys.send.toString('hex'),
    keyResponderToInitiator: fin.keys.recv.toString('hex'),
    saltInitiatorToResponder: fin.keys.sendSalt.toString('hex'),
    saltResponderToInitiator: fin.keys.recvSalt.toString('hex'),
    dataPacket: Buffer.concat([header, ct, tag]).toString('hex'),
    ...fragmentVectors(s),
  };
}

/** The fragments of one sealed super-packet: AEAD once with the type-4 header as associated data, then split. */
function fragmentVectors(s: Session): Record<string, string> {
  const v = VECTOR_INPUT;
  const payload = Buffer.alloc(v.fragmentedLength);
  for (let i = 0; i < payload.length; i++) payload[i] = i & 0xff;
  const header = Buffer.alloc(16);
  writeDataHeader(header, 0, NEXT_IPV4_VNET, v.responderIndex, v.fragmentedSeq);
  const [ct, tag] = s.seal(header, v.fragmentedSeq, payload);
  const body = Buffer.concat([ct, tag]);
  const [count, size] = fragmentPlan(body.length, v.maxDatagram);
  const out: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const h = Buffer.alloc(FRAG_HEADER);
    writeFragmentHeader(h, 0, NEXT_IPV4_VNET, i, count, v.responderIndex, v.fragmentedSeq, size);
    out[`fragment${i}`] = Buffer.concat([h, body.subarray(i * size, Math.min(body.length, (i + 1) * size))]).toString('hex');
  }
  return out;
}
