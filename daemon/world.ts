// Entry of the world supervisor (src/world/run/process.ts): pid 1 of the private namespace
// tree that `strait up` creates.
//   node dist/daemon/world.js --state-dir DIR [--world FILE] [--record]
import { E } from '../src/base/errors/index.js';
import { runWorldProcess } from '../src/world/run/index.js';
import { printedInfo, runEntry } from './entry.js';

const HELP = `usage: world.js --state-dir DIR [--world FILE] [--record]

The local world's supervisor: \`strait up\` starts it as pid 1 of the world's private namespaces
(docs/world.md); it is not run by hand.

  --state-dir DIR  the world's state directory
  --world FILE     the world file (default: the built-in world)
  --record         a detached world: write DIR/world.json itself
  -h, --help       this help
  -V, --version    the version
`;

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'world', HELP)) return;
  const i = process.argv.indexOf('--state-dir');
  const stateDir = i >= 0 ? process.argv[i + 1] : undefined;
  if (!stateDir) throw E.usage('usage: world.js --state-dir DIR [--world FILE] (add --help for usage)');
  await runWorldProcess(stateDir);
}

runEntry(main);
