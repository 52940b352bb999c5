// Where the multicluster commands find their stores:
//   - a running local world (state dir has world.json / store.sock + store.token): the world's
//     store API, one store per cluster plus "broker";
//   - otherwise a standalone embedded store per cluster under <state-dir>/stores/<name>
//     (bare hosts, and tests of the commands without a world).
//   - Kubernetes mode (--kubeconfig/--context): the API server of the kubeconfig's cluster,
//     where the gateways and the control module write the records (openTarget).
// A broker named by broker-info.subm is reached by its URL: unix:///path/store.sock#broker
// (the world's store API), file:///dir (an embedded store directory) or https:// (a
// Kubernetes API server).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MC_KINDS as K, openBrokerByUrl, openBrokerOfCluster as openJoinedBroker, type BrokerInfo } from '../control/clusterset/index.js';
import { connectStore, openEmbeddedStore, type KubernetesResourceStore, type ResourceStore } from '../../platform/store/index.js';
import {
  isAlive,
  isKubeMode,
  kubeLabel,
  openKubeStore,
  readInput,
  readWorldRecord,
  resolveStateDir,
  stateFiles,
  type KubeCliOptions,
  type WorldRecord,
} from '../../platform/cli-kit/index.js';
import { E } from '../../base/errors/index.js';
import { kubeComponents, worldComponents } from './collect.js';

export type WorldCluster = WorldRecord['clusters'][number];

/** The world of a state dir while its owner runs (world.json of a killed world is not one). */
export function readRunningWorld(stateDir: string): WorldRecord | undefined {
  const w = readWorldRecord(stateDir);
  return w && isAlive(w.pid) ? w : undefined;
}

/** world.json of the state dir (src/platform/cli-kit: the one reader) */
export const readWorld = readWorldRecord;

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

/** The kinds a joined cluster holds (deploy/crds.yaml has their CRDs): join and the commands that read them check for them first. */
export const CLUSTER_KINDS = [K.Cluster, K.Endpoint, K.Gateway, K.Submariner, K.ServiceExport, K.ServiceImport] as const;
/** The kinds the broker holds (in its namespace of its API server). */
export const BROKER_KINDS = [K.Cluster, K.Endpoint, K.Gateway, K.ServiceImport] as const;

/** The cluster a show/export/verify/diagnose command acts on: one of the local world's, or a Kubernetes cluster. */
export interface ClusterTarget {
  mode: 'world' | 'kubernetes';
  store: ResourceStore;
  /** Kubernetes mode: the API server's store (store is the same object) */
  kube?: KubernetesResourceStore;
  /** --cluster in the world; in Kubernetes mode the kubeconfig context, until the join's cluster ID is read */
  name: string;
  /** the local world's state dir (world mode) */
  stateDir?: string;
  /** the broker the cluster joined (in the world, else the world's broker); undefined when there is none */
  openBroker(): Promise<ResourceStore | undefined>;
  /** the components that run for the cluster, with their versions */
  running(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

export interface TargetOptions extends KubeCliOptions {
  cluster: string;
  stateDir?: string;
}

/**
 * Open the cluster of a command's options: with --kubeconfig/--context its API server,
 * else the world's store of --cluster (`existing`: never create a store, as for openClusterStore).
 */
export function openTarget(opts: TargetOptions, o: { existing?: boolean } = {}): ClusterTarget {
  if (isKubeMode(opts)) {
    const kube = openKubeStore(opts);
    return {
      mode: 'kubernetes',
      store: kube,
      kube,
      name: kubeLabel(opts),
      openBroker: () => openJoinedBroker(kube),
      running: () => kubeComponents(kube),
      close: () => kube.close(),
    };
  }
  const stateDir = resolveStateDir(opts.stateDir);
  const { store } = openClusterStore(stateDir, opts.cluster, o);
  return {
    mode: 'world',
    store,
    name: opts.cluster,
    stateDir,
    openBroker: () => openBrokerOfCluster(store, stateDir),
    running: () => Promise.resolve(worldComponents(readRunningWorld(stateDir)?.components ?? [], opts.cluster)),
    close: () => store.close(),
  };
}
