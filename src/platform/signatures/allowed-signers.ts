// git's gpg.ssh.allowedSignersFile format, as ssh-keygen(1) "ALLOWED SIGNERS" defines it:
//   principals [options] keytype base64-key [comment]
// principals: a comma-separated pattern list ("*" and "?" wildcards, "!" negates), quoted
// or not; options (keywords case-insensitive, values double-quoted):
//   cert-authority            the key is a CA; certificates it signed are accepted
//   namespaces="git,file"     a pattern list the signature's namespace must match
//   valid-after="YYYYMMDD[HHMM[SS]][Z]"   valid-before="..."   (system time zone unless Z)
// Empty lines and lines starting with "#" are comments. A line that cannot be parsed is
// reported with its number and skipped (ssh-keygen refuses the file at that line; a
// controller keeps verifying with the other lines and reports the bad one).
import { E, isStraitError } from '../../base/errors/index.js';
import { parseSshPublicKey, type SshPublicKey } from './ssh-key.js';

export interface AllowedSigner {
  /** 1-based line number in the list */
  line: number;
  /** the line as written (trimmed) */
  text: string;
  /** the principals pattern list as written (quotes removed) */
  principals: string;
  certAuthority: boolean;
  /** namespaces pattern list; undefined = any namespace */
  namespaces?: string;
  /** seconds since the epoch */
  validAfter?: number;
  validBefore?: number;
  key: SshPublicKey;
  comment: string;
}

export interface AllowedSignerProblem {
  line: number;
  text: string;
  reason: string;
}

/** Split off the next whitespace-delimited token, keeping double-quoted runs together. */
function nextToken(s: string): { token: string; rest: string } | undefined {
  let i = 0;
  while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  if (i >= s.length) return undefined;
  const start = i;
  let quoted = false;
  for (; i < s.length; i++) {
    const c = s[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ' ' || c === '\t')) break;
  }
  if (quoted) return { token: '\0unterminated', rest: '' };
  return { token: s.slice(start, i), rest: s.slice(i) };
}

