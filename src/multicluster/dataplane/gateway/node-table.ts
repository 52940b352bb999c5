// The cluster's nodes as the gateway knows them (configuration, or the Node objects in
// Kubernetes mode): the underlay address each node agent sends VXLAN from, and the pod
// CIDRs of that node. Frames are accepted only from a known node, and an inner IPv4
// source must be in the sending node's pod CIDRs (no pod can speak for another pod).
// Per packet: a string compare against the last sender (a Map lookup otherwise) and an
// integer compare per CIDR against precomputed network and mask; no allocation.
import { parseCidr } from '../../../base/config/index.js';

export interface NodeEntry {
  /** underlay address the agent sends from (and the gateway sends to) */
  readonly address: string;
  /** pod CIDRs: network and mask, unsigned 32-bit */
  readonly nets: Uint32Array;
  readonly masks: Uint32Array;
  /** a node of the pod table (delivery, announcements); false for an HA member known only by address */
  readonly pods: boolean;
}

export interface NodeInput {
  address: string;
  podCIDRs: readonly string[];
}

function entry(address: string, podCIDRs: readonly string[], pods: boolean): NodeEntry {
  const nets = new Uint32Array(podCIDRs.length);
  const masks = new Uint32Array(podCIDRs.length);
  podCIDRs.forEach((text, i) => {
    const c = parseCidr(text, `node ${address}: podCIDRs[${i}]`);
    masks[i] = c.prefix === 0 ? 0 : (0xffffffff << (32 - c.prefix)) >>> 0;
    nets[i] = c.network;
  });
  return { address, nets, masks, pods };
}

/** Whether an IPv4 address (unsigned 32-bit) is in one of the node's pod CIDRs. */
export function inPodCidrs(n: NodeEntry, ip: number): boolean {
  const nets = n.nets;
  const masks = n.masks;
  for (let i = 0; i < nets.length; i++) if ((ip & (masks[i] as number)) >>> 0 === nets[i]) return true;
  return false;
}

export class NodeTable {
  /** the nodes with pods, in configuration order (delivery and announcements) */
  list: readonly NodeEntry[] = [];
  private senders = new Map<string, NodeEntry>();
  private lastAddress = '';
  private lastEntry: NodeEntry | undefined;

  /**
   * Replace the table. `extraSenders` (HA members) may send (announcements) without pods
   * of their own unless they are also listed as nodes. Throws on a bad CIDR (nothing changes).
   */
  set(nodes: readonly NodeInput[], extraSenders: readonly string[] = []): void {
    const list = nodes.map((n) => entry(n.address, n.podCIDRs, true));
    const senders = new Map<string, NodeEntry>();
    for (const a of extraSenders) senders.set(a, entry(a, [], false));
    for (const e of list) {
      const prev = senders.get(e.address);
      // one node listed twice (or an HA member also listed as a node): the union of its CIDRs
      senders.set(e.address, prev?.pods ? mergeEntries(prev, e) : e);
    }
    this.list = list;
    this.senders = senders;
    this.lastAddress = '';
    this.lastEntry = undefined;
  }

  /** The node an underlay address belongs to, or undefined for any other sender. */
  sender(address: string): NodeEntry | undefined {
    if (address === this.lastAddress) return this.lastEntry;
    const e = this.senders.get(address);
    this.lastAddress = address;
    this.lastEntry = e;
    return e;
  }

  get size(): number {
    return this.senders.size;
  }
}

function mergeEntries(a: NodeEntry, b: NodeEntry): NodeEntry {
  const nets = new Uint32Array(a.nets.length + b.nets.length);
  const masks = new Uint32Array(nets.length);
  nets.set(a.nets);
  nets.set(b.nets, a.nets.length);
  masks.set(a.masks);
  masks.set(b.masks, a.masks.length);
  return { address: a.address, nets, masks, pods: true };
}
