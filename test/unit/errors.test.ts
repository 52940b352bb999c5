import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  E,
  ERROR_GROUPS,
  KINDS,
  definitionOf,
  grpcStatusOf,
  isStraitError,
  listErrorCodes,
  listErrorDefinitions,
  listKinds,
} from '../../src/base/errors/index.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const doc = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');

/** The rows of docs/errors.md: the kind table, and each owner section's codes in order. */
function parseDoc() {
  const kinds: { kind: string; exit: number; http: number; grpc: string }[] = [];
  const codes: { owner: string; code: string; kind: string; exit: number; when: string }[] = [];
  const sections: string[] = [];
  let section = '';
  for (const line of doc.split('\n')) {
    const h = /^## (.+)$/.exec(line);
    if (h) {
      section = h[1] === 'Kinds' ? 'Kinds' : (/^(\w+): /.exec(h[1] as string)?.[1] ?? `(untitled: ${h[1]})`);
      sections.push(section);
      continue;
    }
    const k = /^\| `(\w+)` \| (\d+) \| (\d+) \| (\w+) \|/.exec(line);
    if (section === 'Kinds' && k) kinds.push({ kind: k[1] as string, exit: Number(k[2]), http: Number(k[3]), grpc: k[4] as string });
    const c = /^\| `(STRAIT_ERR_[A-Z0-9_]+)` \| (\w+) \| (\d+) \| (.*) \|$/.exec(line);
    if (c) codes.push({ owner: section, code: c[1] as string, kind: c[2] as string, exit: Number(c[3]), when: c[4] as string });
  }
  return { kinds, codes, sections };
}

test('docs/errors.md shows the kind table of src/base/errors/kinds.ts', () => {
  const { kinds } = parseDoc();
  assert.deepEqual(
    kinds,
    listKinds().map((kind) => ({ kind, exit: KINDS[kind].exit, http: KINDS[kind].http, grpc: KINDS[kind].grpc })),
  );
});

test('docs/errors.md has one section per owner, in the order of the source, with its codes in order and their kinds', () => {
  const { codes, sections } = parseDoc();
  assert.deepEqual(sections, ['Kinds', ...Object.keys(ERROR_GROUPS)]);
  const defs = listErrorDefinitions();
  assert.deepEqual(
    codes.map(({ owner, code, kind, exit }) => ({ owner, code, kind, exit })),
    defs.map((d) => ({ owner: d.owner, code: d.code, kind: d.kind, exit: KINDS[d.kind].exit })),
  );
});

test('codes and factory names are unique across owners', () => {
  const codes = listErrorCodes();
  assert.equal(new Set(codes).size, codes.length, 'codes are unique');
  const names = Object.values(ERROR_GROUPS).flatMap((g) => Object.keys(g));
  assert.equal(Object.keys(E).length, names.length, 'no factory name is defined by two owners');
  for (const c of codes) assert.match(c, /^STRAIT_ERR_[A-Z0-9_]+$/);
});

test("the githost API status in docs/errors.md is Gitea's where it differs, the kind's otherwise", () => {
  const { codes } = parseDoc();
  for (const row of codes) {
    const d = definitionOf(row.code);
    assert.ok(d, row.code);
    const documented = /\((?:githost API: |HTTP )?(\d{3})\)$/.exec(row.when)?.[1];
    if (row.owner === 'githost' && row.code !== 'STRAIT_ERR_GITHOST_DATABASE') assert.ok(documented, `${row.code} names its API status`);
    if (d.giteaStatus !== undefined) assert.ok(documented, `${row.code} documents its Gitea status ${d.giteaStatus}`);
    if (d.httpStatus !== undefined) assert.ok(documented, `${row.code} documents its HTTP status ${d.httpStatus}`);
    if (documented) assert.equal(Number(documented), d.giteaStatus ?? d.httpStatus ?? KINDS[d.kind].http, row.code);
  }
});

