// The `strait` command.
import { Command, CommanderError } from 'commander';
import { isStraitError } from '../base/errors/index.js';
import { registerCommands } from './commands/index.js';
import { VERSION, guardTerminalOutput } from '../platform/cli-kit/index.js';

/** The program; with argv, the world's commands load alone (src/cli/commands/index.ts). */
export async function buildProgram(argv: string[] = []): Promise<Command> {
  const program = new Command('strait')
    .description('strait: multicluster service export over PSK tunnels, mesh mTLS and signed GitOps')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  await registerCommands(program, argv[2]);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version end here with exit 0; usage errors with 2
      return err.exitCode === 0 ? 0 : 2;
    }
    if (isStraitError(err)) {
      console.error(`error ${err.code}: ${err.message}`);
      return err.exitCode;
    }
    console.error(`error STRAIT_ERR_INTERNAL: ${(err as Error)?.stack ?? String(err)}`);
    return 1;
  }
}

/** The `strait` process: bin/strait.js (under any name or link: /usr/local/bin/strait) calls it. */
export function runCli(argv: string[] = process.argv): void {
  // text from Git, stores and APIs reaches the terminal: its control characters are shown, never obeyed
  guardTerminalOutput(process.stdout);
  guardTerminalOutput(process.stderr);
  // `strait ... | head`: a reader that stops early is not an error (as for coreutils, exit 0 quietly)
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  main(argv).then((code) => {
    process.exitCode = code;
  });
}

// `node dist/src/cli/main.js ...` works too
if (process.argv[1] !== undefined && /cli\/main\.js$/.test(process.argv[1])) runCli();
