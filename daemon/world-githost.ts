// The code-hosting server as the local world runs it (src/githost/server/world.ts).
//   node dist/daemon/world-githost.js --state-dir DIR --config FILE
import { runWorldGithost } from '../src/githost/server/index.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
await runWorldGithost(arg('--state-dir') ?? process.env['STRAIT_STATE_DIR'] ?? '.', arg('--config'));
