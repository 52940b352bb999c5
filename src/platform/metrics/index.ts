// Prometheus /metrics for every long-running strait process (prom-client): the one
// metrics server, on host:port or on a listening socket made elsewhere. Hot-path
// counters stay plain integers that a collect() callback reads at scrape time.
import { createServer, type ServerResponse } from 'node:http';
import { listenServer, type ListenAt, type ListeningServer } from '../../base/net/index.js';
import { Registry, collectDefaultMetrics, Gauge, Counter } from 'prom-client';

export { Registry, Gauge, Counter };

/** A registry with the process's default metrics and a `component` label on everything. */
export function createRegistry(component: string, labels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ component, ...labels });
  collectDefaultMetrics({ register: registry, prefix: 'strait_' });
  // prom-client names these gauges *_total, which `promtool check metrics` rejects
  for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
    registry.removeSingleMetric(`strait_nodejs_${name}`);
  }
  return registry;
}

export type MetricsServer = ListeningServer;

/** Answer a scrape: the registry's text exposition, or 500 with the collect error. */
export function answerMetrics(registry: Registry, res: ServerResponse): void {
  registry.metrics().then(
    (text) => {
      res.writeHead(200, { 'content-type': registry.contentType });
      res.end(text);
    },
    (err: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    },
  );
}

/**
 * Serve GET /metrics, and GET /<name> for each of `json` (the daemons' /records), as
 * JSON; with `pending`, GET /readyz (a readiness probe): 200 `ok` when it lists nothing,
 * else 503 with what the process still waits for. Anything else is a 404 that names what
 * there is.
 */
export async function serveMetrics(
  registry: Registry,
  at: ListenAt,
  json: Record<string, () => unknown> = {},
  pending?: () => readonly string[],
): Promise<MetricsServer> {
  const paths = ['/metrics', ...(pending ? ['/readyz'] : []), ...Object.keys(json).map((k) => `/${k}`)];
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    if (req.method === 'GET' && path === '/metrics') return answerMetrics(registry, res);
    if (req.method === 'GET' && path === '/readyz' && pending) {
      const waiting = pending();
      res.writeHead(waiting.length === 0 ? 200 : 503, { 'content-type': 'text/plain' });
      res.end(waiting.length === 0 ? 'ok\n' : `not ready: waiting for ${waiting.join('; ')}\n`);
      return;
    }
    const extra = req.method === 'GET' && path !== '/' && Object.hasOwn(json, path.slice(1)) ? json[path.slice(1)] : undefined;
    if (extra) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(extra()));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end(`not found; try ${paths.join(' or ')}\n`);
  });
  return listenServer(server, at);
}
