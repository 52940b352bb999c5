// What every process entry (daemon/*/main.ts, agents/*/main.ts) shares: `--help`/`-h` and
// `--version`/`-V` print and exit 0 before anything starts, and a failure ends the process
// with one line `error STRAIT_ERR_…: message` and the code's exit status. Only a bug (an
// error that is no StraitError) prints a stack, as STRAIT_ERR_INTERNAL.
import { isStraitError } from '../src/base/errors/index.js';

/**
 * `name --help` / `name --version`: print and resolve true (the caller returns at once). The
 * version is loaded only when asked: the data-plane processes stay light (process-weight test).
 */
export async function printedInfo(argv: readonly string[], name: string, help: string): Promise<boolean> {
  const args = argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(help.endsWith('\n') ? help : `${help}\n`);
    return true;
  }
  if (args.includes('--version') || args.includes('-V')) {
    const { VERSION } = await import('../src/platform/cli-kit/index.js');
    process.stdout.write(`${name} ${VERSION}\n`);
    return true;
  }
  return false;
}

/** The exit status and the line on stderr for an error that ended an entry's main. */
export function entryFailure(err: unknown): { exitCode: number; message?: string } {
  // a CommanderError (its code starts with "commander."; not imported: the data-plane
  // entries load no commander): commander has printed its message (help, version, usage)
  const c = err as { code?: unknown; exitCode?: unknown } | undefined;
  if (typeof c?.code === 'string' && c.code.startsWith('commander.') && typeof c.exitCode === 'number') {
    return { exitCode: c.exitCode === 0 ? 0 : 2 };
  }
  if (isStraitError(err)) return { exitCode: err.exitCode, message: `error ${err.code}: ${err.message}` };
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
    return { exitCode: 2, message: `error STRAIT_ERR_USAGE: ${(err as Error).message} (add --help for usage)` };
  }
  return { exitCode: 1, message: `error STRAIT_ERR_INTERNAL: ${(err as Error | undefined)?.stack ?? String(err)}` };
}

/** Run an entry's main; a failure exits as entryFailure says. */
export function runEntry(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    const f = entryFailure(err);
    if (f.message) console.error(f.message);
    process.exit(f.exitCode);
  });
}

/** SIGTERM and SIGINT stop the process's daemon and exit (0 once stopped, 1 when stopping failed); `reload`, when given, runs on SIGHUP. */
export function stopOnSignals(stop: () => Promise<void>, reload?: () => void): void {
  const onStop = (): void =>
    void stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  if (reload) process.on('SIGHUP', reload);
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);
}
