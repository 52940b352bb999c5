// The cluster's nodes for the gateway in Kubernetes mode: from the Node objects, each
// node's underlay address (status.addresses InternalIP, IPv4) and pod CIDRs
// (spec.podCIDRs, else spec.podCIDR; IPv4), listed and watched (the Informer re-lists
// after a broken watch). The gateway's own node is left out (its pods reach the gateway
// through its TUN device, not over VXLAN). A node without an address or pod CIDR is left
// out too: nothing is accepted from it until it has both.
import { type Clock, systemClock } from '../../../base/clock/index.js';
import { isIPv4Cidr, ipv4ToInt } from '../../../base/config/index.js';
import { Kinds } from '../../../platform/resources/index.js';
import { kindRef, type KubeObject, type ResourceStore } from '../../../platform/store/index.js';
import { Informer } from '../../../platform/controller/index.js';

export interface ClusterNode {
  name: string;
  address: string;
  podCIDRs: string[];
}

interface NodeShape {
  spec?: { podCIDR?: unknown; podCIDRs?: unknown };
  status?: { addresses?: { type?: unknown; address?: unknown }[] };
}

/** A Node object's underlay address: its first IPv4 InternalIP (status.addresses), or undefined. */
export function nodeInternalIPv4(obj: KubeObject): string | undefined {
  const o = obj as unknown as NodeShape;
  const addresses = Array.isArray(o.status?.addresses) ? o.status.addresses : [];
  return addresses.find((a) => a?.type === 'InternalIP' && typeof a.address === 'string' && ipv4ToInt(a.address) !== undefined)?.address as string | undefined;
}

/** A Node object's underlay address and IPv4 pod CIDRs, or undefined when it lacks either. */
export function clusterNodeOf(obj: KubeObject): ClusterNode | undefined {
  const o = obj as unknown as NodeShape;
  const cidrs = Array.isArray(o.spec?.podCIDRs) ? o.spec.podCIDRs : [o.spec?.podCIDR];
  const podCIDRs = cidrs.filter((c): c is string => typeof c === 'string' && isIPv4Cidr(c));
  const address = nodeInternalIPv4(obj);
  if (address === undefined || podCIDRs.length === 0) return undefined;
  return { name: obj.metadata.name, address, podCIDRs };
}

export interface NodeWatchOptions {
  /** this gateway's node name: left out */
  self?: string;
  /** the whole list, after every change */
  onNodes(nodes: ClusterNode[]): void;
  onError?(err: unknown): void;
  clock?: Clock;
}

export interface NodeWatch {
  /** true once the Node objects were listed and are watched */
  readonly synced: boolean;
  stop(): void;
}

/** The label of the nodes a gateway runs on (Submariner's, deploy/gateway.yaml's nodeSelector). */
export const GATEWAY_NODE_LABEL = 'submariner.io/gateway';

/**
 * The gateway nodes' underlay addresses by node name (label submariner.io/gateway=true), listed
 * and watched: the HA liveness link's members in Kubernetes mode (control/gateway-ha).
 */
export function watchGatewayNodes(
  store: ResourceStore,
  o: { onChange?: (addresses: ReadonlyMap<string, string>) => void; onError?: (err: unknown) => void; clock?: Clock } = {},
): { readonly addresses: ReadonlyMap<string, string>; firstSync: Promise<void>; stop(): void } {
  const addresses = new Map<string, string>();
  const set = (obj: KubeObject): void => {
    const a = nodeInternalIPv4(obj);
    if (a) addresses.set(obj.metadata.name, a);
    else addresses.delete(obj.metadata.name);
  };
  const informer = new Informer(
    store,
    kindRef(Kinds.Node),
    { labelSelector: `${GATEWAY_NODE_LABEL}=true` },
    {
      onList(items) {
        addresses.clear();
        for (const obj of items) set(obj);
        o.onChange?.(addresses);
      },
      onEvent(type, obj) {
        if (type === 'DELETED') addresses.delete(obj.metadata.name);
        else set(obj);
        o.onChange?.(addresses);
      },
      ...(o.onError ? { onError: o.onError } : {}),
    },
    { clock: o.clock ?? systemClock },
  );
  informer.start();
  return { addresses, firstSync: informer.firstSync, stop: () => informer.stop() };
}

export function watchClusterNodes(store: ResourceStore, opts: NodeWatchOptions): NodeWatch {
  const objs = new Map<string, KubeObject>();
  const publish = (): void => {
    const out: ClusterNode[] = [];
    for (const o of objs.values()) {
      if (o.metadata.name === opts.self) continue;
      const n = clusterNodeOf(o);
      if (n) out.push(n);
    }
    out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    opts.onNodes(out);
  };
  const informer = new Informer(
    store,
    kindRef(Kinds.Node),
    {},
    {
      onList(items) {
        objs.clear();
        for (const o of items) objs.set(o.metadata.name, o);
        publish();
      },
      onEvent(type, obj) {
        if (type === 'DELETED') objs.delete(obj.metadata.name);
        else objs.set(obj.metadata.name, obj);
        publish();
      },
      ...(opts.onError ? { onError: opts.onError } : {}),
    },
    { clock: opts.clock ?? systemClock },
  );
  informer.start();
  return {
    get synced() {
      return informer.synced;
    },
    stop: () => informer.stop(),
  };
}
