// A certificate signed by the mesh CA is not enough to be a mesh peer: it must carry
// exactly one SPIFFE ID spiffe://<trust-domain>/ns/<ns>/sa/<sa> of the mesh's trust
// domain. The bad certificates here are signed by the real mesh CA with the real openssl,
// and presented by a real TLS client to the sidecar's inbound port (STRICT, and
// PERMISSIVE with the istio ALPN), by a server to the sidecar's outbound mTLS origination,
// and by a server to the ingress gateway.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect, createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { Registry, registerProxyMetrics } from '../../src/mesh/control/metrics/index.js';
import { IngressGateway, SidecarProxy, workloadSpiffeId } from '../../src/mesh/dataplane/proxy/index.js';
import { curl, identityOf, serverConfig, startEchoApp, testCa, type EchoApp } from '../mesh/helpers.js';

interface Pair {
  certPem: string;
  keyPem: string;
}

/** [name, subjectAltName line for openssl (undefined: no SAN at all)] */
const BAD: [string, string | undefined][] = [
  ['a foreign trust domain', 'URI:spiffe://evil.example/ns/mesh/sa/client'],
  ['no subjectAltName', undefined],
  ['a DNS SAN only', 'DNS:client.mesh.svc.cluster.local'],
  ['a non-SPIFFE URI', 'URI:https://client.mesh.example/'],
  ['a SPIFFE ID that is not a workload', 'URI:spiffe://cluster.local/ns/mesh'],
  ['two SPIFFE IDs, one of them good', 'URI:spiffe://evil.example/ns/mesh/sa/x, URI:spiffe://cluster.local/ns/mesh/sa/client'],
];

const dir = mkdtempSync(join(tmpdir(), 'strait-peer-id-'));

/** A key and certificate signed by the test mesh CA with openssl, with `san` as subjectAltName. */
function signed(name: string, san: string | undefined): Pair {
  const ca = testCa().material();
  const base = join(dir, name.replace(/\W+/g, '-'));
  writeFileSync(join(dir, 'ca.crt'), ca.certPem);
  writeFileSync(join(dir, 'ca.key'), ca.keyPem, { mode: 0o600 });
  writeFileSync(
    `${base}.ext`,
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth,clientAuth',
      ...(san ? [`subjectAltName=critical,${san}`] : []),
    ].join('\n') + '\n',
  );
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${base}.key`,
      '-subj',
      '/O=strait mesh',
      '-out',
      `${base}.csr`,
    ],
    { stdio: 'ignore' },
  );
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      join(dir, 'ca.crt'),
      '-CAkey',
      join(dir, 'ca.key'),
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      '-days',
      '1',
      '-extfile',
      `${base}.ext`,
      '-out',
      `${base}.crt`,
    ],
    { stdio: 'ignore' },
  );
  return { certPem: readFileSync(`${base}.crt`, 'utf8'), keyPem: readFileSync(`${base}.key`, 'utf8') };
}

/** A TLS client (cert, key) sends one HTTP request; resolves with the response text ('' when refused). */
function tlsRequest(port: number, pair: Pair, alpn?: string[]): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const s = tlsConnect(
      {
        host: '127.0.0.1',
        port,
        cert: pair.certPem,
        key: pair.keyPem,
        ca: testCa().rootPem,
        checkServerIdentity: () => undefined,
        ...(alpn ? { ALPNProtocols: alpn } : {}),
      },
      () => s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
    );
    s.on('data', (d: Buffer) => {
      text += d.toString();
    });
    s.on('error', () => undefined);
    const t = setTimeout(() => s.destroy(), 3000);
    s.on('close', () => {
      clearTimeout(t);
      resolve(text);
    });
  });
}

let app: EchoApp;
const good = (): Pair => testCa().issueSync('mesh', 'client');
before(async () => {
  app = await startEchoApp();
});
after(() => app.close());

for (const mode of ['STRICT', 'PERMISSIVE'] as const) {
  describe(`inbound ${mode}: the sidecar refuses mesh-CA certificates that are no mesh workload`, () => {
    let server: SidecarProxy;
    let port: number;
    before(async () => {
      server = new SidecarProxy(serverConfig(testCa().issueSync('mesh', 'echo'), mode));
      port = (await server.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: app.port } })).port;
    });
    after(() => server.close());

    test('a workload certificate of the trust domain gets through, counted by source_principal', async () => {
      const before = app.requests;
      assert.match(await tlsRequest(port, good(), ['istio']), /^HTTP\/1.1 200/);
      assert.equal(app.requests, before + 1);
      const reg = new Registry();
      registerProxyMetrics(reg, server.metrics);
      assert.match(await reg.metrics(), /strait_mesh_inbound_mtls_connections_total\{source_principal="spiffe:\/\/cluster.local\/ns\/mesh\/sa\/client"\} 1/);
    });

    for (const [name, san] of BAD) {
      test(`${name}: refused before the application`, async () => {
        const before = app.requests;
        const failures = server.metrics.handshakeFailures.server['bad-peer-identity'];
        assert.equal(await tlsRequest(port, signed(`in-${mode}-${name}`, san), ['istio']), '');
        assert.equal(app.requests, before);
        assert.equal(server.metrics.handshakeFailures.server['bad-peer-identity'], failures + 1);
      });
    }
  });
}

/** A TLS server with `pair` that answers every request 200 (the "service" the mesh dials). */
async function fakeService(pair: Pair): Promise<{ server: TlsServer; port: number }> {
  const server = createTlsServer({ cert: pair.certPem, key: pair.keyPem, ca: testCa().rootPem, requestCert: true, rejectUnauthorized: true }, (s) => {
    s.on('error', () => undefined);
    s.once('data', () => s.end('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

async function viaSidecar(pair: Pair): Promise<{ exit: number; code: string; client: SidecarProxy }> {
  const svc = await fakeService(pair);
  // ISTIO_MUTUAL without subjectAltNames: any workload of the mesh's trust domain
  const client = new SidecarProxy({
    identity: identityOf(testCa().issueSync('mesh', 'client')),
    inbound: { defaultMode: 'PERMISSIVE' },
    outbound: { default: { mode: 'ISTIO_MUTUAL' } },
  });
  const cp = (await client.listenOutbound({ host: '127.0.0.1', port: 0, destination: { host: '127.0.0.1', port: svc.port } })).port;
  try {
    const r = await curl([`http://127.0.0.1:${cp}/`]);
    return { exit: r.exit, code: r.code, client };
  } finally {
    await client.close();
    svc.server.close();
  }
}

