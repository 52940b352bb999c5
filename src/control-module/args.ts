// The control module's flags and configuration file (daemon/control/main.ts): flags override
// the YAML file, the file overrides the defaults.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { defineConfig, parseConfigText, type ConfigSchema } from '../base/config/index.js';
import { E } from '../base/errors/index.js';
import { VERSION } from '../platform/cli-kit/index.js';

export interface ControlConfig {
  stateDir: string;
  namespace: string;
  listen: string;
  insecure: boolean;
  pollIntervalSeconds: number;
  metricsListen: string;
  storeDir?: string;
  storeSocket?: string;
  storeTokenFile?: string;
  cluster?: string;
  kubeconfig?: string;
}

const schema: ConfigSchema<ControlConfig> = {
  type: 'object',
  additionalProperties: false,
  required: ['stateDir', 'namespace', 'listen', 'insecure', 'pollIntervalSeconds', 'metricsListen'],
  properties: {
    stateDir: { type: 'string', minLength: 1 },
    namespace: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
    listen: { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s]+):[0-9]{1,5}$' },
    insecure: { type: 'boolean' },
    pollIntervalSeconds: { type: 'number', minimum: 1, maximum: 86400 },
    metricsListen: { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s]+):[0-9]{1,5}$' },
    storeDir: { type: 'string', nullable: true },
    storeSocket: { type: 'string', nullable: true },
    storeTokenFile: { type: 'string', nullable: true },
    cluster: { type: 'string', nullable: true },
    kubeconfig: { type: 'string', nullable: true },
  },
};
const config = defineConfig(schema, { prefix: 'control', renamed: { port: 'listen', 'poll-interval': 'pollIntervalSeconds' } });

/** a number when it is one, else the text as given (the schema then refuses it, quoting it) */
const pollFromEnv = (v: string): number | string => (/^\d{1,9}$/.test(v.trim()) ? Number(v) : v);

export function parseControlArgs(argv: string[]): Readonly<ControlConfig> {
  const cmd = new Command('strait-control')
    .description('the control module: GitOps (Argo CD API), mesh CA and policy, export/import sync, sidecar-injection webhook')
    .version(`strait-control ${VERSION}`, '-V, --version')
    .option('--config <file>', 'YAML configuration file')
    .option('--state-dir <dir>', 'state directory (repository mirrors, embedded store)')
    .option('--namespace <ns>', "the controller's namespace")
    .option('--listen <host:port>', 'API listener')
    .option('--insecure', 'serve the API over plain HTTP (no TLS)')
    .option('--poll-interval <seconds>', 'polling interval of Git repositories (default 180, or $STRAIT_CONTROL_POLL_INTERVAL)')
    .option('--metrics-listen <host:port>', 'Prometheus /metrics listener (default 127.0.0.1:8082)')
    .option('--store-dir <dir>', 'open an embedded store in this directory')
    .option('--store-socket <path>', 'connect to the local world store API')
    .option('--store-token-file <file>', 'bearer token file of the store API')
    .option('--cluster <name>', 'this cluster in the local world')
    .option('--kubeconfig <file>', 'Kubernetes mode with this kubeconfig (else STRAIT_STORE=kubernetes: $KUBECONFIG or in-cluster)')
    .exitOverride();
  cmd.parse(argv);
  const o = cmd.opts<Record<string, string | boolean | undefined>>();
  let file: Record<string, unknown> = {};
  if (typeof o['config'] === 'string') {
    try {
      file = (parseConfigText(readFileSync(o['config'], 'utf8')) ?? {}) as Record<string, unknown>;
    } catch (err) {
      throw E.fileUnreadable(o['config'], (err as Error).message);
    }
  }
  const stateDir =
    (o['stateDir'] as string | undefined) ??
    (file['stateDir'] as string | undefined) ??
    process.env['STATE_DIRECTORY'] ??
    join(process.cwd(), '.strait-control');
  const merged: Record<string, unknown> = {
    namespace: 'argocd',
    listen: '127.0.0.1:8080',
    insecure: false,
    pollIntervalSeconds: 180,
    metricsListen: '127.0.0.1:8082',
    ...file,
    // the environment (a local world's control module: `STRAIT_CONTROL_POLL_INTERVAL=60 strait up`) over the file, flags over both
    ...(process.env['STRAIT_CONTROL_POLL_INTERVAL'] !== undefined ? { pollIntervalSeconds: pollFromEnv(process.env['STRAIT_CONTROL_POLL_INTERVAL']) } : {}),
    stateDir,
    ...(o['namespace'] ? { namespace: o['namespace'] } : {}),
    ...(o['listen'] ? { listen: o['listen'] } : {}),
    ...(o['insecure'] ? { insecure: true } : {}),
    ...(o['pollInterval'] ? { pollIntervalSeconds: Number(o['pollInterval']) } : {}),
    ...(o['metricsListen'] ? { metricsListen: o['metricsListen'] } : {}),
    ...(o['storeDir'] ? { storeDir: o['storeDir'] } : {}),
    ...(o['storeSocket'] ? { storeSocket: o['storeSocket'] } : {}),
    ...(o['storeTokenFile'] ? { storeTokenFile: o['storeTokenFile'] } : {}),
    ...(o['cluster'] ? { cluster: o['cluster'] } : {}),
    ...(o['kubeconfig'] ? { kubeconfig: o['kubeconfig'] } : {}),
  };
  return config.parse(merged, typeof o['config'] === 'string' ? o['config'] : '--flags');
}
