import type { Command } from 'commander';
import { Lifecycle } from '../../base/lifecycle/index.js';
import { createLogger } from '../../base/log/index.js';
import { E } from '../../base/errors/index.js';
import type { GithostServer } from '../server/index.js';
import { resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

interface ServeOptions {
  port?: string;
  host?: string;
  stateDir?: string;
  config?: string;
}

/** Build the githost settings from a config file and flags (flags win). */
export async function githostSettingsFrom(opts: ServeOptions): Promise<Record<string, unknown>> {
  // loaded on use: the server pulls in openpgp and SQLite, which other commands do not need
  const { loadGithostSettingsFile } = await import('../server/index.js');
  const fromFile = opts.config ? loadGithostSettingsFile(opts.config) : {};
  if (fromFile === null || typeof fromFile !== 'object' || Array.isArray(fromFile)) {
    throw E.configInvalid(opts.config ?? 'config', fromFile, 'must be a mapping of githost settings');
  }
  const settings: Record<string, unknown> = { ...(fromFile as Record<string, unknown>) };
  if (opts.port !== undefined) {
    const port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw E.usage(`--port ${JSON.stringify(opts.port)} is not a TCP port (0-65535)`, { port: opts.port });
    settings['port'] = port;
  }
  if (opts.host !== undefined) settings['host'] = opts.host;
  return settings;
}

/** Start githost and keep it running until SIGTERM/SIGINT. */
export async function serveGithost(opts: ServeOptions): Promise<GithostServer> {
  const log = createLogger('githost');
  const settings = await githostSettingsFrom(opts);
  const { GithostServer } = await import('../server/index.js');
  const server = new GithostServer({ stateDir: resolveStateDir(opts.stateDir), settings, log });
  const url = await server.listen();
  const life = new Lifecycle();
  life.onShutdown('githost', () => server.close());
  life.handleSignals(log);
  console.log(`githost listening on ${url}`);
  return server;
}

export function registerGithostCommand(program: Command): void {
  const githost = program.command('githost').description('the Gitea-compatible code-hosting server');
  takesGlobals(githost.command('serve'), 'stateDir')
    .description('run the code-hosting server (API /api/v1 and git over HTTP)')
    .option('--port <port>', 'TCP port (default 3000; 0 picks a free one)')
    .option('--host <address>', 'address to listen on (default 127.0.0.1)')
    .option('--config <file>', 'githost settings file (YAML or JSON)')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<ServeOptions>();
      await serveGithost(opts);
      await new Promise<never>(() => undefined);
    });
}
