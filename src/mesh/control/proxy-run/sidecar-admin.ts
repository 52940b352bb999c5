// The sidecar's admin API: GET/PUT /config, GET /flows, /metrics, /ready. Under the mesh agent
// or the control module (`managed`) only they configure the proxy: the workload shares the
// pod's network namespace and must not be able to switch its own STRICT off.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { E, isStraitError } from '../../../base/errors/index.js';
import { HttpError, readJsonBody, sendError } from '../../../platform/http/index.js';
import { answerMetrics } from '../../../platform/metrics/index.js';
import type { Registry } from '../metrics/index.js';
import type { SidecarProxy } from '../../dataplane/proxy/index.js';

const json = (res: ServerResponse, body: unknown): void => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

async function answer(proxy: SidecarProxy, reg: Registry, managed: boolean, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'PUT' && req.url === '/config') {
    if (managed) throw E.meshConfigManaged();
    proxy.update(await readJsonBody(req, { limit: 4 << 20 }));
    json(res, { applied: true, updates: proxy.metrics.configUpdates });
  } else if (req.method === 'GET' && req.url === '/config') {
    const { identity, ...rest } = proxy.config;
    json(res, { ...rest, identity: identity ? { certPem: identity.certPem } : undefined });
  } else if (req.method === 'GET' && req.url === '/flows') {
    json(res, { limit: proxy.flows.limit, evicted: proxy.flows.evictedTotal, flows: proxy.flows.snapshot() });
  } else if (req.method === 'GET' && req.url === '/metrics') {
    answerMetrics(reg, res);
  } else if (req.method === 'GET' && req.url === '/ready') {
    res.writeHead(200).end('ok\n');
  } else {
    res.writeHead(404).end();
  }
}

export function sidecarAdmin(proxy: SidecarProxy, reg: Registry, managed: boolean): RequestListener {
  return (req, res) => {
    answer(proxy, reg, managed, req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : isStraitError(err) ? err.httpStatus : err instanceof SyntaxError ? 400 : 500;
      const body = isStraitError(err) ? err.toJSON() : { code: 'STRAIT_ERR_MESH_CONFIG_INVALID', message: String((err as Error).message) };
      sendError(req, res, { status, body });
    });
  };
}
