import type { Command } from 'commander';
import { VERSION } from '../../platform/cli-kit/index.js';

export function registerVersionCommand(program: Command): void {
  program
    .command('version')
    .description('print the version of strait')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action((opts: { output: string }) => {
      if (opts.output === 'json') console.log(JSON.stringify({ version: VERSION, node: process.version }));
      else console.log(`strait ${VERSION} (node ${process.version})`);
    });
}