describe('outbound ISTIO_MUTUAL: the sidecar refuses a server that is no mesh workload', () => {
  test('a workload certificate of the trust domain is accepted', async () => {
    const r = await viaSidecar(testCa().issueSync('mesh', 'echo'));
    assert.equal(r.code, '200');
  });
  for (const [name, san] of BAD) {
    test(`${name}: the connection is refused`, async () => {
      const r = await viaSidecar(signed(`out-${name}`, san));
      assert.notEqual(r.code, '200');
      assert.ok(r.exit === 56 || r.exit === 7 || r.exit === 52, `curl exit ${r.exit}`);
      assert.equal(r.client.metrics.handshakeFailures.client['bad-peer-identity'], 1);
    });
  }
});

async function viaIngress(pair: Pair): Promise<string> {
  const svc = await fakeService(pair);
  const gw = new IngressGateway({
    identity: identityOf(testCa().issueSync('istio-system', 'ingressgateway')),
    routes: [{ pathPrefix: '/', backend: { host: '127.0.0.1', port: svc.port }, tls: { mode: 'ISTIO_MUTUAL' } }],
  });
  const port = (await gw.listen('127.0.0.1', 0)).port;
  try {
    return (await curl([`http://127.0.0.1:${port}/`])).code;
  } finally {
    await gw.close();
    svc.server.close();
  }
}

describe('ingress ISTIO_MUTUAL: the gateway refuses a service that is no mesh workload', () => {
  test('a workload certificate of the trust domain is accepted', async () => {
    assert.equal(await viaIngress(testCa().issueSync('mesh', 'echo')), '200');
  });
  for (const [name, san] of BAD) {
    test(`${name}: 503, nothing forwarded`, async () => {
      assert.equal(await viaIngress(signed(`ingress-${name}`, san)), '503');
    });
  }
});

test('workloadSpiffeId: exactly one URI SAN of the workload shape', () => {
  assert.deepEqual(workloadSpiffeId(['spiffe://cluster.local/ns/a/sa/b']), { id: 'spiffe://cluster.local/ns/a/sa/b', trustDomain: 'cluster.local' });
  for (const uris of [
    [],
    ['spiffe://cluster.local/ns/a/sa/b', 'spiffe://cluster.local/ns/a/sa/c'],
    ['spiffe://cluster.local/ns/A/sa/b'],
    ['spiffe://cluster.local/ns/a/sa/b/c'],
    ['spiffe://cluster.local/ns/a/sa/'],
    ['spiffe:///ns/a/sa/b'],
    ['https://cluster.local/ns/a/sa/b'],
    ['spiffe://Cluster.local/ns/a/sa/b'],
    ['spiffe://cluster.local/ns/a/sa/b, URI:spiffe://x'],
  ]) {
    assert.equal(typeof workloadSpiffeId(uris), 'string', JSON.stringify(uris));
  }
});

test('a sidecar identity without a SPIFFE ID is refused at configuration', () => {
  const p = signed('own-no-spiffe', 'DNS:echo.mesh');
  assert.throws(
    () => new SidecarProxy({ identity: { ...p, rootPem: testCa().rootPem }, inbound: { defaultMode: 'STRICT' }, outbound: { default: { mode: 'DISABLE' } } }),
    (err: Error & { code?: string }) => err.code === 'STRAIT_ERR_MESH_CONFIG_INVALID' && /SPIFFE/.test(err.message),
  );
});
