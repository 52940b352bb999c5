// Typed network values for renderers: an Ipv4 or a Port exists only after a parser said
// yes, so what reaches an nft script, a DNS answer or a proxy configuration is a
// canonical dotted quad or an integer from 1 to 65535, never text someone wrote.
import { intToIpv4, ipv4ToInt } from './cidr.js';

declare const ipv4Brand: unique symbol;
declare const portBrand: unique symbol;

/** A canonical dotted-quad IPv4 address ("10.96.0.11"; no leading zeros, no spaces). */
export type Ipv4 = string & { readonly [ipv4Brand]: true };
/** An integer from 1 to 65535. */
export type Port = number & { readonly [portBrand]: true };

/** The address when `value` is exactly a canonical dotted quad, else undefined. */
export function parseIpv4(value: unknown): Ipv4 | undefined {
  if (typeof value !== 'string' || value.length > 15) return undefined;
  const n = ipv4ToInt(value);
  if (n === undefined) return undefined;
  const canonical = intToIpv4(n);
  return canonical === value ? (canonical as Ipv4) : undefined;
}

/** The port when `value` is an integer from 1 to 65535, else undefined. */
export function parsePort(value: unknown): Port | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535 ? (value as Port) : undefined;
}