test('exit, HTTP and gRPC status come from the kind', () => {
  const cases = [
    { err: E.usage('x'), kind: 'usage', exit: 2, http: 400, grpc: 3 },
    { err: E.notFound('Pod', 'web'), kind: 'notFound', exit: 3, http: 404, grpc: 5 },
    { err: E.alreadyExists('Pod', 'web'), kind: 'exists', exit: 4, http: 409, grpc: 6 },
    { err: E.conflict('Pod', 'web', '1', '2'), kind: 'conflict', exit: 4, http: 409, grpc: 9 },
    { err: E.storeUnavailable('/run/x', 'down'), kind: 'unavailable', exit: 5, http: 503, grpc: 14 },
    { err: E.kubeForbidden('list pods', 'no'), kind: 'denied', exit: 6, http: 403, grpc: 7 },
    { err: E.unauthorized('no token'), kind: 'unauthenticated', exit: 6, http: 401, grpc: 16 },
    { err: E.watchExpired('1', '5'), kind: 'expired', exit: 1, http: 410, grpc: 11 },
    { err: E.systemTool('ip', 1, 'no'), kind: 'failed', exit: 1, http: 500, grpc: 2 },
    { err: E.internal('bug'), kind: 'internal', exit: 1, http: 500, grpc: 13 },
  ] as const;
  for (const c of cases) {
    assert.deepEqual(
      { kind: c.err.kind, exit: c.err.exitCode, http: c.err.httpStatus, grpc: grpcStatusOf(c.err.kind).code },
      { kind: c.kind, exit: c.exit, http: c.http, grpc: c.grpc },
      c.err.code,
    );
  }
});

test('errors quote the offending value and keep their code', () => {
  const err = E.configInvalid('world.clusters[0].clusterCIDR', '10.1/16', 'must be an IPv4 CIDR such as 10.1.0.0/16');
  assert.ok(isStraitError(err, 'STRAIT_ERR_CONFIG_INVALID'));
  assert.match(err.message, /"10\.1\/16"/);
  assert.match(err.message, /world\.clusters\[0\]\.clusterCIDR/);
  assert.deepEqual(JSON.parse(JSON.stringify(err)).code, 'STRAIT_ERR_CONFIG_INVALID');
  // a code no definition has does not compile (tsc fails on an unused @ts-expect-error)
  // @ts-expect-error 'STRAIT_ERR_TYPO' is not an ErrorCode
  assert.equal(isStraitError(err, 'STRAIT_ERR_TYPO'), false);
});

test("HTTP errors: a definition gives the code, its protocol status where it has one, the kind's otherwise", async () => {
  const { HttpError, toHttpError, httpStatusOf } = await import('../../src/platform/http/index.js');
  const cases = [
    { err: new HttpError(E.httpBodyTooLarge, 'big', 'too-large'), code: 'STRAIT_ERR_HTTP_BODY_TOO_LARGE', http: 413, grpc: 3 },
    { err: new HttpError(E.httpBodyTimeout, 'slow', 'timeout'), code: 'STRAIT_ERR_HTTP_BODY_TIMEOUT', http: 408, grpc: 3 },
    { err: new HttpError(E.httpMethodNotAllowed, 'PUT'), code: 'STRAIT_ERR_HTTP_METHOD_NOT_ALLOWED', http: 405, grpc: 3 },
    { err: new HttpError(E.httpRateLimited, 'often'), code: 'STRAIT_ERR_HTTP_RATE_LIMITED', http: 429, grpc: 14 },
    { err: new HttpError(E.githostUnauthenticated, 'token is required'), code: 'STRAIT_ERR_GITHOST_UNAUTHENTICATED', http: 401, grpc: 16 },
    { err: toHttpError(E.notFound('Pod', 'web')), code: 'STRAIT_ERR_NOT_FOUND', http: 404, grpc: 5 },
    { err: toHttpError(new RangeError('boom')), code: 'STRAIT_ERR_INTERNAL', http: 500, grpc: 13 },
    // an HttpError made from an error keeps its code and its protocol status
    { err: toHttpError(E.httpBodyTooLarge('big')), code: 'STRAIT_ERR_HTTP_BODY_TOO_LARGE', http: 413, grpc: 3 },
  ];
  for (const c of cases) {
    assert.ok(isStraitError(c.err), c.code);
    assert.deepEqual(
      { code: c.err.code, http: c.err.status, of: httpStatusOf(c.err), grpc: grpcStatusOf(c.err.kind).code },
      { code: c.code, http: c.http, of: c.http, grpc: c.grpc },
      c.code,
    );
  }
  assert.equal(new HttpError(E.httpBodyTooLarge, 'big', 'too-large').problem, 'too-large');
});

test('no side channel around the kind table: no HTTP status literal, one httpStatusOf, no second gRPC map', () => {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) files.push(p);
    }
  };
  walk(join(root, 'src'));
  const offenders: string[] = [];
  let statusFunctions = 0;
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    // an error made from a status (or a kind) has no code
    if (/new (?:Http|Api)Error\(\s*(?:\d|')/.test(text)) offenders.push(f);
    statusFunctions += (text.match(/function httpStatusOf\b/g) ?? []).length;
    // a table from HTTP statuses to gRPC codes beside the kind table
    if (/\b400\s*:\s*3\b/.test(text)) offenders.push(`${f} (HTTP to gRPC map)`);
  }
  assert.deepEqual(offenders, []);
  assert.equal(statusFunctions, 1, 'one function named httpStatusOf');
});
