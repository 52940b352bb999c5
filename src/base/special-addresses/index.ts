// Special-purpose IP addresses: is an address one that a server fetching a URL on a
// user's behalf may connect to (globally reachable unicast), or one of the ranges the
// IANA IPv4 and IPv6 Special-Purpose Address Registries, the multicast registries and the
// IPv6 address space registry set apart? One table per family, longest prefix wins;
// addresses that carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by it.
// Pure logic: addresses are parsed here, never looked up.
import { ipv4ToInt } from '../config/index.js';

export interface SpecialRange {
  /** the prefix as the registry writes it */
  readonly cidr: string;
  readonly name: string;
  /** where it is defined */
  readonly ref: string;
  /** the registry's "Globally Reachable" (a more specific entry overrides a less specific one) */
  readonly global: boolean;
  /** IPv6 only: where an embedded IPv4 address sits; the address is judged by it */
  readonly embeds?: 'low32' | '6to4';
}

const r = (cidr: string, name: string, ref: string, global = false, embeds?: 'low32' | '6to4'): SpecialRange => ({
  cidr,
  name,
  ref,
  global,
  ...(embeds ? { embeds } : {}),
});

/** IANA IPv4 Special-Purpose Address Registry (2024-10), plus multicast (RFC 5771). */
export const IPV4_SPECIAL: readonly SpecialRange[] = Object.freeze([
  r('0.0.0.0/8', 'this network', 'RFC 791'),
  r('10.0.0.0/8', 'private use', 'RFC 1918'),
  r('100.64.0.0/10', 'shared address space (CGNAT)', 'RFC 6598'),
  r('127.0.0.0/8', 'loopback', 'RFC 1122'),
  r('169.254.0.0/16', 'link local', 'RFC 3927'),
  r('172.16.0.0/12', 'private use', 'RFC 1918'),
  r('192.0.0.0/24', 'IETF protocol assignments', 'RFC 6890'),
  r('192.0.0.0/29', 'IPv4 service continuity prefix (DS-Lite)', 'RFC 7335'),
  r('192.0.0.8/32', 'IPv4 dummy address', 'RFC 7600'),
  r('192.0.0.9/32', 'port control protocol anycast', 'RFC 7723', true),
  r('192.0.0.10/32', 'traversal using relays around NAT anycast', 'RFC 8155', true),
  r('192.0.0.170/31', 'NAT64/DNS64 discovery', 'RFC 8880'),
  r('192.0.2.0/24', 'documentation (TEST-NET-1)', 'RFC 5737'),
  r('192.31.196.0/24', 'AS112-v4', 'RFC 7535', true),
  r('192.52.193.0/24', 'AMT', 'RFC 7450', true),
  r('192.88.99.0/24', 'deprecated 6to4 relay anycast', 'RFC 7526'),
  r('192.168.0.0/16', 'private use', 'RFC 1918'),
  r('192.175.48.0/24', 'direct delegation AS112 service', 'RFC 7534', true),
  r('198.18.0.0/15', 'benchmarking', 'RFC 2544'),
  r('198.51.100.0/24', 'documentation (TEST-NET-2)', 'RFC 5737'),
  r('203.0.113.0/24', 'documentation (TEST-NET-3)', 'RFC 5737'),
  r('224.0.0.0/4', 'multicast', 'RFC 5771'),
  r('240.0.0.0/4', 'reserved', 'RFC 1112'),
  r('255.255.255.255/32', 'limited broadcast', 'RFC 919'),
]);

/**
 * IANA IPv6 Special-Purpose Address Registry (2025-01), plus multicast, site-local and,
 * as the IPv6 address space registry says, everything outside global unicast 2000::/3.
 */
export const IPV6_SPECIAL: readonly SpecialRange[] = Object.freeze([
  r('::/0', 'outside global unicast 2000::/3 (reserved or unassigned)', 'IANA IPv6 address space'),
  r('2000::/3', 'global unicast', 'RFC 4291', true),
  r('::/128', 'unspecified address', 'RFC 4291'),
  r('::1/128', 'loopback address', 'RFC 4291'),
  r('::/96', 'IPv4-compatible (deprecated)', 'RFC 4291'),
  r('::ffff:0:0/96', 'IPv4-mapped', 'RFC 4291', false, 'low32'),
  r('::ffff:0:0:0/96', 'IPv4-translated (SIIT, obsolete)', 'RFC 2765'),
  r('64:ff9b::/96', 'IPv4-IPv6 translation (NAT64 well-known prefix)', 'RFC 6052', true, 'low32'),
  r('64:ff9b:1::/48', 'IPv4-IPv6 translation, local use', 'RFC 8215'),
  r('100::/64', 'discard-only', 'RFC 6666'),
  r('100:0:0:1::/64', 'dummy IPv6 prefix', 'RFC 9780'),
  r('2001::/23', 'IETF protocol assignments', 'RFC 2928'),
  r('2001::/32', 'TEREDO', 'RFC 4380'),
  r('2001:1::1/128', 'port control protocol anycast', 'RFC 7723', true),
  r('2001:1::2/128', 'traversal using relays around NAT anycast', 'RFC 8155', true),
  r('2001:1::3/128', 'DNS-SD service registration protocol anycast', 'RFC 9665', true),
  r('2001:2::/48', 'benchmarking', 'RFC 5180'),
  r('2001:3::/32', 'AMT', 'RFC 7450', true),
  r('2001:4:112::/48', 'AS112-v6', 'RFC 7535', true),
  r('2001:10::/28', 'deprecated ORCHID', 'RFC 4843'),
  r('2001:20::/28', 'ORCHIDv2', 'RFC 7343', true),
  r('2001:30::/28', 'drone remote ID protocol entity tags', 'RFC 9374', true),
  r('2001:db8::/32', 'documentation', 'RFC 3849'),
  r('2002::/16', '6to4', 'RFC 3056', false, '6to4'),
  r('2620:4f:8000::/48', 'direct delegation AS112 service', 'RFC 7534', true),
  r('3fff::/20', 'documentation', 'RFC 9637'),
  r('5f00::/16', 'segment routing (SRv6) SIDs', 'RFC 9602'),
  r('fc00::/7', 'unique-local', 'RFC 4193'),
  r('fe80::/10', 'link-local unicast', 'RFC 4291'),
  r('fec0::/10', 'site-local (deprecated)', 'RFC 3879'),
  r('ff00::/8', 'multicast', 'RFC 4291'),
]);

