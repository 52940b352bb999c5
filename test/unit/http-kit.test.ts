// The HTTP kit's pieces on their own: the nesting scan, the JSON object parser, the
// StraitError → status table and body reading against a real loopback server.
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { E } from '../../src/base/errors/index.js';
import { listenServer } from '../../src/base/net/index.js';
import {
  HttpError,
  MAX_JSON_DEPTH,
  decodeComponent,
  exceedsDepth,
  handleWith,
  httpStatusOf,
  parseJsonObject,
  readJsonBody,
  sendJson,
  toHttpError,
} from '../../src/platform/http/index.js';

test('exceedsDepth counts [ and { outside strings only', () => {
  const cases: { name: string; text: string; max: number; deeper: boolean }[] = [
    { name: 'flat', text: '{"a":1}', max: 1, deeper: false },
    { name: 'two levels, max 1', text: '{"a":[1]}', max: 1, deeper: true },
    { name: 'brackets inside a string', text: '{"a":"[[[[{{{{"}', max: 1, deeper: false },
    { name: 'escaped quote inside a string', text: '{"a":"\\"[[[["}', max: 1, deeper: false },
    { name: 'escaped backslash ends the string', text: '{"a":"\\\\",  "b":[[1]]}', max: 2, deeper: true },
    { name: 'siblings do not add up', text: '[[1],[2],[3]]', max: 2, deeper: false },
    { name: 'exactly the limit', text: `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`, max: MAX_JSON_DEPTH, deeper: false },
    { name: 'one past the limit', text: `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`, max: MAX_JSON_DEPTH, deeper: true },
  ];
  for (const c of cases) assert.equal(exceedsDepth(c.text, c.max), c.deeper, c.name);
});

test('parseJsonObject: each bad body is a 400 HttpError naming its problem', () => {
  const cases: { text: string; problem: string; empty?: boolean }[] = [
    { text: '', problem: 'malformed' },
    { text: '{', problem: 'malformed' },
    { text: '[1]', problem: 'not-object' },
    { text: 'null', problem: 'not-object' },
    { text: '"x"', problem: 'not-object' },
    { text: `{"a":${'['.repeat(200)}${']'.repeat(200)}}`, problem: 'too-deep' },
  ];
  for (const c of cases) {
    assert.throws(
      () => parseJsonObject(c.text),
      (e: unknown) => e instanceof HttpError && e.status === 400 && e.problem === c.problem,
      c.text.slice(0, 20),
    );
  }
  assert.deepEqual(parseJsonObject('  ', MAX_JSON_DEPTH, true), {});
  assert.deepEqual(parseJsonObject('{"a":[{"b":1}]}'), { a: [{ b: 1 }] });
});

test('one table from StraitErrors to HTTP statuses', () => {
  assert.equal(httpStatusOf(E.usage('x')), 400);
  assert.equal(httpStatusOf(E.notFound('Pod', 'p')), 404);
  assert.equal(httpStatusOf(E.conflict('Pod', 'p', '1', '2')), 409);
  assert.equal(httpStatusOf(E.storeUnavailable('s', 'r')), 503);
  assert.equal(httpStatusOf(E.unauthorized('x')), 401);
  assert.equal(httpStatusOf(E.watchExpired('1', '2')), 410);
  assert.equal(httpStatusOf(E.internal('x')), 500);
  assert.equal(toHttpError(new Error('boom')).status, 500);
  assert.throws(
    () => decodeComponent('%E0%A4%A'),
    (e: unknown) => e instanceof HttpError && e.status === 400,
  );
  assert.equal(decodeComponent('a%2Fb'), 'a/b');
});

test('readJsonBody on a real server: limit by Content-Length and by bytes, time limit, then the connection closes', async () => {
  const server = createServer(
    handleWith(
      async (req, res) => {
        sendJson(res, 200, await readJsonBody(req, { limit: 1000, timeoutMs: 300 }));
      },
      (err) => ({ status: toHttpError(err).status, body: { message: toHttpError(err).message } }),
    ),
  );
  const bound = await listenServer(server, { port: 0, host: '127.0.0.1' });
  const post = (body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: bound.port, method: 'POST', path: '/', headers, agent: false }, (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    assert.deepEqual(await post('{"a":1}'), { status: 200, text: '{"a":1}' });
    assert.equal((await post('x'.repeat(2000))).status, 413);
    assert.equal((await post(`{"a":"${'x'.repeat(2000)}"}`, { 'transfer-encoding': 'chunked' })).status, 413);
    const stalled = await new Promise<{ text: string; ms: number }>((resolve) => {
      const t0 = Date.now();
      let text = '';
      const s = connect(bound.port, '127.0.0.1', () => s.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a":'));
      s.on('data', (d) => {
        text += String(d);
      });
      s.on('close', () => resolve({ text, ms: Date.now() - t0 }));
      setTimeout(() => s.destroy(), 5000);
    });
    assert.match(stalled.text, /^HTTP\/1\.1 408 /);
    assert.match(stalled.text, /connection: close/i);
    assert.ok(stalled.ms >= 250 && stalled.ms < 4000, `${stalled.ms} ms`);
  } finally {
    await bound.close();
  }
});
