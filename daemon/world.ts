// Entry of the world supervisor: pid 1 of the private namespace tree that `strait up`
// creates (see src/dataplane/netns/private-tree.ts). Reports to its owner over IPC.
//   node dist/daemon/world.js --state-dir DIR [--world FILE]
import { createLogger } from '../src/base/log/index.js';
import { Lifecycle } from '../src/base/lifecycle/index.js';
import { loadWorld, runWorld } from '../src/control/world/index.js';
import { here, worldComponents } from './world-components.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const stateDir = arg('--state-dir');
if (!stateDir) {
  console.error('usage: world.js --state-dir DIR [--world FILE]');
  process.exit(2);
}
const log = createLogger('world');
const life = new Lifecycle();
life.handleSignals(log);
const send = (msg: unknown): void => {
  if (process.connected) process.send?.(msg);
};
process.on('disconnect', () => {
  // the owner is gone: shut down (the kernel would kill us anyway)
  void life.shutdown(log).then(() => process.exit(0));
});

try {
  const world = await runWorld({
    world: loadWorld(arg('--world')),
    stateDir,
    log,
    images: { echo: here('./workload-echo.js') },
    components: worldComponents,
    notify: send,
  });
  life.onShutdown('world', () => world.stop());
} catch (err) {
  log.error({ err }, 'world failed to start');
  send({ type: 'failed', error: { message: (err as Error).message, code: (err as { code?: string }).code } });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100);
}
