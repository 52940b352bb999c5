// Reading a TLS ClientHello far enough to route a connection, as Envoy's tls_inspector
// does: the SNI host name and the ALPN protocols offered. Decode only (strait never
// writes ClientHellos); every read is bounds-checked; malformed input gives
// { status: 'malformed' }, never an exception.
//   record:    type(1)=22 version(2) length(2) fragment
//   handshake: type(1)=1 length(3) version(2) random(32) session_id<1> cipher_suites<2>
//              compression_methods<1> extensions<2> { type(2) length(2) data }
//   SNI (0):   list<2> { name_type(1) name<2> }; ALPN (16): list<2> { name<1> }

export interface ClientHelloInfo {
  /** need-more: the first record is not complete yet; malformed: not a ClientHello we can read */
  status: 'ok' | 'need-more' | 'malformed';
  /** bytes the whole first record takes (5 + its length), when known */
  recordLength?: number;
  sni?: string;
  alpn: string[];
}

export const MAX_RECORD = 5 + 16384;

const MALFORMED: ClientHelloInfo = Object.freeze({ status: 'malformed', alpn: [] }) as ClientHelloInfo;

export function decode(buf: Buffer, offset = 0): ClientHelloInfo {
  const avail = buf.length - offset;
  if (avail < 5) return { status: 'need-more', alpn: [] };
  if (buf[offset] !== 22 || buf[offset + 1] !== 3) return MALFORMED;
  const recLen = buf.readUInt16BE(offset + 3);
  if (recLen < 4 || recLen > 16384) return MALFORMED;
  if (avail < 5 + recLen) return { status: 'need-more', recordLength: 5 + recLen, alpn: [] };
  const end = offset + 5 + recLen;
  let p = offset + 5;
  if (buf[p] !== 1) return MALFORMED;
  const hsLen = ((buf[p + 1] as number) << 16) | ((buf[p + 2] as number) << 8) | (buf[p + 3] as number);
  p += 4;
  // a ClientHello split over several records is read as far as this record goes
  const hsEnd = Math.min(end, p + hsLen);
  p += 2 + 32; // version, random
  if (p + 1 > hsEnd) return MALFORMED;
  p += 1 + (buf[p] as number); // session id
  if (p + 2 > hsEnd) return MALFORMED;
  p += 2 + buf.readUInt16BE(p); // cipher suites
  if (p + 1 > hsEnd) return MALFORMED;
  p += 1 + (buf[p] as number); // compression methods
  const info: ClientHelloInfo = { status: 'ok', recordLength: 5 + recLen, alpn: [] };
  if (p === hsEnd) return info; // no extensions
  if (p + 2 > hsEnd) return MALFORMED;
  const extEnd = Math.min(hsEnd, p + 2 + buf.readUInt16BE(p));
  p += 2;
  while (p + 4 <= extEnd) {
    const type = buf.readUInt16BE(p);
    const len = buf.readUInt16BE(p + 2);
    p += 4;
    if (p + len > extEnd) return MALFORMED;
    if (type === 0 && len >= 2) {
      let q = p + 2;
      const listEnd = Math.min(p + len, p + 2 + buf.readUInt16BE(p));
      while (q + 3 <= listEnd) {
        const nameType = buf[q] as number;
        const nameLen = buf.readUInt16BE(q + 1);
        q += 3;
        if (q + nameLen > listEnd) return MALFORMED;
        if (nameType === 0 && info.sni === undefined) info.sni = buf.toString('latin1', q, q + nameLen);
        q += nameLen;
      }
    } else if (type === 16 && len >= 2) {
      let q = p + 2;
      const listEnd = Math.min(p + len, p + 2 + buf.readUInt16BE(p));
      while (q + 1 <= listEnd) {
        const n = buf[q] as number;
        q += 1;
        if (n === 0 || q + n > listEnd) return MALFORMED;
        info.alpn.push(buf.toString('latin1', q, q + n));
        q += n;
      }
    }
    p += len;
  }
  return info;
}
