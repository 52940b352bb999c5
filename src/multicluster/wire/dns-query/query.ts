// The query fast path: reads the header, the one question and an optional EDNS OPT record
// of a DNS query without the general codec. Every read is bounds-checked; anything it does
// not recognise (compression in the question, another additional record) returns undefined
// and the server falls back to dns2's parser.
export interface Query {
  id: number;
  rd: boolean;
  /** the name as asked, without the final dot */
  qname: string;
  qtype: number;
  qclass: number;
  /** EDNS payload size the client announced, 0 when it sent no OPT record */
  edns: number;
}

export function readQuery(msg: Buffer): Query | undefined {
  if (msg.length < 17) return undefined;
  const qd = msg.readUInt16BE(4);
  const ar = msg.readUInt16BE(10);
  if (qd !== 1 || msg.readUInt16BE(6) !== 0 || msg.readUInt16BE(8) !== 0 || ar > 1) return undefined;
  let o = 12;
  let name = '';
  for (;;) {
    if (o >= msg.length) return undefined;
    const len = msg[o]!;
    if (len === 0) {
      o++;
      break;
    }
    if (len > 63) return undefined; // compression or reserved bits
    if (o + 1 + len > msg.length || name.length + len + 1 > 254) return undefined;
    for (let i = o + 1; i <= o + len; i++) {
      const c = msg[i]!;
      // letters, digits, '-', '_' only: anything else goes through the full codec
      if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f)) return undefined;
    }
    name += (name.length > 0 ? '.' : '') + msg.toString('latin1', o + 1, o + 1 + len);
    o += 1 + len;
  }
  if (o + 4 > msg.length) return undefined;
  const qtype = msg.readUInt16BE(o);
  const qclass = msg.readUInt16BE(o + 2);
  o += 4;
  let edns = 0;
  if (ar === 1) {
    // OPT: root name, type 41, class = payload size, ttl, rdlength, rdata
    if (o + 11 > msg.length || msg[o] !== 0 || msg.readUInt16BE(o + 1) !== 41) return undefined;
    edns = Math.max(512, msg.readUInt16BE(o + 3));
    const rdlen = msg.readUInt16BE(o + 9);
    if (o + 11 + rdlen !== msg.length) return undefined;
  } else if (o !== msg.length) {
    return undefined;
  }
  return { id: msg.readUInt16BE(0), rd: (msg[2]! & 0x01) === 1, qname: name, qtype, qclass, edns };
}

/** End of the first question (after QTYPE and QCLASS), or -1; a compression pointer is refused. */
function questionEnd(msg: Buffer): number {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return -1;
  let o = 12;
  for (;;) {
    if (o >= msg.length) return -1;
    const len = msg[o]!;
    if (len === 0) break;
    if (len > 63) return -1;
    o += 1 + len;
  }
  o += 5;
  return o <= msg.length ? o : -1;
}

/**
 * Whether a response answers the query's question: one question, the same name (ASCII
 * letters compared without case, RFC 4343), type and class.
 */
export function sameQuestion(query: Buffer, response: Buffer): boolean {
  const end = questionEnd(query);
  if (end < 0 || questionEnd(response) !== end) return false;
  for (let i = 12; i < end - 4; i++) {
    let a = query[i]!;
    let b = response[i]!;
    if (a >= 0x41 && a <= 0x5a) a |= 0x20;
    if (b >= 0x41 && b <= 0x5a) b |= 0x20;
    if (a !== b) return false;
  }
  return query.readUInt32BE(end - 4) === response.readUInt32BE(end - 4);
}
