// Protocol sniffing on the first bytes of an inbound connection, as Envoy's
// tls_inspector does: a TLS handshake record (content type 22, version 3.x) that
// starts a ClientHello (handshake type 1) is TLS; anything else is plaintext.

/** 1 = TLS ClientHello, 0 = plaintext, -1 = need more bytes to decide. */
export function sniffTls(buf: Buffer): number {
  if (buf.length === 0) return -1;
  if (buf[0] !== 0x16) return 0;
  if (buf.length < 2) return -1;
  if (buf[1] !== 0x03) return 0;
  if (buf.length < 6) return -1;
  return buf[5] === 0x01 ? 1 : 0;
}
