// Entry of the code-hosting server process (systemd unit, container, `strait up`).
//   node dist/daemon/githost/main.js [--port N] [--host ADDR] [--state-dir DIR] [--config FILE]
// The same as `strait githost serve` (src/githost/cli/githost.ts).
import { Command } from 'commander';
import { registerGithostCommand } from '../../src/githost/cli/index.js';
import { addGlobalOptions, VERSION } from '../../src/platform/cli-kit/index.js';
import { runEntry } from '../entry.js';

process.env['STRAIT_PROC'] ??= 'githost';
const program = new Command('strait').version(VERSION, '-V, --version').showHelpAfterError('(add --help for usage)').exitOverride();
addGlobalOptions(program);
registerGithostCommand(program);
runEntry(async () => {
  await program.parseAsync([process.argv[0] ?? 'node', 'strait', 'githost', 'serve', ...process.argv.slice(2)]);
});