/** Split a comma-separated option list, keeping commas inside double quotes. */
function splitOptions(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const c of s) {
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/** ssh-keygen's YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z] (misc.c parse_absolute_time) as seconds. */
export function parseSshTime(text: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?(Z|z)?$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined;
  const ms = m[7] ? Date.UTC(y, mo - 1, d, h, mi, s) : new Date(y, mo - 1, d, h, mi, s).getTime();
  if (!Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  // Date rolls 20240231 over into March; ssh-keygen (strptime) refuses it
  if ((m[7] ? date.getUTCDate() : date.getDate()) !== d) return undefined;
  return Math.floor(ms / 1000);
}

const KEY_TYPE = /^(ssh-|ecdsa-sha2-|sk-)/;

/** Parse one non-comment line; throws STRAIT_ERR_ALLOWED_SIGNERS_INVALID. */
export function parseAllowedSignerLine(text: string, line = 1): AllowedSigner {
  const bad = (why: string) => E.allowedSignersInvalid(line, why, text.slice(0, 200));
  const first = nextToken(text);
  if (!first || first.token.startsWith('\0')) throw bad(first ? 'a double quote is not closed' : 'the line is empty');
  let principals = first.token;
  if (principals.startsWith('"')) {
    if (!principals.endsWith('"') || principals.length < 2) throw bad('the quoted principals do not end with a double quote');
    principals = principals.slice(1, -1);
  }
  if (principals === '' || principals.split(',').some((p) => p === '' || p === '!')) throw bad('the principals list has an empty pattern');
  if (KEY_TYPE.test(principals) && !principals.includes('@'))
    throw bad(`the line starts with ${JSON.stringify(principals)}, a key type: the principals are missing`);
  let next = nextToken(first.rest);
  if (!next || next.token.startsWith('\0')) throw bad(next ? 'a double quote is not closed' : 'no key follows the principals');
  const out: Omit<AllowedSigner, 'key' | 'comment'> = { line, text, principals, certAuthority: false };
  if (!KEY_TYPE.test(next.token)) {
    for (const opt of splitOptions(next.token)) {
      const eq = opt.indexOf('=');
      const name = (eq < 0 ? opt : opt.slice(0, eq)).toLowerCase();
      const raw = eq < 0 ? undefined : opt.slice(eq + 1);
      if (name === 'cert-authority' && raw === undefined) {
        out.certAuthority = true;
        continue;
      }
      if (!['namespaces', 'valid-after', 'valid-before'].includes(name))
        throw bad(`unknown option ${JSON.stringify(opt.slice(0, 60))} (cert-authority, namespaces, valid-after, valid-before)`);
      if (raw === undefined || raw.length < 2 || !raw.startsWith('"') || !raw.endsWith('"'))
        throw bad(`option ${name} needs a double-quoted value, e.g. ${name}="${name === 'namespaces' ? 'git' : '20250101'}"`);
      const value = raw.slice(1, -1);
      if (name === 'namespaces') {
        if (value === '') throw bad('namespaces="" allows no namespace');
        out.namespaces = value;
      } else {
        const t = parseSshTime(value);
        if (t === undefined) throw bad(`${name}=${JSON.stringify(value)} is not YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z]`);
        if (name === 'valid-after') out.validAfter = t;
        else out.validBefore = t;
      }
    }
    next = nextToken(next.rest);
    if (!next || next.token.startsWith('\0')) throw bad('no key follows the options');
  }
  const type = next.token;
  const b64 = nextToken(next.rest);
  if (!b64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64.token)) throw bad(`the ${type} key has no base64 data`);
  let key: SshPublicKey;
  try {
    key = parseSshPublicKey(Buffer.from(b64.token, 'base64'));
    void key.key; // a key OpenSSL refuses is a bad line now, not at its first use
  } catch (err) {
    throw bad(isStraitError(err) ? err.message : String(err));
  }
  if (key.type !== type) throw bad(`the line says ${type} but the key is ${key.type}`);
  if (key.cert) throw bad('a certificate cannot be an allowed signer; list its CA with cert-authority');
  if (out.validAfter !== undefined && out.validBefore !== undefined && out.validBefore < out.validAfter) throw bad('valid-before is earlier than valid-after');
  return { ...out, key, comment: b64.rest.trim() };
}

/** A parsed allowed_signers list, indexed by key. */
export class AllowedSigners {
  readonly entries: AllowedSigner[] = [];
  readonly problems: AllowedSignerProblem[] = [];
  private readonly byKey = new Map<string, AllowedSigner[]>();

  /** Every valid line of `text`; bad lines go to `problems`. */
  static parse(text: string): AllowedSigners {
    const set = new AllowedSigners();
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const t = (lines[i] as string).trim();
      if (t === '' || t.startsWith('#')) continue;
      try {
        set.add(parseAllowedSignerLine(t, i + 1));
      } catch (err) {
        if (!isStraitError(err)) throw err;
        set.problems.push({ line: i + 1, text: t.slice(0, 200), reason: err.message });
      }
    }
    return set;
  }

  add(entry: AllowedSigner): void {
    this.entries.push(entry);
    const k = entry.key.blob.toString('base64');
    const list = this.byKey.get(k);
    if (list) list.push(entry);
    else this.byKey.set(k, [entry]);
  }

  /**
   * The lines that may vouch for `key`: for a plain key the lines with that key and
   * no cert-authority; for a certificate the cert-authority lines with its CA's key.
   */
  candidates(key: SshPublicKey): AllowedSigner[] {
    const ca = key.cert?.signatureKey;
    const list = this.byKey.get((ca ?? key).blob.toString('base64')) ?? [];
    return list.filter((e) => e.certAuthority === (ca !== undefined));
  }
}

/**
 * OpenSSH's match_pattern_list: `value` against a comma-separated list of patterns
 * ("*", "?"; "!pattern" negates). A negated match refuses whatever else matches.
 */
export function matchPatternList(value: string, list: string): boolean {
  let matched = false;
  for (const raw of list.split(',')) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    if (matchPattern(value, pattern)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

/** OpenSSH's match_pattern: "*" any run, "?" one character, the rest literal. */
export function matchPattern(value: string, pattern: string): boolean {
  // iterative glob with backtracking to the last "*" (linear in practice, no regex)
  let v = 0;
  let p = 0;
  let star = -1;
  let mark = 0;
  while (v < value.length) {
    if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = v;
    } else if (p < pattern.length && (pattern[p] === '?' || pattern[p] === value[v])) {
      v++;
      p++;
    } else if (star >= 0) {
      p = star + 1;
      v = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
