// The code-hosting server as the local world runs it: the same server as `strait githost
// serve`, plus Prometheus /metrics (prom-client) on STRAIT_METRICS_PORT, and readiness
// reported to the world's process table over IPC.
//   node dist/daemon/world-githost.js --state-dir DIR --config FILE
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { Lifecycle } from '../src/base/lifecycle/index.js';
import { createLogger } from '../src/base/log/index.js';
import { GithostServer } from '../src/githost/server/index.js';
import { Counter, createRegistry, serveMetrics } from '../src/platform/metrics/index.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const stateDir = arg('--state-dir') ?? process.env['STRAIT_STATE_DIR'] ?? '.';
const configFile = arg('--config');
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
