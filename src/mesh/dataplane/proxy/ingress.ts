// The ingress gateway: terminates external plaintext HTTP on a listener (a loopback port of
// the host in the local world) and sends each request into the mesh, originating mTLS
// with the gateway's own workload certificate and checking the service's SPIFFE ID (the
// route's, or any of the mesh's trust domain) (ISTIO_MUTUAL), or plaintext (DISABLE). Routes: longest path prefix, optional Host.
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { E } from '../../../base/errors/index.js';
import { listenServer, type ListenAt, type ListeningServer } from '../../../base/net/index.js';
import { validateSidecarConfig, type OutboundPolicy, type ProxyIdentity } from './config.js';
import { MESH_ALPN, spiffeChecker, trustDomainOf } from './identity.js';
import type { Address } from './sidecar.js';

export interface IngressRoute {
  /** path prefix, "/" for everything */
  pathPrefix: string;
  /** match the Host header (without port) when set */
  host?: string;
  /** the mesh service: its ClusterIP:port, or an endpoint's address */
  backend: Address;
  tls: OutboundPolicy;
  /** for logs and status, e.g. "echo.mesh" */
  service?: string;
}

export interface IngressConfig {
  identity?: ProxyIdentity;
  routes: IngressRoute[];
}

export class IngressMetrics {
  requests = 0;
  noRoute = 0;
  upstreamErrors = 0;
  mtlsRequests = 0;
  plaintextRequests = 0;
}

interface LiveRoute extends IngressRoute {
  agent: HttpAgent | HttpsAgent;
}

function validateIngressConfig(raw: unknown): IngressConfig {
  if (typeof raw !== 'object' || raw === null) throw E.meshConfigInvalid('ingress', raw, 'must be an object {identity?, routes}');
  const c = raw as Record<string, unknown>;
  // reuse the sidecar's checks for identity and outbound policies
  const probe = validateSidecarConfig({
    ...(c['identity'] !== undefined ? { identity: c['identity'] } : {}),
    inbound: { defaultMode: 'PERMISSIVE' },
    outbound: { default: { mode: 'DISABLE' } },
  });
  if (!Array.isArray(c['routes'])) throw E.meshConfigInvalid('ingress.routes', c['routes'], 'must be a list of routes');
  const routes = (c['routes'] as Record<string, unknown>[]).map((r, i) => {
    const b = r?.['backend'] as Record<string, unknown> | undefined;
    if (typeof r?.['pathPrefix'] !== 'string' || !(r['pathPrefix'] as string).startsWith('/'))
      throw E.meshConfigInvalid(`ingress.routes[${i}].pathPrefix`, r?.['pathPrefix'], 'must start with "/"');
    if (typeof b?.['host'] !== 'string' || typeof b?.['port'] !== 'number')
      throw E.meshConfigInvalid(`ingress.routes[${i}].backend`, b, 'must be {host, port}');
    const tls = validateSidecarConfig({ inbound: { defaultMode: 'PERMISSIVE' }, outbound: { default: r['tls'] } }).outbound.default;
    return {
      pathPrefix: r['pathPrefix'] as string,
      backend: { host: b['host'] as string, port: b['port'] as number },
      tls,
      ...(typeof r['host'] === 'string' ? { host: r['host'] } : {}),
      ...(typeof r['service'] === 'string' ? { service: r['service'] } : {}),
    };
  });
  return { ...(probe.identity ? { identity: probe.identity } : {}), routes };
}

export class IngressGateway {
  readonly metrics = new IngressMetrics();
  private routes: LiveRoute[] = [];
  private servers: Server[] = [];
  private cfg: IngressConfig;

  constructor(config: unknown) {
    this.cfg = validateIngressConfig(config);
    this.routes = this.build(this.cfg);
  }

  get config(): IngressConfig {
    return this.cfg;
  }

  update(config: unknown): void {
    const next = validateIngressConfig(config);
    const old = this.routes;
    this.cfg = next;
    this.routes = this.build(next);
    // idle pooled connections of the old routes close; requests in flight finish
    for (const r of old) r.agent.destroy();
  }

  private build(cfg: IngressConfig): LiveRoute[] {
    return cfg.routes
      .map((r): LiveRoute => {
        if (r.tls.mode === 'ISTIO_MUTUAL') {
          if (!cfg.identity) throw E.meshConfigInvalid('ingress.identity', undefined, 'is needed for ISTIO_MUTUAL routes');
          return {
            ...r,
            agent: new HttpsAgent({
              keepAlive: true,
              maxSockets: 256,
              cert: cfg.identity.certPem,
              key: cfg.identity.keyPem,
              ca: cfg.identity.rootPem,
              // the service must be a workload of the mesh (the gateway's own trust domain), or one the route names
              ALPNProtocols: MESH_ALPN,
              checkServerIdentity: spiffeChecker(r.tls.sans, trustDomainOf(cfg.identity.certPem) as string),
              servername: '',
            }),
          };
        }
        return { ...r, agent: new HttpAgent({ keepAlive: true, maxSockets: 256 }) };
      })
      .sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
  }

  private route(req: IncomingMessage): LiveRoute | undefined {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    return this.routes.find((r) => path.startsWith(r.pathPrefix) && (r.host === undefined || r.host === host));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.metrics.requests++;
    const r = this.route(req);
    if (!r) {
      this.metrics.noRoute++;
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no route\n');
      return;
    }
    const mtls = r.tls.mode === 'ISTIO_MUTUAL';
    if (mtls) this.metrics.mtlsRequests++;
    else this.metrics.plaintextRequests++;
    const headers = { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress ?? '', 'x-forwarded-proto': 'http' };
    const opts = { host: r.backend.host, port: r.backend.port, method: req.method, path: req.url, headers, agent: r.agent };
    const up = (mtls ? httpsRequest : httpRequest)(opts, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
    });
    up.on('error', (err) => {
      this.metrics.upstreamErrors++;
      if (!res.headersSent) res.writeHead(503, { 'content-type': 'text/plain' }).end(`upstream connect error: ${err.message}\n`);
      else res.destroy();
    });
    req.pipe(up);
  }

  async listen(host: string, port: number): Promise<AddressInfo> {
    return (await this.serve({ port, host })).address as AddressInfo;
  }

  /** Also serve on a unix socket (reachable from every network namespace of a world). */
  async listenPath(path: string): Promise<void> {
    rmSync(path, { force: true }); // a socket left by an earlier run
    await this.serve({ path });
  }

  private serve(at: ListenAt): Promise<ListeningServer> {
    const server = createServer({ keepAlive: true }, (req, res) => this.handle(req, res));
    this.servers.push(server);
    return listenServer(server, at);
  }

  async close(): Promise<void> {
    for (const r of this.routes) r.agent.destroy();
    await Promise.all(
      this.servers.splice(0).map((s) => {
        s.closeAllConnections();
        return new Promise<void>((r) => s.close(() => r()));
      }),
    );
  }
}
