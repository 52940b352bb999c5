// A bounded check of a DNS query before it reaches dns2's parser, which can spend a
// second or more on one crafted packet (huge section counts). A cluster DNS server
// only needs standard queries: one question, no answers or authorities, at most one
// additional record (EDNS OPT), a name of plain labels.

const MAX_QUERY = 4096;

export function plausibleQuery(buf: Buffer): boolean {
  if (buf.length < 17 || buf.length > MAX_QUERY) return false;
  const flags = buf.readUInt16BE(2);
  if ((flags & 0x8000) !== 0) return false; // a response, not a query
  if (((flags >> 11) & 0xf) !== 0) return false; // opcode QUERY only
  if (buf.readUInt16BE(4) !== 1 || buf.readUInt16BE(6) !== 0 || buf.readUInt16BE(8) !== 0 || buf.readUInt16BE(10) > 1) return false;
  let off = 12;
  let nameLen = 0;
  for (;;) {
    if (off >= buf.length) return false;
    const len = buf[off] as number;
    if (len === 0) break;
    if (len > 63) return false; // compression pointers or extended labels have no place in a question
    nameLen += len + 1;
    if (nameLen > 255) return false;
    off += len + 1;
  }
  return off + 5 <= buf.length;
}
