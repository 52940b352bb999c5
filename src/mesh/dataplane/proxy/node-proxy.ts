// The node-level mesh proxy: one process serves every injected pod of a node. For each
// pod it holds the pod's network namespace open (an fd), owns two listening sockets made
// inside that namespace (inbound and outbound, where the pod's redirect rules send its
// traffic) and one SidecarProxy: the pod's configuration, its TLS context (its own
// SPIFFE identity) and the sidecar's per-connection code, unchanged. Upstream connections
// (to the pod's application, to the destinations the pod called) are made inside the
// pod's namespace with SO_MARK = the proxy mark, which the pod's rules spare from the
// redirect (as the sidecar's uid is spared). A pod costs a few sockets and one TLS
// context, not a process.
import type { AddressInfo } from 'node:net';
import { E } from '../../../base/errors/index.js';
import { closeNetns, connectInNetns, listenInNetns, openNetns } from '../../../platform/netns/index.js';
import { originalDst } from './original-dst.js';
import { SidecarProxy, type ProxyEvent } from './sidecar.js';

/** SO_MARK of every socket the node proxy makes in a pod (1337, as Istio's ztunnel marks 0x539) */
export const PROXY_MARK = 0x539;

export interface NodeProxyOptions {
  /** where the pod's rules redirect inbound TCP (default 15006) */
  inboundPort?: number;
  /** where the pod's rules redirect outbound TCP (default 15001) */
  outboundPort?: number;
  /** address of the listeners inside each pod (default 0.0.0.0) */
  bind?: string;
  /** SO_MARK of the proxy's sockets (default PROXY_MARK) */
  mark?: number;
  onEvent?: (pod: string, ev: ProxyEvent) => void;
  /** inbound flows each pod's proxy keeps (default the sidecar's, 256) */
  flowLimit?: number;
}

export interface MeshPod {
  readonly key: string;
  readonly netns: string;
  readonly proxy: SidecarProxy;
  readonly inbound: AddressInfo;
  readonly outbound: AddressInfo;
}

interface PodEntry extends MeshPod {
  nsFd: number;
}

export class NodeProxy {
  private readonly pods = new Map<string, PodEntry>();
  /** per pod: the last add/remove, so that two for one pod never interleave */
  private readonly ops = new Map<string, Promise<unknown>>();
  private readonly inboundPort: number;
  private readonly outboundPort: number;
  private readonly bind: string;
  readonly mark: number;

  constructor(private readonly o: NodeProxyOptions = {}) {
    this.inboundPort = o.inboundPort ?? 15006;
    this.outboundPort = o.outboundPort ?? 15001;
    this.bind = o.bind ?? '0.0.0.0';
    this.mark = o.mark ?? PROXY_MARK;
  }

  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.ops.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.ops.set(key, settled);
    void settled.then(() => {
      if (this.ops.get(key) === settled) this.ops.delete(key);
    });
    return next;
  }

  /**
   * Serve a pod: its listeners in `netns` (a name under /run/netns or a path) and its
   * configuration. For a pod already served in the same namespace this is update(); in
   * another namespace (the pod was recreated) the old one is dropped first. Invalid
   * configuration throws STRAIT_ERR_MESH_CONFIG_INVALID, a namespace that cannot be
   * entered or a taken port STRAIT_ERR_MESH_POD_ATTACH; either way nothing is left behind.
   */
  addPod(key: string, netns: string, config: unknown): Promise<MeshPod> {
    return this.serial(key, async () => {
      const have = this.pods.get(key);
      if (have && have.netns === netns) {
        have.proxy.update(config);
        return have;
      }
      if (have) await this.drop(have);
      return this.attach(key, netns, config);
    });
  }

  private async attach(key: string, netns: string, config: unknown): Promise<PodEntry> {
    const fds: number[] = [];
    let fd: number;
    try {
      fd = openNetns(netns);
    } catch (err) {
      throw E.meshPodAttach(key, netns, (err as Error).message);
    }
    const mark = this.mark;
    const onEvent = this.o.onEvent;
    let proxy: SidecarProxy;
    try {
      proxy = new SidecarProxy(config, {
        originalDst,
        connect: (opts) => connectInNetns(fd, mark, opts),
        ...(this.o.flowLimit !== undefined ? { flowLimit: this.o.flowLimit } : {}),
        ...(onEvent ? { onEvent: (ev: ProxyEvent) => onEvent(key, ev) } : {}),
      });
    } catch (err) {
      closeNetns(fd);
      throw err;
    }
    try {
      fds.push(listenInNetns(fd, this.bind, this.inboundPort, 511, mark));
      fds.push(listenInNetns(fd, this.bind, this.outboundPort, 511, mark));
      const inbound = await proxy.listenInbound({ host: this.bind, port: this.inboundPort, fd: fds[0] as number, app: 'original-dst' });
      fds.shift();
      const outbound = await proxy.listenOutbound({ host: this.bind, port: this.outboundPort, fd: fds[0] as number, destination: 'original-dst' });
      fds.shift();
      const entry: PodEntry = { key, netns, proxy, inbound, outbound, nsFd: fd };
      this.pods.set(key, entry);
      return entry;
    } catch (err) {
      await proxy.close();
      for (const f of fds) closeFdQuietly(f);
      closeNetns(fd);
      throw E.meshPodAttach(key, netns, (err as Error).message);
    }
  }

  /** Swap a served pod's configuration (as SidecarProxy.update); false when the pod is not served. */
  update(key: string, config: unknown): boolean {
    const p = this.pods.get(key);
    if (!p) return false;
    p.proxy.update(config);
    return true;
  }

  /** Stop serving a pod: its listeners close, its open connections are cut, its namespace fd is released. */
  removePod(key: string): Promise<boolean> {
    return this.serial(key, async () => {
      const p = this.pods.get(key);
      if (!p) return false;
      await this.drop(p);
      return true;
    });
  }

  private async drop(p: PodEntry): Promise<void> {
    this.pods.delete(p.key);
    await p.proxy.close(true);
    closeNetns(p.nsFd);
  }

  /** fd of another listening socket inside a served pod's namespace (its metrics port, say). */
  listenIn(key: string, address: string, port: number): number {
    const p = this.pods.get(key);
    if (!p) throw E.meshPodAttach(key, '(not served)', 'the pod is not served by this node proxy');
    try {
      return listenInNetns(p.nsFd, address, port, 511, this.mark);
    } catch (err) {
      throw E.meshPodAttach(key, p.netns, (err as Error).message);
    }
  }

  pod(key: string): MeshPod | undefined {
    return this.pods.get(key);
  }

  list(): MeshPod[] {
    return [...this.pods.values()];
  }

  get size(): number {
    return this.pods.size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pods.keys()].map((k) => this.removePod(k)));
  }
}

function closeFdQuietly(fd: number): void {
  try {
    closeNetns(fd);
  } catch {
    // already adopted and closed by its server
  }
}
