// strait demo: SPEC.md's signed-GitOps scenario, end to end, on this machine.
import type { Command } from 'commander';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('walk the signed GitOps scenario: code-hosting API, signed and unsigned pushes, key import, both outcomes')
    .option('--keep', 'keep the temporary directory (keys, repositories, stores) afterwards', false)
    .action(async (opts: { keep: boolean }) => {
      const { runGitopsDemo } = await import('../gitops-demo.js');
      const ok = await runGitopsDemo({ keep: opts.keep, out: (line) => console.log(line) });
      if (!ok) process.exitCode = 1;
    });
}
