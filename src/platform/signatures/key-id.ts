// GnuPG key ID rules shared by the key store, the API and the CLI:
//   16 hex digits (a "long" key ID) are the canonical form, upper case;
//   a 40-hex fingerprint is accepted and reduced to its last 16 digits;
//   anything else -> "<id> is not a valid GnuPG key ID".
import { E } from '../../base/errors/index.js';

const LONG_ID = /^[0-9A-Fa-f]{16}$/;
const FINGERPRINT = /^[0-9A-Fa-f]{40}$/;

export function isValidKeyID(id: string): boolean {
  return LONG_ID.test(id) || FINGERPRINT.test(id);
}

/** Canonical 16-hex upper-case key ID; throws STRAIT_ERR_GITOPS_KEY_ID_INVALID otherwise. */
export function normalizeKeyID(id: string): string {
  const s = id.trim();
  if (LONG_ID.test(s)) return s.toUpperCase();
  if (FINGERPRINT.test(s)) return s.slice(24).toUpperCase();
  throw E.gpgKeyIdInvalid(id);
}
