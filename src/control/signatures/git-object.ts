// Parse raw git commit and tag objects (the bytes `git cat-file commit|tag SHA` prints,
// without the "type size\0" prefix) and rebuild the exact payload git signed.
//   commit: the signature is the `gpgsig` (or `gpgsig-sha256`) header, continued on
//           lines that start with one space; the payload is the object without that
//           header and its continuation lines (git's parse_buffer_signed_by_header).
//   tag:    the signature is appended to the message, starting at the first line that
//           begins with "-----BEGIN PGP SIGNATURE-----" (or another signature marker);
//           the payload is everything before that line (git's parse_signature).
// Bytes are handled as latin1 strings so that every byte maps to one char and back.
import { E } from '../../base/errors/index.js';

export interface GitHeader {
  name: string;
  /** value with continuation lines joined by "\n" (leading space removed) */
  value: string;
}

export interface ParsedCommit {
  type: 'commit';
  tree: string;
  parents: string[];
  author: string;
  committer: string;
  headers: GitHeader[];
  /** message bytes as a latin1 string; decode with Buffer.from(m, 'latin1') */
  message: string;
  /** armored signature text, or undefined when the commit is unsigned */
  signature: string | undefined;
  /** the bytes the signature covers */
  payload: Buffer;
}

export interface ParsedTag {
  type: 'tag';
  object: string;
  objectType: string;
  tag: string;
  tagger: string | undefined;
  headers: GitHeader[];
  message: string;
  signature: string | undefined;
  payload: Buffer;
}

const SIG_HEADERS = new Set(['gpgsig', 'gpgsig-sha256']);
const SIG_MARKERS = ['-----BEGIN PGP SIGNATURE-----', '-----BEGIN PGP MESSAGE-----', '-----BEGIN SSH SIGNATURE-----', '-----BEGIN SIGNED MESSAGE-----'];
const HEX_OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const MAX_OBJECT = 64 * 1024 * 1024;

interface Split {
  headers: GitHeader[];
  /** byte ranges [start, end) of each header including continuations and the final \n */
  ranges: [number, number][];
  message: string;
}

function splitObject(s: string, what: string): Split {
  const headers: GitHeader[] = [];
  const ranges: [number, number][] = [];
  let pos = 0;
  while (pos < s.length) {
    if (s.charCodeAt(pos) === 10) {
      return { headers, ranges, message: s.slice(pos + 1) };
    }
    let end = s.indexOf('\n', pos);
    if (end < 0) throw E.gitObjectInvalid(what, `header line at byte ${pos} has no end of line`);
    const first = s.slice(pos, end);
    if (first.charCodeAt(0) === 32) throw E.gitObjectInvalid(what, `continuation line at byte ${pos} follows no header`);
    const sp = first.indexOf(' ');
    if (sp <= 0) throw E.gitObjectInvalid(what, `header line ${JSON.stringify(first.slice(0, 40))} has no name and value`);
    const name = first.slice(0, sp);
    const parts = [first.slice(sp + 1)];
    const start = pos;
    pos = end + 1;
    while (pos < s.length && s.charCodeAt(pos) === 32) {
      end = s.indexOf('\n', pos);
      if (end < 0) throw E.gitObjectInvalid(what, `continuation line at byte ${pos} has no end of line`);
      parts.push(s.slice(pos + 1, end));
      pos = end + 1;
    }
    headers.push({ name, value: parts.join('\n') });
    ranges.push([start, pos]);
  }
  return { headers, ranges, message: '' };
}

function one(headers: GitHeader[], name: string, what: string): string {
  const h = headers.find((x) => x.name === name);
  if (!h) throw E.gitObjectInvalid(what, `missing ${JSON.stringify(name)} header`);
  return h.value;
}

function toLatin1(raw: Buffer | Uint8Array | string, what: string): string {
  if (typeof raw === 'string') return raw;
  if (raw.length > MAX_OBJECT) throw E.gitObjectInvalid(what, `object of ${raw.length} bytes is larger than ${MAX_OBJECT}`);
  return Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('latin1');
}

export function parseCommitObject(raw: Buffer | Uint8Array | string): ParsedCommit {
  const s = toLatin1(raw, 'commit');
  const { headers, ranges, message } = splitObject(s, 'commit');
  const tree = one(headers, 'tree', 'commit');
  if (!HEX_OID.test(tree)) throw E.gitObjectInvalid('commit', `tree ${JSON.stringify(tree.slice(0, 80))} is not an object ID`);
  const parents = headers.filter((h) => h.name === 'parent').map((h) => h.value);
  for (const p of parents) if (!HEX_OID.test(p)) throw E.gitObjectInvalid('commit', `parent ${JSON.stringify(p.slice(0, 80))} is not an object ID`);
  const author = one(headers, 'author', 'commit');
  const committer = one(headers, 'committer', 'commit');
  let signature: string | undefined;
  let payload = '';
  let last = 0;
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i] as GitHeader;
    if (!SIG_HEADERS.has(h.name)) continue;
    const [a, b] = ranges[i] as [number, number];
    // The SHA-1 signature is the one gpg made over a SHA-1 repository; keep the first.
    signature ??= h.value + '\n';
    payload += s.slice(last, a);
    last = b;
  }
  payload += s.slice(last);
  return { type: 'commit', tree, parents, author, committer, headers, message, signature, payload: Buffer.from(payload, 'latin1') };
}

export function parseTagObject(raw: Buffer | Uint8Array | string): ParsedTag {
  const s = toLatin1(raw, 'tag');
  const { headers, message } = splitObject(s, 'tag');
  const object = one(headers, 'object', 'tag');
  if (!HEX_OID.test(object)) throw E.gitObjectInvalid('tag', `object ${JSON.stringify(object.slice(0, 80))} is not an object ID`);
  const objectType = one(headers, 'type', 'tag');
  const tag = one(headers, 'tag', 'tag');
  const tagger = headers.find((h) => h.name === 'tagger')?.value;
  // Signature: the first line of the message that starts with a marker.
  const msgStart = s.length - message.length;
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
    return { type: 'tag', object, objectType, tag, tagger, headers, message, signature: undefined, payload: Buffer.from(s, 'latin1') };
  }
  return {
    type: 'tag', object, objectType, tag, tagger, headers,
    message: message.slice(0, sigAt),
    signature: message.slice(sigAt),
    payload: Buffer.from(s.slice(0, msgStart + sigAt), 'latin1'),
  };
}
