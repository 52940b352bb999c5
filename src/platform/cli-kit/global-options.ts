// --cluster and --state-dir, declared once on the program: they are taken before the command
// (`strait --cluster cluster-b show connections`) and after it (`strait show connections
// --cluster cluster-b`), and a command reads them with `cmd.optsWithGlobals()`. A command
// says which of them it takes (takesGlobals): only those show in its --help (under "Global
// Options"), and one it does not take is refused as an unknown option (exit 2), as when each
// command declared its own.
import { type Command, Help, type Option } from 'commander';

export interface GlobalOptions {
  cluster: string;
  stateDir?: string;
}

type GlobalName = keyof GlobalOptions;

const FLAGS: Record<GlobalName, string> = { cluster: '--cluster', stateDir: '--state-dir' };

const taken = new WeakMap<Command, ReadonlySet<string>>();

/** Declare the global options on the program; call before any command is added (they inherit its help settings). */
export function addGlobalOptions(program: Command): void {
  program
    .option('--cluster <name>', 'cluster of the local world to act on (resource commands also take "broker")', 'cluster-a')
    .option('--state-dir <dir>', 'state directory of the local world (default $STRAIT_STATE_DIR or ~/.local/state/strait)')
    .configureHelp({
      showGlobalOptions: true,
      visibleGlobalOptions(this: Help, cmd: Command): Option[] {
        const names = taken.get(cmd);
        return names ? Help.prototype.visibleGlobalOptions.call(this, cmd).filter((o) => names.has(o.attributeName())) : [];
      },
    })
    .hook('preAction', (root, action) => {
      for (const [name, flag] of Object.entries(FLAGS)) {
        if (root.getOptionValueSource(name) === 'cli' && !taken.get(action)?.has(name)) {
          action.error(`error: unknown option '${flag}'`, { code: 'commander.unknownOption' });
        }
      }
    });
}

/** Mark the global options `cmd` reads (with cmd.optsWithGlobals()). */
export function takesGlobals<C extends Command>(cmd: C, ...names: GlobalName[]): C {
  taken.set(cmd, new Set(names));
  return cmd;
}
