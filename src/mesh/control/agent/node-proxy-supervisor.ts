// Runs the node-level mesh proxy (agents/mesh-node/main.js): one process per node that
// has injected pods, serving all of them. For each injected pod with a namespace it
// installs the pod's redirect rules (sparing the proxy's sockets by their mark) and tells
// the node's proxy over IPC to serve the pod ({type:'pod', pod, netns, configFile}); each
// new configuration goes the same way ({type:'config', pod, config}); a pod that leaves
// the mesh is dropped ({type:'remove', pod}). A pod the proxy could not attach is retried
// with backoff; a proxy process that dies is restarted with backoff (src/platform/process)
// and given all its pods again. Pods are grouped by spec.nodeName (one group when the pods name no node).
import { join } from 'node:path';
import { Backoff } from '../../../base/backoff/index.js';
import { PROCESS_BACKOFF, SupervisedProcess } from '../../../platform/process/index.js';
import { PROXY_MARK } from '../../dataplane/proxy/index.js';
import type { MeshView } from '../policy/index.js';
import { installRedirect, removeRedirect } from './redirect.js';
import {
  INBOUND_PORT,
  METRICS_PORT,
  OUTBOUND_PORT,
  podRedirectScript,
  type ProxyStatus,
  type ProxySupervisor,
  type ProxySupervisorOptions,
} from './sidecar-supervisor.js';

/** Each node proxy logs to <dir>/node-proxy.<node>.log. */
export interface NodeProxySupervisorOptions extends ProxySupervisorOptions {
  /** compiled agents/mesh-node/main.js */
  nodeProxyScript: string;
  /** SO_MARK of the proxy's sockets (default PROXY_MARK) */
  mark?: number;
  /** serve each pod's metrics on this port inside the pod (default METRICS_PORT; 0 = none) */
  metricsPort?: number;
}

interface PodState {
  key: string;
  netns: string;
  node: string;
  ready: boolean;
  /** attach attempts that failed, plus the restarts of its node's proxy while it was served */
  restarts: number;
  /** failed attaches since it was last ready */
  backoff: Backoff;
  timer?: NodeJS.Timeout;
  /** the redirect is in place */
  redirected: boolean;
}

interface NodeProc {
  node: string;
  proc: SupervisedProcess;
  pods: Set<string>;
  stopped: boolean;
}

const DEFAULT_NODE = 'node';

export class NodeProxySupervisor implements ProxySupervisor {
  private readonly pods = new Map<string, PodState>();
  private readonly nodes = new Map<string, NodeProc>();
  private stopping = false;

  constructor(private readonly o: NodeProxySupervisorOptions) {}

  private configFile(key: string): string {
    const [ns, pod] = key.split('/') as [string, string];
    return join(this.o.dir, ns, `${pod}.json`);
  }

  sync(view: MeshView): { started: string[]; stopped: string[] } {
    const want = new Map<string, { netns: string; node: string }>();
    for (const w of view.workloads) if (w.sidecar && w.netns) want.set(`${w.namespace}/${w.name}`, { netns: w.netns, node: w.node ?? DEFAULT_NODE });
    const started: string[] = [];
    const stopped: string[] = [];
    for (const [key, p] of this.pods) {
      const w = want.get(key);
      if (w && w.netns === p.netns && w.node === p.node) continue;
      this.dropPod(p);
      stopped.push(key);
    }
    for (const [key, w] of want) {
      if (this.pods.has(key)) continue;
      const p: PodState = { key, netns: w.netns, node: w.node, ready: false, restarts: 0, backoff: new Backoff(PROCESS_BACKOFF), redirected: false };
      this.pods.set(key, p);
      this.nodeProc(w.node).pods.add(key);
      this.attach(p);
      started.push(key);
    }
    // a node without pods keeps no process
    for (const n of [...this.nodes.values()]) if (n.pods.size === 0) void this.stopNode(n);
    if (started.length || stopped.length) this.o.onChange?.();
    return { started, stopped };
  }

  private nodeProc(node: string): NodeProc {
    let n = this.nodes.get(node);
    if (!n) {
      const created: NodeProc = { node, proc: this.supervise(node, () => created), pods: new Set(), stopped: false };
      this.nodes.set(node, created);
      created.proc.start();
      n = created;
    }
    return n;
  }

