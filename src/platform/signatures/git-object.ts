// Parse raw git commit and tag objects (the bytes `git cat-file commit|tag SHA` prints,
// without the "type size\0" prefix) and rebuild the exact payload git signed.
//   commit: the signature is the `gpgsig` header (`gpgsig-sha256` in SHA-256
//           repositories), continued on lines that start with one space; the payload
//           is the object without every gpgsig* header and its continuation lines
//           (git's parse_buffer_signed_by_header).
//   tag:    the signature is appended to the message, starting at the first line that
//           begins with "-----BEGIN PGP SIGNATURE-----" (or another signature marker);
//           the payload is everything before that line (git's parse_signature).
// Bytes are scanned as latin1 (one char per byte); text fields are decoded as UTF-8.
import { createHash } from 'node:crypto';
import { E } from '../../base/errors/index.js';

/**
 * True when `raw` (an object's content without the "type size\0" prefix) is the
 * object named `id`: SHA-1 for 40 hex digits, SHA-256 for 64. Readers check this so
 * that what they verify and read is the object they asked git for, whatever git's
 * configuration (replace refs, grafts) would substitute.
 */
export function gitObjectMatches(type: 'commit' | 'tag' | 'tree' | 'blob', raw: Uint8Array, id: string): boolean {
  const algo = id.length === 64 ? 'sha256' : id.length === 40 ? 'sha1' : undefined;
  if (!algo) return false;
  return createHash(algo).update(`${type} ${raw.length}\0`).update(raw).digest('hex') === id.toLowerCase();
}

export interface GitIdent {
  name: string;
  email: string;
  /** seconds since the epoch */
  time: number;
  /** as written, e.g. "+0200" */
  tz: string;
  /** ISO 8601 with the original offset, e.g. "2024-01-02T03:04:05+02:00" */
  date: string;
}

export interface GitHeader {
  key: string;
  /** value with continuation lines joined by "\n" (leading space removed) */
  value: string;
}

export interface CommitObject {
  tree: string;
  parents: string[];
  author: GitIdent;
  committer: GitIdent;
  /** every header in order (signature headers included) */
  headers: GitHeader[];
  /** armored signature text, or undefined when the commit is unsigned */
  signature: string | undefined;
  /** the bytes the signature covers */
  payload: Buffer;
  /** the message, decoded as UTF-8 */
  message: string;
}

export interface TagObject {
  object: string;
  objectType: string;
  tag: string;
  tagger: GitIdent | undefined;
  headers: GitHeader[];
  /** the message without the signature, decoded as UTF-8 */
  message: string;
  signature: string | undefined;
  payload: Buffer;
}

const SIG_MARKERS = ['-----BEGIN PGP SIGNATURE-----', '-----BEGIN PGP MESSAGE-----', '-----BEGIN SSH SIGNATURE-----', '-----BEGIN SIGNED MESSAGE-----'];
const HEX_OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const IDENT = /^(.*?) ?<([^<>]*)> (-?\d+) ([+-]\d{4})$/;
const MAX_OBJECT = 16 * 1024 * 1024;

const NON_ASCII = /[\u0080-\uffff]/;
/** Latin1 text (one char per byte) decoded as UTF-8; ASCII is the same either way. */
const utf8 = (latin1: string): string => (NON_ASCII.test(latin1) ? Buffer.from(latin1, 'latin1').toString('utf8') : latin1);

function parseIdent(value: string, which: string, what: 'commit' | 'tag'): GitIdent {
  const m = IDENT.exec(value);
  if (!m) throw E.signatureObjectInvalid(`${which} line ${JSON.stringify(value.slice(0, 120))} is not "Name <email> seconds +zzzz"`, what);
  const time = Number(m[3]);
  const tz = m[4] as string;
  const sign = tz[0] === '-' ? -1 : 1;
  const offMin = sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(3, 5)));
  const local = new Date((time + offMin * 60) * 1000);
  const date = Number.isFinite(local.getTime()) ? `${local.toISOString().slice(0, 19)}${tz.slice(0, 3)}:${tz.slice(3)}`.replace(/\+00:00$/, 'Z') : '';
  return { name: utf8(m[1] as string), email: utf8(m[2] as string), time, tz, date };
}

interface Split {
  headers: GitHeader[];
  /** byte ranges [start, end) of each header including continuations and the final \n */
  ranges: [number, number][];
  /** offset of the message (after the blank line), or s.length when there is none */
  messageAt: number;
}

function splitObject(s: string, what: 'commit' | 'tag'): Split {
  const headers: GitHeader[] = [];
  const ranges: [number, number][] = [];
  const n = s.length;
  let pos = 0;
  while (pos < n) {
    if (s.charCodeAt(pos) === 10) return { headers, ranges, messageAt: pos + 1 };
    let end = s.indexOf('\n', pos);
    if (end < 0) throw E.signatureObjectInvalid(`header line at byte ${pos} has no end of line`, what);
    if (s.charCodeAt(pos) === 32) throw E.signatureObjectInvalid(`continuation line at byte ${pos} follows no header`, what);
    const sp = s.indexOf(' ', pos);
    if (sp < 0 || sp > end) throw E.signatureObjectInvalid(`header line ${JSON.stringify(s.slice(pos, end).slice(0, 80))} has no key`, what);
    let value = s.slice(sp + 1, end);
    const start = pos;
    pos = end + 1;
    if (pos < n && s.charCodeAt(pos) === 32) {
      const parts = [value];
      while (pos < n && s.charCodeAt(pos) === 32) {
        end = s.indexOf('\n', pos);
        if (end < 0) throw E.signatureObjectInvalid(`continuation line at byte ${pos} has no end of line`, what);
        parts.push(s.slice(pos + 1, end));
        pos = end + 1;
      }
      value = parts.join('\n');
    }
    headers.push({ key: s.slice(start, sp), value });
    ranges.push([start, pos]);
  }
  return { headers, ranges, messageAt: n };
}

