// strait console [--open] [--server ADDR [--plaintext]] [-o text|json]: the web console's
// URL (served by the control module on its API port, under /console/): the running
// world's, a given server's, or the server of the current `strait login` session.
// --open hands it to a browser when one is installed (xdg-open, sensible-browser, $BROWSER).
import { spawn, spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { formatJson, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';
import { baseURL, currentSession } from '../../gitops/cli/index.js';
import { isAlive, readWorldRecord } from '../world-file.js';

const CONSOLE_PATH = '/console/';

/** The console URL and where it came from. */
export function consoleURL(opts: { server?: string; plaintext?: boolean; stateDir?: string }): { url: string; source: string } {
  if (opts.server) return { url: `${baseURL(opts.server, opts.plaintext === true)}${CONSOLE_PATH}`, source: '--server' };
  const stateDir = resolveStateDir(opts.stateDir);
  const rec = readWorldRecord(stateDir);
  if (rec && isAlive(rec.pid) && rec.console) return { url: rec.console, source: `the world in ${stateDir}` };
  try {
    const s = currentSession();
    return { url: `${baseURL(s.server, s.plaintext)}${CONSOLE_PATH}`, source: `the strait login session of ${s.server}` };
  } catch {
    throw E.usage(
      `no console to name: no world runs in ${JSON.stringify(stateDir)} and no 'strait login' session exists; start one with 'strait up', or give --server HOST:PORT`,
      { stateDir },
    );
  }
}

/** the first browser opener on PATH (or $BROWSER) */
function opener(): string[] | undefined {
  const browser = process.env['BROWSER'];
  if (browser) return browser.split(' ').filter(Boolean);
  for (const cmd of ['xdg-open', 'sensible-browser', 'x-www-browser']) {
    if (spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0) return [cmd];
  }
  return undefined;
}

export function registerConsoleCommand(program: Command): void {
  takesGlobals(program.command('console'), 'stateDir')
    .description("print the web console's URL (the running world's, --server's or the login session's); --open opens it in a browser")
    .option('--open', 'open it in a browser when one is installed')
    .option('--server <address>', 'a control module address (host:port or URL)')
    .option('--plaintext', 'the server speaks plain HTTP', false)
    .option('-o, --output <format>', 'text or json', 'text')
    .action((_o: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ open?: boolean; server?: string; plaintext?: boolean; stateDir?: string; output: string }>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const { url, source } = consoleURL(opts);
      let opened = false;
      let how = '';
      if (opts.open) {
        const argv = opener();
        if (argv) {
          const child = spawn(argv[0] as string, [...argv.slice(1), url], { stdio: 'ignore', detached: true });
          child.on('error', () => undefined);
          child.unref();
          opened = true;
          how = argv[0] as string;
        }
      }
      if (format === 'json') {
        process.stdout.write(formatJson({ url, source, ...(opts.open ? { opened, ...(how ? { opener: how } : {}) } : {}) }));
        return;
      }
      process.stdout.write(`${url}\n`);
      if (opts.open)
        console.error(opened ? `strait: opened with ${how}` : 'strait: no browser found (xdg-open, sensible-browser, $BROWSER): open the URL above yourself');
    });
}