  private supervise(node: string, self: () => NodeProc): SupervisedProcess {
    return new SupervisedProcess({
      command: [
        this.o.nodeBinary ?? process.execPath,
        this.o.nodeProxyScript,
        '--node',
        node,
        '--inbound-port',
        String(INBOUND_PORT),
        '--outbound-port',
        String(OUTBOUND_PORT),
        '--mark',
        String(this.o.mark ?? PROXY_MARK),
        '--metrics-port',
        String(this.o.metricsPort ?? METRICS_PORT),
        ...(this.o.flowLimit !== undefined ? ['--flow-limit', String(this.o.flowLimit)] : []),
      ],
      env: { ...process.env, STRAIT_PROC: `mesh-node ${node}` },
      logFile: join(this.o.dir, `node-proxy.${node}.log`),
      stdout: 'ignore',
      // ready for pods: each one is sent (again, after a restart)
      ready: 'ipc',
      onReady: () => {
        for (const key of self().pods) {
          const p = this.pods.get(key);
          if (p) this.attach(p);
        }
      },
      onMessage: (m) => this.onMessage(self(), m as { type?: string; pod?: string; error?: string; report?: unknown }),
      onExit: ({ code, signal, restartInMs }) => {
        const n = self();
        for (const key of n.pods) {
          const p = this.pods.get(key);
          if (p) {
            p.ready = false;
            clearTimeout(p.timer);
            if (!n.stopped) p.restarts++;
          }
        }
        this.o.onChange?.();
        if (restartInMs !== undefined && !this.stopping) this.o.log?.warn({ node, code, signal }, 'node proxy exited; restarting');
      },
    });
  }

  private onMessage(n: NodeProc, m: { type?: string; pod?: string; error?: string; report?: unknown }): void {
    const p = m?.pod ? this.pods.get(m.pod) : undefined;
    if (!p || p.node !== n.node) return;
    if (m.type === 'flows') {
      this.o.onFlows?.(p.key, m.report);
    } else if (m.type === 'pod-ready') {
      p.ready = true;
      p.backoff.reset();
      this.o.onChange?.();
    } else if (m.type === 'pod-failed') {
      p.ready = false;
      p.restarts++;
      this.o.log?.warn({ pod: p.key, netns: p.netns, err: m.error }, 'node proxy cannot serve the pod; retrying');
      this.retry(p);
      this.o.onChange?.();
    }
  }

  /** Redirect the pod's traffic and ask its node's proxy to serve it (once the proxy is up). */
  private attach(p: PodState): void {
    clearTimeout(p.timer);
    if (this.pods.get(p.key) !== p) return;
    if (!p.redirected) {
      try {
        installRedirect(p.netns, podRedirectScript({ proxyMark: this.o.mark ?? PROXY_MARK }, this.o.excludeInboundPorts));
        p.redirected = true;
      } catch (err) {
        this.o.log?.warn({ pod: p.key, netns: p.netns, err: String(err) }, "cannot install the pod's redirect; retrying");
        p.restarts++;
        this.retry(p);
        return;
      }
    }
    const n = this.nodes.get(p.node);
    if (!n?.proc.ready) return; // sent when the proxy says it is ready
    n.proc.send({ type: 'pod', pod: p.key, netns: p.netns, configFile: this.configFile(p.key) });
  }

  private retry(p: PodState): void {
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.attach(p), p.backoff.fail());
    p.timer.unref?.();
  }

  private dropPod(p: PodState): void {
    clearTimeout(p.timer);
    this.pods.delete(p.key);
    const n = this.nodes.get(p.node);
    if (n) {
      n.pods.delete(p.key);
      n.proc.send({ type: 'remove', pod: p.key });
    }
    if (p.redirected) removeRedirect(p.netns);
  }

  private stopNode(n: NodeProc): Promise<void> {
    n.stopped = true;
    this.nodes.delete(n.node);
    return n.proc.stop();
  }

  push(namespace: string, pod: string, config: unknown): boolean {
    const p = this.pods.get(`${namespace}/${pod}`);
    const n = p ? this.nodes.get(p.node) : undefined;
    if (!p || !n?.proc.ready) return false;
    return n.proc.send({ type: 'config', pod: p.key, netns: p.netns, config });
    return true;
  }

  status(): ProxyStatus[] {
    return [...this.pods.values()].map((p) => {
      const n = this.nodes.get(p.node);
      const pid = n?.proc.pid;
      return { pod: p.key, netns: p.netns, running: !!n?.proc.running, ready: p.ready, ...(pid ? { pid } : {}), restarts: p.restarts };
    });
  }

  /** The node proxies' processes (for measurements): node name and pid. */
  processes(): { node: string; pid: number; pods: number }[] {
    return [...this.nodes.values()].flatMap((n) => (n.proc.pid ? [{ node: n.node, pid: n.proc.pid, pods: n.pods.size }] : []));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const exits: Promise<void>[] = [];
    for (const p of [...this.pods.values()]) {
      clearTimeout(p.timer);
      if (p.redirected) removeRedirect(p.netns);
    }
    this.pods.clear();
    for (const n of [...this.nodes.values()]) exits.push(this.stopNode(n));
    await Promise.all(exits);
  }
}
