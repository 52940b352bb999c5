// Prometheus /metrics for every long-running strait process (prom-client), on a
// configurable address and port. Hot-path counters stay plain integers that a
// collect() callback reads at scrape time.
import { createServer, type Server } from 'node:http';
import { listenServer, type ListeningServer } from '../../base/net/index.js';
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

/** Serve GET /metrics (anything else: 404), on host:port or on a listening socket `fd` made elsewhere. */
export async function serveMetrics(registry: Registry, port: number, host = '0.0.0.0', fd?: number): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(text);
      }, (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found; try /metrics\n');
  });
  return listenServer(server, port, host, fd);
}
