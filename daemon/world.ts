// Entry of the world supervisor (src/world/run/process.ts): pid 1 of the private namespace
// tree that `strait up` creates.
//   node dist/daemon/world.js --state-dir DIR [--world FILE] [--record]
import { runWorldProcess } from '../src/world/run/index.js';

const i = process.argv.indexOf('--state-dir');
const stateDir = i >= 0 ? process.argv[i + 1] : undefined;
if (!stateDir) {
  console.error('usage: world.js --state-dir DIR [--world FILE]');
  process.exit(2);
}
await runWorldProcess(stateDir);
