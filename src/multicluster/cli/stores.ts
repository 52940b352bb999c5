// Where the multicluster commands find their stores:
//   - a running local world (state dir has world.json / store.sock + store.token): the world's
//     store API, one store per cluster plus "broker";
//   - otherwise a standalone embedded store per cluster under <state-dir>/stores/<name>
//     (bare hosts, and tests of the commands without a world).
// A broker named by broker-info.subm is reached by its URL: unix:///path/store.sock#broker
// (the world's store API) or file:///dir (an embedded store directory).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openBrokerByUrl, openBrokerOfCluster as openJoinedBroker, type BrokerInfo } from '../control/clusterset/index.js';
import { connectStore, openEmbeddedStore, type ResourceStore } from '../../platform/store/index.js';
import { isAlive, readInput, stateFiles } from '../../platform/cli-kit/index.js';
import { E } from '../../base/errors/index.js';

export interface WorldCluster {
  name: string;
  clusterCIDR: string;
  serviceCIDR: string;
}

interface WorldFile {
  pid?: number;
  store?: { socket?: string; token?: string };
  clusters?: WorldCluster[];
  components?: { name: string; ready?: boolean }[];
}

/** The world of a state dir while its owner runs (world.json of a killed world is not one). */
export function readRunningWorld(stateDir: string): WorldFile | undefined {
  const w = readWorld(stateDir);
  return w && isAlive(w.pid) ? w : undefined;
}

export function readWorld(stateDir: string): WorldFile | undefined {
  const f = stateFiles(stateDir).world;
  if (!existsSync(f)) return undefined;
  try {
    return JSON.parse(readInput(f)) as WorldFile;
  } catch {
    return undefined;
  }
}

function worldStoreAccess(stateDir: string): { socketPath: string; token: string } | undefined {
  const files = stateFiles(stateDir);
  const w = readWorld(stateDir);
  const socketPath = w?.store?.socket ?? files.storeSocket;
  if (!existsSync(socketPath)) return undefined;
  // world.json names the token file (store.token); read the token from it
  const tokenFile = w?.store?.token && existsSync(w.store.token) ? w.store.token : files.storeToken;
  const token = existsSync(tokenFile) ? readInput(tokenFile, { limit: 4096 }).trim() : undefined;
  if (!token) return undefined;
  return { socketPath, token };
}

export interface StoreAccess {
  store: ResourceStore;
  /** the URL a broker-info file records for this store */
  url: string;
  /** the token that reaches it (the world's store token), if any */
  token?: string;
}

/**
 * `existing`: a command that only reads (show, diagnose, verify) must not create a store:
 * with no world and no store of that cluster it fails with STRAIT_ERR_WORLD_NOT_RUNNING.
 */
export function openClusterStore(stateDir: string, cluster: string, opts: { existing?: boolean } = {}): StoreAccess {
  const w = worldStoreAccess(stateDir);
  if (w) return { store: connectStore({ ...w, cluster }), url: `unix://${w.socketPath}#${cluster}`, token: w.token };
  const dir = join(stateDir, 'stores', cluster);
  if (opts.existing && !existsSync(dir)) throw E.worldNotRunning(stateDir);
  return { store: openEmbeddedStore({ dir }), url: `file://${dir}` };
}

export function openBrokerFromInfo(info: BrokerInfo): ResourceStore {
  return openBrokerByUrl(info.brokerURL, info.clientToken, info.brokerCA);
}

/** The broker a joined cluster uses; when it has not joined, the running world's broker. */
export async function openBrokerOfCluster(local: ResourceStore, stateDir: string): Promise<ResourceStore | undefined> {
  const b = await openJoinedBroker(local);
  if (b) return b;
  const w = worldStoreAccess(stateDir);
  return w ? connectStore({ ...w, cluster: 'broker' }) : undefined;
}
