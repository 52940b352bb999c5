// The mesh configuration service (port 15012 in Kubernetes mode) is reachable by anyone on
// the pod network, and every token it has not seen costs a TokenReview against the
// Kubernetes API server. An attacker sending a fresh random token with each request must not
// turn that into one review per request: real HTTPS requests to the real server, counting
// the reviews its authenticate callback (the daemon's TokenReview) is asked for.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request, Agent } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { selfSignedCertificate } from '../../src/gitops/control/index.js';
import { DEFAULT_TOKEN_REVIEW_LIMITS, serveMeshConfig, type MeshCaller, type MeshConfigServer } from '../../src/mesh/control/index.js';

const GOOD = 'pod-token-of-echo';
const REFILL_MS = 30_000;

describe('TokenReviews made by the mesh configuration service for unknown tokens', () => {
  let server: MeshConfigServer;
  let cert: { cert: string; key: string };
  const reviewed: string[] = [];

  const get = (token: string, localAddress = '127.0.0.1'): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/v1/sidecar',
          method: 'GET',
          ca: cert.cert,
          localAddress,
          agent: new Agent({ keepAlive: false, ca: cert.cert }),
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });

  before(async () => {
    cert = selfSignedCertificate(['127.0.0.1']);
    server = await serveMeshConfig({
      cert: cert.cert,
      key: cert.key,
      port: 0,
      // the default burst; a slow refill, so that the bound does not depend on how fast this machine is
      reviewLimits: { refillMs: REFILL_MS },
      // the daemon's authenticate is one TokenReview per call (src/mesh/control/run/token-review.ts tokenReviewer)
      async authenticate(token): Promise<MeshCaller | undefined> {
        reviewed.push(token);
        return token === GOOD ? { namespace: 'mesh', serviceAccount: 'echo', pod: 'echo-1' } : undefined;
      },
      podConfig: (ns, pod) => (ns === 'mesh' && pod === 'echo-1' ? { state: 'mesh' as const, serviceAccount: 'echo', text: '{"inbound":{}}' } : undefined),
    });
  });
  after(async () => {
    await server?.close();
  });

  test('200 requests from one address, each with a new random token: a burst of reviews and the refill, the rest 429', async () => {
    reviewed.length = 0;
    const statuses: number[] = [];
    const t0 = Date.now();
    for (let i = 0; i < 200; i++) statuses.push(await get(randomBytes(24).toString('base64url')));
    const ms = Date.now() - t0;
    // the burst, plus the bucket's refill over the time the 200 requests took
    const bound = DEFAULT_TOKEN_REVIEW_LIMITS.burst + Math.ceil(ms / REFILL_MS) + 1;
    console.log(
      `# 200 random tokens from one address in ${ms} ms: ${reviewed.length} TokenReviews (bound ${bound}); ${statuses.filter((s) => s === 429).length} answered 429`,
    );
    assert.ok(reviewed.length <= bound, `${reviewed.length} TokenReviews for 200 requests in ${ms} ms`);
    assert.ok(
      statuses.every((s) => s === 401 || s === 429),
      String([...new Set(statuses)]),
    );
    assert.equal(statuses.at(-1), 429);
  });

  test('the same wrong token again costs no review (negative answers are cached)', async () => {
    const bad = randomBytes(24).toString('base64url');
    const before = reviewed.length;
    const first = await get(bad, '127.0.0.3');
    assert.equal(first, 401);
    for (let i = 0; i < 50; i++) assert.equal(await get(bad, '127.0.0.3'), 401);
    assert.equal(reviewed.length - before, 1, 'one review for 51 requests with one token');
  });

  test('meanwhile a pod from another address is served: its token is reviewed once and its configuration answered', async () => {
    const before = reviewed.filter((t) => t === GOOD).length;
    for (let i = 0; i < 5; i++) assert.equal(await get(GOOD, '127.0.0.2'), 200);
    assert.equal(reviewed.filter((t) => t === GOOD).length - before, 1);
  });
});
