// Flags of the process entries (daemon/, agents/) checked the same way everywhere: a bad value
// is STRAIT_ERR_USAGE naming the flag and the value.
import { E } from './codes.js';

/** A flag that must be an integer from 1 to `max`. */
export function positiveIntArg(v: string, what: string, max: number): number {
  if (!/^\d{1,9}$/.test(v) || Number(v) < 1 || Number(v) > max)
    throw E.usage(`${what} must be an integer from 1 to ${max}, got ${JSON.stringify(v)}`, { value: v });
  return Number(v);
}

/** A HOST:PORT flag ([v6] brackets taken off); undefined stays undefined. */
export function hostPortArg(v: string | undefined, what: string): { host: string; port: number } | undefined {
  if (v === undefined) return undefined;
  const m = /^(.+):(\d{1,5})$/.exec(v);
  if (!m) throw E.usage(`${what} must be HOST:PORT, got ${JSON.stringify(v)}`, { value: v });
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