/** The object's bytes (strings are taken as UTF-8 text; buffers as the bytes) and the same as latin1 text (one char per byte). */
function bytesOf(raw: Buffer | Uint8Array | string, what: 'commit' | 'tag'): { buf: Buffer; s: string } {
  const buf = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  if (buf.length > MAX_OBJECT) throw E.signatureObjectInvalid(`object is ${buf.length} bytes, more than ${MAX_OBJECT}`, what);
  return { buf, s: buf.toString('latin1') };
}

/**
 * Parse a raw commit object. `signatureHeader` picks the signature returned:
 * "gpgsig" (SHA-1 repositories, default) or "gpgsig-sha256". Throws
 * STRAIT_ERR_SIGNATURE_OBJECT_INVALID.
 */
export function parseCommitObject(raw: Buffer | Uint8Array | string, signatureHeader = 'gpgsig'): CommitObject {
  const { buf, s } = bytesOf(raw, 'commit');
  const { headers, ranges, messageAt } = splitObject(s, 'commit');
  const tree = headers[0]?.key === 'tree' ? headers[0].value : undefined;
  if (tree === undefined || !HEX_OID.test(tree)) throw E.signatureObjectInvalid('first header must be "tree <object id>"');
  const parents: string[] = [];
  let author: GitIdent | undefined;
  let committer: GitIdent | undefined;
  let signature: string | undefined;
  // the payload: the bytes outside every signature header
  const kept: Buffer[] = [];
  let last = 0;
  let seenSig = false;
  for (let i = 1; i < headers.length; i++) {
    const h = headers[i] as GitHeader;
    if (h.key === 'parent') {
      if (!HEX_OID.test(h.value)) throw E.signatureObjectInvalid(`parent ${JSON.stringify(h.value.slice(0, 80))} is not an object id`);
      parents.push(h.value);
    } else if (h.key === 'author' && !author) {
      author = parseIdent(h.value, 'author', 'commit');
    } else if (h.key === 'committer' && !committer) {
      committer = parseIdent(h.value, 'committer', 'commit');
    } else if (h.key === 'gpgsig' || h.key === 'gpgsig-sha256') {
      if (h.key === signatureHeader) {
        if (seenSig) throw E.signatureObjectInvalid(`more than one ${signatureHeader} header`);
        seenSig = true;
        signature = h.value.endsWith('\n') ? h.value : `${h.value}\n`;
      }
      const [a, b] = ranges[i] as [number, number];
      kept.push(buf.subarray(last, a));
      last = b;
    }
  }
  if (!author) throw E.signatureObjectInvalid('no author header');
  if (!committer) throw E.signatureObjectInvalid('no committer header');
  kept.push(buf.subarray(last));
  // a copy: the payload never shares memory with the caller's buffer
  const payload = kept.length === 1 ? Buffer.from(kept[0]!) : Buffer.concat(kept);
  return { tree, parents, author, committer, headers, signature, payload, message: buf.toString('utf8', messageAt) };
}

/** Parse a raw tag object. Throws STRAIT_ERR_SIGNATURE_OBJECT_INVALID. */
export function parseTagObject(raw: Buffer | Uint8Array | string): TagObject {
  const { s } = bytesOf(raw, 'tag');
  const { headers, messageAt } = splitObject(s, 'tag');
  const one = (key: string): string => {
    const h = headers.find((x) => x.key === key);
    if (!h) throw E.signatureObjectInvalid(`missing ${JSON.stringify(key)} header`, 'tag');
    return h.value;
  };
  const object = one('object');
  if (!HEX_OID.test(object)) throw E.signatureObjectInvalid(`object ${JSON.stringify(object.slice(0, 80))} is not an object id`, 'tag');
  const objectType = one('type');
  const tag = utf8(one('tag'));
  const taggerLine = headers.find((h) => h.key === 'tagger')?.value;
  const tagger = taggerLine === undefined ? undefined : parseIdent(taggerLine, 'tagger', 'tag');
  const message = s.slice(messageAt);
  // Signature: the first line of the message that starts with a marker.
  let sigAt = -1;
  let lineStart = 0;
  while (lineStart <= message.length) {
    if (SIG_MARKERS.some((m) => message.startsWith(m, lineStart))) {
      sigAt = lineStart;
      break;
    }
    const nl = message.indexOf('\n', lineStart);
    if (nl < 0) break;
    lineStart = nl + 1;
  }
  if (sigAt < 0) {
    return { object, objectType, tag, tagger, headers, message: utf8(message), signature: undefined, payload: Buffer.from(s, 'latin1') };
  }
  return {
    object,
    objectType,
    tag,
    tagger,
    headers,
    message: utf8(message.slice(0, sigAt)),
    signature: message.slice(sigAt),
    payload: Buffer.from(s.slice(0, messageAt + sigAt), 'latin1'),
  };
}
