// The code-hosting server as the local world runs it (daemon/world-githost.ts): the same
// server as `strait githost serve`, plus Prometheus /metrics (prom-client) on
// STRAIT_METRICS_PORT, and readiness reported to the world's process table over IPC.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { Lifecycle } from '../../base/lifecycle/index.js';
import { createLogger } from '../../base/log/index.js';
import { Counter, createRegistry, serveMetrics } from '../../platform/metrics/index.js';
import { GithostServer } from './server.js';

export async function runWorldGithost(stateDir: string, configFile: string | undefined): Promise<void> {
  const settings = configFile ? (parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>) : {};
  const log = createLogger('githost');
  const life = new Lifecycle();
  life.handleSignals(log);

  const server = new GithostServer({ stateDir, settings, log });
  const url = await server.listen();
  life.onShutdown('githost', () => server.close());
  const registry = createRegistry('githost');
  const up = new Counter({ name: 'strait_githost_starts_total', help: 'times this code-hosting server started listening', registers: [registry] });
  up.inc();
  const metrics = await serveMetrics(registry, { port: Number(process.env['STRAIT_METRICS_PORT'] ?? '9464'), host: String(settings['host'] ?? '127.0.0.1') });
  life.onShutdown('metrics', () => metrics.close());
  log.info({ url, metricsPort: metrics.port }, 'githost ready');
  process.send?.({ type: 'ready' });
}
