// Shared pieces of the mesh tests: a real curl runner, an echo application and a
// loopback mesh (app ← server sidecar ← client sidecar) built from one CA.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MeshCa, type WorkloadCert } from '../../src/mesh/control/index.js';
import { SidecarProxy, type InboundMode, type SidecarConfig } from '../../src/mesh/dataplane/proxy/index.js';

export interface CurlResult {
  exit: number;
  code: string;
  stderr: string;
  body: string;
}

/** Run the real curl; never throws. `-w` prints the HTTP status after the body. */
export function curl(args: string[], timeoutMs = 10_000): Promise<CurlResult> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '5', '-w', '\n%{http_code}', ...args], { timeout: timeoutMs }, (err, stdout, stderr) => {
      const exit = err ? (typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? (err as unknown as { code: number }).code : -1) : 0;
      const lines = stdout.split('\n');
      const code = lines.pop() ?? '';
      resolve({ exit, code, stderr, body: lines.join('\n') });
    });
  });
}

export interface EchoApp {
  server: Server;
  port: number;
  requests: number;
  close(): Promise<void>;
}

/** An HTTP application that answers 200 with the peer address it saw. */
export async function startEchoApp(): Promise<EchoApp> {
  const app: EchoApp = { server: undefined as unknown as Server, port: 0, requests: 0, close: async () => {} };
  app.server = createServer((req, res) => {
    app.requests++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`hello from echo; peer ${req.socket.remoteAddress}:${req.socket.remotePort}\n`);
  });
  app.server.keepAliveTimeout = 60_000; // idle connections stay while a loaded machine catches up
  await new Promise<void>((r) => app.server.listen(0, '127.0.0.1', r));
  app.port = (app.server.address() as AddressInfo).port;
  app.close = () =>
    new Promise<void>((r) => {
      app.server.closeAllConnections();
      app.server.close(() => r());
    });
  return app;
}

export function identityOf(cert: WorkloadCert): NonNullable<SidecarConfig['identity']> {
  return { certPem: cert.certPem, keyPem: cert.keyPem, rootPem: cert.rootPem };
}

export function serverConfig(cert: WorkloadCert, mode: InboundMode): SidecarConfig {
  return { identity: identityOf(cert), inbound: { defaultMode: mode }, outbound: { default: { mode: 'DISABLE' } } };
}

export interface LoopbackMesh {
  ca: MeshCa;
  app: EchoApp;
  serverCert: WorkloadCert;
  clientCert: WorkloadCert;
  server: SidecarProxy;
  client: SidecarProxy;
  serverPort: number;
  clientPort: number;
  dir: string;
  close(): Promise<void>;
}

let sharedCa: MeshCa | undefined;
/** One CA per test process: RSA keys cost time on a busy machine. */
export function testCa(): MeshCa {
  sharedCa ??= MeshCa.create({ trustDomain: 'cluster.local' });
  return sharedCa;
}

export async function startLoopbackMesh(mode: InboundMode): Promise<LoopbackMesh> {
  const ca = testCa();
  const app = await startEchoApp();
  const serverCert = ca.issueSync('mesh', 'echo');
  const clientCert = ca.issueSync('mesh', 'client');
  const server = new SidecarProxy(serverConfig(serverCert, mode));
  const serverPort = (await server.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: app.port } })).port;
  const client = new SidecarProxy({
    identity: identityOf(clientCert),
    inbound: { defaultMode: 'PERMISSIVE' },
    outbound: { default: { mode: 'DISABLE' }, destinations: { [`127.0.0.1:${serverPort}`]: { mode: 'ISTIO_MUTUAL', sans: [serverCert.spiffeId] } } },
  });
  const clientPort = (await client.listenOutbound({ host: '127.0.0.1', port: 0, destination: { host: '127.0.0.1', port: serverPort } })).port;
  const dir = mkdtempSync(join(tmpdir(), 'strait-mesh-'));
  writeFileSync(join(dir, 'root.pem'), ca.rootPem);
  return {
    ca,
    app,
    serverCert,
    clientCert,
    server,
    client,
    serverPort,
    clientPort,
    dir,
    close: async () => {
      await client.close();
      await server.close();
      await app.close();
    },
  };
}

/** Write a certificate and key for curl --cert/--key; returns the two paths. */
export function writeClientCert(dir: string, name: string, cert: WorkloadCert): { cert: string; key: string } {
  const c = join(dir, `${name}.crt`);
  const k = join(dir, `${name}.key`);
  writeFileSync(c, cert.certPem);
  writeFileSync(k, cert.keyPem, { mode: 0o600 });
  return { cert: c, key: k };
}
