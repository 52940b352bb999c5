// strait demo [gitops]: the signed-GitOps scenario (docs/gitops.md), end to end, on this machine.
// strait demo gitops --world: that scenario set up in the running world, for README.md's lines.
// strait demo mesh:     the mesh traffic outcomes table (docs/mesh.md), measured in the running world.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { formatJson, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

async function gitops(opts: { keep: boolean }): Promise<void> {
  const { runGitopsDemo } = await import('../gitops-demo.js');
  const ok = await runGitopsDemo({ keep: opts.keep, out: (line) => console.log(line) });
  if (!ok) process.exitCode = 1;
}

interface GitopsOptions {
  keep: boolean;
  world: boolean;
  dir?: string;
  publicKey?: string;
  stateDir?: string;
}

async function gitopsCommand(opts: GitopsOptions, parentKeep: boolean): Promise<void> {
  if (!opts.world) {
    const worldOnly = (['dir', 'publicKey', 'stateDir'] as const).find((k) => opts[k] !== undefined);
    if (worldOnly) {
      const flag = { dir: '--dir', publicKey: '--public-key', stateDir: '--state-dir' }[worldOnly];
      throw E.usage(`${flag} is for the setup in the running world: strait demo gitops --world ${flag} ${String(opts[worldOnly])}`, { flag });
    }
    return gitops({ keep: opts.keep || parentKeep });
  }
  if (opts.keep || parentKeep) throw E.usage('--keep is for the demo in a temporary directory; --world keeps everything it makes', { flag: '--keep' });
  const { setUpGitopsInWorld } = await import('../gitops-demo-world.js');
  await setUpGitopsInWorld({
    stateDir: resolveStateDir(opts.stateDir),
    ...(opts.dir !== undefined ? { dir: opts.dir } : {}),
    publicKey: opts.publicKey ?? 'alice.asc',
    out: (line) => console.log(line),
  });
}

export function registerDemoCommand(program: Command): void {
  const demo: Command = program
    .command('demo')
    .description(
      'walk the scenarios of docs/gitops.md and docs/mesh.md: signed GitOps in a temporary directory (default, or `demo gitops`), ' +
        "README.md's signed-GitOps scenario set up in the running world (`demo gitops --world`) and the mesh traffic table measured in the running world (`demo mesh`)",
    )
    .option('--keep', 'keep the temporary directory (keys, repositories, stores) afterwards', false)
    .action(async (opts: { keep: boolean }) => {
      await gitops(opts);
      console.log(
        "in a world: `strait up --detach`, then `strait demo gitops --world` sets README.md's signed-GitOps scenario up there and " +
          '`strait demo mesh` measures the traffic table of docs/mesh.md',
      );
    });

  takesGlobals(demo.command('gitops'), 'stateDir')
    .description(
      'the signed GitOps scenario: code-hosting API, signed and unsigned pushes, key import, both outcomes, in a temporary directory (no world needed); ' +
        "with --world, set up README.md's scenario in the running world instead: githost user alice with repository guestbook and a signed commit, " +
        'her OpenPGP key (public key in ./alice.asc), the AppProject signed that requires it and the Application guestbook; then print the next commands',
    )
    .option('--keep', 'keep the temporary directory (keys, repositories, stores) afterwards', false)
    .option('--world', 'set up in the running world (--state-dir) and keep it there; once: refused when anything it makes is already there', false)
    .option('--dir <dir>', "with --world: the directory for the key's GnuPG home, the working copy and the git credentials (default <state dir>/gitops-demo)")
    .option('--public-key <file>', 'with --world: where to write the public key (default alice.asc)')
    // `demo gitops --keep` may land on the parent's --keep
    .action((_opts: unknown, cmd: Command) => gitopsCommand(cmd.optsWithGlobals<GitopsOptions>(), (demo.opts() as { keep?: boolean }).keep === true));

  takesGlobals(demo.command('mesh'), 'stateDir')
    .description(
      'in the running world: apply PERMISSIVE, DISABLE and STRICT as the default PeerAuthentication of namespace mesh, ' +
        'curl echo from the in-mesh pod client, the out-of-mesh pod outsider and the host through the ingress gateway, ' +
        'print the traffic table of docs/mesh.md with each measured outcome next to the expected one, then restore the original policy; exit 1 when a cell differs',
    )
    .option('--timeout <seconds>', 'how long to wait for each mode to take effect', '30')
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ stateDir?: string; timeout: string; output?: string }>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const { runningWorld } = await import('../world-file.js');
      const { runMeshDemo, formatMeshDemo } = await import('../mesh-demo.js');
      const { connectStoreFromFiles } = await import('../../platform/store/index.js');
      const { stateFiles } = await import('../../platform/cli-kit/index.js');
      const stateDir = resolveStateDir(opts.stateDir);
      const record = runningWorld(stateDir);
      const files = stateFiles(stateDir);
      // Ctrl-C ends the demo after the current step and still restores the original policy
      const stop = new AbortController();
      const onInt = (): void => {
        process.stderr.write('demo: stopping; restoring the original policy\n');
        stop.abort();
      };
      process.once('SIGINT', onInt);
      const result = await runMeshDemo({
        signal: stop.signal,
        record,
        timeoutMs: Math.max(1, Number(opts.timeout)) * 1000,
        store: async (cluster) => {
          const store = connectStoreFromFiles({ socketPath: files.storeSocket, tokenFile: files.storeToken, cluster });
          return { store, close: () => store.close() };
        },
        progress: format === 'text' ? (line) => process.stderr.write(`${line}\n`) : undefined,
      }).finally(() => process.off('SIGINT', onInt));
      process.stdout.write(format === 'json' ? formatJson(result) : formatMeshDemo(result));
      if (!result.ok) process.exitCode = 1;
    });
}