export interface AddressClass {
  /** 4 or 6; 0 when the text is not an IP address (then `public` is false) */
  family: 0 | 4 | 6;
  /** globally reachable unicast: a server may connect there for a user */
  public: boolean;
  /** the most specific special-purpose range the address is in */
  range?: SpecialRange;
  /** the IPv4 address an IPv6 address carries, when it was judged by it */
  embedded?: string;
}

interface Compiled {
  bits: bigint;
  prefix: number;
  range: SpecialRange;
}

function compile(table: readonly SpecialRange[], width: number, parse: (a: string) => bigint | undefined): Compiled[] {
  return (
    table
      .map((range) => {
        const [a, p] = range.cidr.split('/') as [string, string];
        const bits = parse(a);
        if (bits === undefined) throw new Error(`special-addresses: bad table entry ${range.cidr}`);
        return { bits, prefix: Number(p), range };
      })
      // longest prefix first: the first match is the most specific
      .sort((x, y) => y.prefix - x.prefix)
      .map((c) => ({ ...c, bits: c.bits >> BigInt(width - c.prefix) }))
  );
}

/** The 32 bits of a dotted-quad IPv4 address (four decimal octets, no leading zeros). */
export function parseIpv4(text: string): bigint | undefined {
  const n = ipv4ToInt(text);
  return n === undefined ? undefined : BigInt(n);
}

/** The 128 bits of an IPv6 address ("::", a dotted IPv4 tail and a %zone are accepted). */
export function parseIpv6(text: string): bigint | undefined {
  let a = text.toLowerCase();
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  let tail: bigint | undefined;
  const lastColon = a.lastIndexOf(':');
  if (lastColon >= 0 && a.includes('.', lastColon)) {
    tail = parseIpv4(a.slice(lastColon + 1));
    if (tail === undefined) return undefined;
    a = `${a.slice(0, lastColon + 1)}0:0`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  if ((halves.length === 2 && fill < 1) || head.length + rest.length + fill !== 8) return undefined;
  let n = 0n;
  for (const w of [...head, ...Array<string>(fill).fill('0'), ...rest]) {
    if (!/^[0-9a-f]{1,4}$/.test(w)) return undefined;
    n = (n << 16n) | BigInt(parseInt(w, 16));
  }
  return tail === undefined ? n : n | tail;
}

const V4 = compile(IPV4_SPECIAL, 32, parseIpv4);
const V6 = compile(IPV6_SPECIAL, 128, parseIpv6);

function lookup(table: readonly Compiled[], width: number, n: bigint): SpecialRange | undefined {
  for (const c of table) if (n >> BigInt(width - c.prefix) === c.bits) return c.range;
  return undefined;
}

const dotted = (n: bigint): string => `${(n >> 24n) & 255n}.${(n >> 16n) & 255n}.${(n >> 8n) & 255n}.${n & 255n}`;

/** Classify an address (text, optionally in [brackets]); anything unparsable is not public. */
export function classifyAddress(text: string): AddressClass {
  const t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = parseIpv4(t);
  if (v4 !== undefined) {
    const range = lookup(V4, 32, v4);
    return { family: 4, public: range === undefined || range.global, ...(range ? { range } : {}) };
  }
  const v6 = t.includes(':') ? parseIpv6(t) : undefined;
  if (v6 === undefined) return { family: 0, public: false };
  const range = lookup(V6, 128, v6) as SpecialRange; // ::/0 matches everything
  if (range.embeds) {
    const inner = range.embeds === 'low32' ? v6 & 0xffffffffn : (v6 >> 80n) & 0xffffffffn;
    const embedded = dotted(inner);
    const v4class = classifyAddress(embedded);
    return { family: 6, public: v4class.public, range, embedded };
  }
  return { family: 6, public: range.global, range };
}

/** True for a globally reachable unicast address; false for special-purpose and unparsable text. */
export function isPublicAddress(text: string): boolean {
  return classifyAddress(text).public;
}
