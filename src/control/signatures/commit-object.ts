// Git commit objects: parse the raw object (as `git cat-file commit <sha>` prints it)
// and rebuild the exact payload a signature covers: the object without its signature
// header. Signed payload bytes must match what `git commit -S` handed to gpg.
import { E } from '../../base/errors/index.js';

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

export interface CommitObject {
  tree: string;
  parents: string[];
  author: GitIdent;
  committer: GitIdent;
  /** every header in order, continuation lines joined with "\n" (signature headers included) */
  headers: { key: string; value: string }[];
  /** armored signature text from the signature header, or undefined when unsigned */
  signature: string | undefined;
  /** the bytes the signature covers: the raw object without the signature header */
  payload: Buffer;
  message: string;
}

const MAX_COMMIT_BYTES = 16 * 1024 * 1024;
const IDENT = /^(.*?) ?<([^<>]*)> (-?\d+) ([+-]\d{4})$/;
const HEX_OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function badObject(why: string): Error {
  return E.signatureObjectInvalid(why);
}

function parseIdent(value: string, which: string): GitIdent {
  const m = IDENT.exec(value);
  if (!m) throw badObject(`${which} line ${JSON.stringify(value.slice(0, 120))} is not "Name <email> seconds +zzzz"`);
  const time = Number(m[3]);
  const tz = m[4] as string;
  const sign = tz[0] === '-' ? -1 : 1;
  const offMin = sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(3, 5)));
  const local = new Date((time + offMin * 60) * 1000);
  const date = Number.isFinite(local.getTime())
    ? `${local.toISOString().slice(0, 19)}${tz.slice(0, 3)}:${tz.slice(3)}`.replace(/\+00:00$/, 'Z')
    : '';
  return { name: m[1] as string, email: m[2] as string, time, tz, date };
}

/**
 * Parse a raw commit object. `signatureHeader` is "gpgsig" for SHA-1 repositories
 * ("gpgsig-sha256" for SHA-256 ones). Throws STRAIT_ERR_SIGNATURE_OBJECT_INVALID.
 */
export function parseCommitObject(raw: Buffer | string, signatureHeader = 'gpgsig'): CommitObject {
  const buf = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  if (buf.length > MAX_COMMIT_BYTES) throw badObject(`object is ${buf.length} bytes, more than ${MAX_COMMIT_BYTES}`);
  const headerEnd = buf.indexOf('\n\n');
  const headEnd = headerEnd === -1 ? buf.length : headerEnd;
  const message = headerEnd === -1 ? '' : buf.subarray(headerEnd + 2).toString('utf8');

  const headers: { key: string; value: string }[] = [];
  // byte ranges of the signature header (with continuation lines) to cut out of the payload
  let sigStart = -1;
  let sigEnd = -1;
  let inSig = false;
  let pos = 0;
  while (pos < headEnd) {
    let nl = buf.indexOf(10, pos);
    if (nl === -1 || nl > headEnd) nl = headEnd;
    const line = buf.subarray(pos, nl).toString('utf8');
    if (line.startsWith(' ')) {
      const last = headers[headers.length - 1];
      if (!last) throw badObject('continuation line before any header');
      last.value += `\n${line.slice(1)}`;
      if (inSig) sigEnd = nl + 1;
    } else {
      const sp = line.indexOf(' ');
      if (sp <= 0) throw badObject(`header line ${JSON.stringify(line.slice(0, 80))} has no key`);
      const key = line.slice(0, sp);
      headers.push({ key, value: line.slice(sp + 1) });
      inSig = key === signatureHeader;
      if (inSig) {
        if (sigStart !== -1) throw badObject(`more than one ${signatureHeader} header`);
        sigStart = pos;
        sigEnd = nl + 1;
      }
    }
    pos = nl + 1;
  }

  const tree = headers[0]?.key === 'tree' ? headers[0].value : undefined;
  if (tree === undefined || !HEX_OID.test(tree)) throw badObject('first header must be "tree <object id>"');
  const parents: string[] = [];
  let author: GitIdent | undefined;
  let committer: GitIdent | undefined;
  for (const h of headers.slice(1)) {
    if (h.key === 'parent') {
      if (!HEX_OID.test(h.value)) throw badObject(`parent ${JSON.stringify(h.value.slice(0, 80))} is not an object id`);
      parents.push(h.value);
    } else if (h.key === 'author' && !author) author = parseIdent(h.value, 'author');
    else if (h.key === 'committer' && !committer) committer = parseIdent(h.value, 'committer');
  }
  if (!author) throw badObject('no author header');
  if (!committer) throw badObject('no committer header');

  let signature: string | undefined;
  let payload: Buffer = buf;
  if (sigStart !== -1) {
    signature = headers.find((h) => h.key === signatureHeader)?.value;
    if (signature !== undefined && !signature.endsWith('\n')) signature += '\n';
    payload = Buffer.concat([buf.subarray(0, sigStart), buf.subarray(Math.min(sigEnd, buf.length))]);
  }
  return { tree, parents, author, committer, headers, signature, payload, message };
}
