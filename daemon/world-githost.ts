// The code-hosting server as the local world runs it (src/githost/server/world.ts).
//   node dist/daemon/world-githost.js --state-dir DIR --config FILE
import { E } from '../src/base/errors/index.js';
import { runWorldGithost } from '../src/githost/server/index.js';
import { printedInfo, runEntry } from './entry.js';

const HELP = `usage: world-githost.js --state-dir DIR [--config FILE]

The code-hosting server of the local world (the supervisor starts it; docs/githost.md): its
repositories and database under DIR/githost ($STRAIT_STATE_DIR when --state-dir is not given).

  --state-dir DIR  the world's state directory
  --config FILE    the server's configuration
  -h, --help       this help
  -V, --version    the version
`;

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'world-githost', HELP)) return;
  // never the current directory by default: a server started by hand would write its
  // database wherever it was run
  const stateDir = arg('--state-dir') ?? process.env['STRAIT_STATE_DIR'];
  if (!stateDir) throw E.usage('usage: world-githost.js --state-dir DIR [--config FILE] (or $STRAIT_STATE_DIR; add --help for usage)');
  await runWorldGithost(stateDir, arg('--config'));
}

runEntry(main);
