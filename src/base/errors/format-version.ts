// The one rule every versioned record of strait's own is read by (docs/upgrades.md, "Version
// skew"): no version is the first version listed (what strait writes today); a version this
// strait does not read is refused as such, before any other key is looked at, so a newer
// writer's record is never read as an older format.
import { E } from './codes.js';

/** The record's format version (`doc.version`, absent: `supported[0]`), or STRAIT_ERR_VERSION_UNSUPPORTED naming `what`. */
export function formatVersionOf(what: string, doc: Readonly<Record<string, unknown>>, supported: readonly number[]): number {
  const v = doc['version'];
  if (v === undefined) return supported[0] as number;
  if (typeof v !== 'number' || !supported.includes(v)) throw E.versionUnsupported(what, v, [...supported]);
  return v;
}
