import { E } from '../errors/index.js';

export interface Cidr {
  /** network address as an unsigned 32-bit integer */
  readonly network: number;
  readonly prefix: number;
  readonly text: string;
}

/** four decimal octets without leading zeros (inet_aton reads "010" as octal: never guess) */
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Dotted IPv4 text to an unsigned 32-bit integer; undefined when it is not one. */
export function ipv4ToInt(ip: string): number | undefined {
  if (!IPV4.test(ip)) return undefined;
  const p = ip.split('.');
  return ((Number(p[0]) << 24) | (Number(p[1]) << 16) | (Number(p[2]) << 8) | Number(p[3])) >>> 0;
}

export function intToIpv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export function isIPv4Cidr(text: string): boolean {
  const [ip, len, extra] = text.split('/');
  if (extra !== undefined || ip === undefined || len === undefined || !/^\d{1,2}$/.test(len)) return false;
  return ipv4ToInt(ip) !== undefined && Number(len) <= 32;
}

/** Parse "a.b.c.d/len"; host bits must be zero. */
export function parseCidr(text: string, where = 'cidr'): Cidr {
  if (!isIPv4Cidr(text)) throw E.configInvalid(where, text, 'must be an IPv4 CIDR such as 10.1.0.0/16');
  const [ip, len] = text.split('/') as [string, string];
  const prefix = Number(len);
  const addr = ipv4ToInt(ip) as number;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  if ((addr & mask) >>> 0 !== addr) {
    throw E.configInvalid(where, text, `has host bits set; did you mean ${intToIpv4((addr & mask) >>> 0)}/${prefix}?`);
  }
  return { network: addr, prefix, text };
}

export function cidrContains(c: Cidr, ip: number): boolean {
  const mask = c.prefix === 0 ? 0 : (0xffffffff << (32 - c.prefix)) >>> 0;
  return (ip & mask) >>> 0 === c.network;
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  const p = Math.min(a.prefix, b.prefix);
  const mask = p === 0 ? 0 : (0xffffffff << (32 - p)) >>> 0;
  return (a.network & mask) >>> 0 === (b.network & mask) >>> 0;
}
