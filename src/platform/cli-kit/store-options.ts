// What every resource command shares: --cluster and --state-dir (the program's), and a connection to
// the running world's store (STRAIT_ERR_WORLD_NOT_RUNNING when there is none); with
// --kubeconfig/--context, the Kubernetes store of that cluster instead.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { E, isStraitError } from '../../base/errors/index.js';
import { connectStoreFromFiles, type ResourceStore } from '../store/index.js';
import { resolveStateDir, stateFiles } from './state-dir.js';
import { takesGlobals } from './global-options.js';
import { addKubeOptions, isKubeMode, openKubeStore, type KubeCliOptions } from './kube-options.js';
import { isAlive } from './process-alive.js';
import { readWorldRecord } from './world-record.js';

export interface StoreCliOptions extends KubeCliOptions {
  cluster: string;
  stateDir?: string;
}

/** --kubeconfig and --context; --cluster and --state-dir are the program's (read with cmd.optsWithGlobals()). */
export function addStoreOptions(cmd: Command): Command {
  return addKubeOptions(takesGlobals(cmd, 'cluster', 'stateDir'));
}

/**
 * The store API of a state dir does not answer: no world runs there (STRAIT_ERR_WORLD_NOT_RUNNING),
 * or one runs whose store API is away for a moment (a restart: STRAIT_ERR_STORE_UNAVAILABLE).
 */
export function storeAway(stateDir: string, socket: string, why: string): Error {
  const w = readWorldRecord(stateDir);
  if (w && isAlive(w.pid) && isAlive(w.supervisorPid))
    return E.storeUnavailable(
      socket,
      `${why}, while the world (pid ${w.pid}) runs: its store API may be restarting; try again in a few seconds (strait status)`,
    );
  return E.worldNotRunning(stateDir);
}

/**
 * Run `fn` with a client of the world's store for --cluster. Transport failures become
 * STRAIT_ERR_WORLD_NOT_RUNNING (exit 5), naming the state dir (storeAway).
 */
export async function withStore<R>(opts: StoreCliOptions, fn: (store: ResourceStore) => Promise<R>): Promise<R> {
  if (isKubeMode(opts)) {
    const kube = openKubeStore(opts);
    try {
      return await fn(kube);
    } finally {
      await kube.close();
    }
  }
  const stateDir = resolveStateDir(opts.stateDir);
  const files = stateFiles(stateDir);
  if (!existsSync(files.storeSocket) || !existsSync(files.storeToken)) throw storeAway(stateDir, files.storeSocket, 'the socket is not there');
  const store = connectStoreFromFiles({ socketPath: files.storeSocket, tokenFile: files.storeToken, cluster: opts.cluster });
  try {
    return await fn(store);
  } catch (err) {
    if (isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE') && /ECONNREFUSED|ENOENT|ECONNRESET|socket hang up/.test(err.message)) {
      throw storeAway(stateDir, files.storeSocket, err.detail['reason'] === undefined ? err.message : String(err.detail['reason']));
    }
    throw err;
  } finally {
    await store.close();
  }
}

/** "5s", "3m20s", "2h", "4d" as kubectl prints ages. */
export function formatAge(timestamp: unknown, now = Date.now()): string {
  if (typeof timestamp !== 'string') return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}
