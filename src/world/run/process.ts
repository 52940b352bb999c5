// The world supervisor process: pid 1 of the private namespace tree that `strait up`
// creates (see src/platform/netns/private-tree.ts), started by daemon/world.ts. Reports to its
// owner over IPC, or, with --record (a detached world, owned by its unshare process), writes
// world.json itself.
import { readFileSync, readlinkSync } from 'node:fs';
import { createLogger } from '../../base/log/index.js';
import { Lifecycle } from '../../base/lifecycle/index.js';
import { loadWorld, runWorld, type WorldState } from '../supervisor/index.js';
import { entry, worldComponents } from './components.js';
import { removeWorldRecord, writeWorldRecord } from './record.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** SIGUSR2: how long the store API is away while it restarts */
const STORE_RESTART_DOWN_MS = 3000;

/** The world of --world (or the built-in one) in --state-dir, until a signal or the owner goes. */
export async function runWorldProcess(stateDir: string): Promise<void> {
  const log = createLogger('world');
  const life = new Lifecycle();
  life.handleSignals(log);
  const record = process.argv.includes('--record');
  // our pid and our parent's (unshare) as the host sees them: /proc is the host's procfs
  const hostPid = Number(readlinkSync('/proc/self'));
  const hostParent = (): number => {
    const stat = readFileSync(`/proc/${hostPid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  };
  const ownerPid = record ? hostParent() : 0;
  const startedAt = new Date().toISOString();
  const send = (msg: { type: string; state?: WorldState; error?: unknown }): void => {
    if (record && msg.state) {
      writeWorldRecord(stateDir, { version: 1, pid: ownerPid, supervisorPid: hostPid, stateDir, startedAt, ...msg.state });
    }
    if (process.connected) process.send?.(msg);
  };
  if (record) life.onShutdown('world.json', () => removeWorldRecord(stateDir, ownerPid));
  process.on('disconnect', () => {
    // the owner is gone: shut down (the kernel would kill us anyway)
    void life.shutdown(log).then(() => process.exit(0));
  });

  try {
    const world = await runWorld({
      world: loadWorld(arg('--world')),
      stateDir,
      log,
      images: { echo: entry('daemon/pod-runtime.js') },
      components: worldComponents,
      notify: send,
    });
    life.onShutdown('world', () => world.stop());
    // the store API restarted as a kube-apiserver restart looks to clients (docs/world.md)
    let restarting = false;
    process.on('SIGUSR2', () => {
      if (restarting) return;
      restarting = true;
      void world
        .restartStoreApi(STORE_RESTART_DOWN_MS)
        .catch((err: unknown) => log.error({ err }, 'store API restart failed'))
        .finally(() => {
          restarting = false;
        });
    });
    // runs first: tell the owner this is an orderly stop
    life.onShutdown('announce', () => send({ type: 'stopping' }));
  } catch (err) {
    log.error({ err }, 'world failed to start');
    const e = err as { message?: string; code?: string; exitCode?: number };
    send({ type: 'failed', error: { message: e.message ?? String(err), code: e.code } });
    const code = typeof e.exitCode === 'number' ? e.exitCode : 1;
    process.exitCode = code;
    setTimeout(() => process.exit(code), 100);
  }
}
