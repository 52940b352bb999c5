// Runs the node-level mesh proxy (agents/mesh-node/main.js): one process per node that
// has injected pods, serving all of them. For each injected pod with a namespace it
// installs the pod's redirect rules (sparing the proxy's sockets by their mark) and tells
// the node's proxy over IPC to serve the pod ({type:'pod', pod, netns, configFile}); each
// new configuration goes the same way ({type:'config', pod, config}); a pod that leaves
// the mesh is dropped ({type:'remove', pod}). A pod the proxy could not attach is retried
// with backoff; a proxy process that dies is restarted with backoff and given all its
// pods again. Pods are grouped by spec.nodeName (one group when the pods name no node).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { PROXY_MARK } from '../../dataplane/proxy/index.js';
import type { MeshView } from '../policy/index.js';
import { installRedirect, removeRedirect } from './redirect.js';
import { INBOUND_PORT, METRICS_PORT, OUTBOUND_PORT, podRedirectScript, type ProxyStatus, type ProxySupervisor } from './sidecar-supervisor.js';

export interface NodeProxySupervisorOptions {
  /** the MeshController's directory: <dir>/<ns>/<pod>.json; each node proxy logs to <dir>/node-proxy.<node>.log */
  dir: string;
  /** compiled agents/mesh-node/main.js */
  nodeProxyScript: string;
  nodeBinary?: string;
  /** SO_MARK of the proxy's sockets (default PROXY_MARK) */
  mark?: number;
  /** inbound ports that bypass the proxy (the world's metrics port: scrapes are plaintext) */
  excludeInboundPorts?: number[];
  /** serve each pod's metrics on this port inside the pod (default METRICS_PORT; 0 = none) */
  metricsPort?: number;
  log?: Logger;
  /** a pod became ready or stopped being served, a proxy process started or exited */
  onChange?: () => void;
  /** a node proxy sent the flows one pod saw since its last report ({type:'flows', pod, report}) */
  onFlows?: (pod: string, report: unknown) => void;
  /** inbound flows kept per pod (the node proxy's --flow-limit) */
  flowLimit?: number;
}

interface PodState {
  key: string;
  netns: string;
  node: string;
  ready: boolean;
  /** attach attempts that failed, plus the restarts of its node's proxy while it was served */
  restarts: number;
  backoff: number;
  timer?: NodeJS.Timeout;
  /** the redirect is in place */
  redirected: boolean;
}

interface NodeProc {
  node: string;
  child?: ChildProcess;
  /** the child said it is ready for pods */
  up: boolean;
  pods: Set<string>;
  restarts: number;
  backoff: number;
  timer?: NodeJS.Timeout;
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
      const p: PodState = { key, netns: w.netns, node: w.node, ready: false, restarts: 0, backoff: 200, redirected: false };
      this.pods.set(key, p);
      this.nodeProc(w.node).pods.add(key);
      this.attach(p);
      started.push(key);
    }
    // a node without pods keeps no process
    for (const n of this.nodes.values()) if (n.pods.size === 0) this.stopNode(n);
    if (started.length || stopped.length) this.o.onChange?.();
    return { started, stopped };
  }

  private nodeProc(node: string): NodeProc {
    let n = this.nodes.get(node);
    if (!n) {
      n = { node, up: false, pods: new Set(), restarts: 0, backoff: 200, stopped: false };
      this.nodes.set(node, n);
      this.launch(n);
    }
    return n;
  }

  private launch(n: NodeProc): void {
    if (n.stopped || this.stopping) return;
    mkdirSync(this.o.dir, { recursive: true });
    const logFd = openSync(join(this.o.dir, `node-proxy.${n.node}.log`), 'a');
    const child = spawn(this.o.nodeBinary ?? process.execPath, [this.o.nodeProxyScript, '--node', n.node,
      '--inbound-port', String(INBOUND_PORT), '--outbound-port', String(OUTBOUND_PORT),
      '--mark', String(this.o.mark ?? PROXY_MARK), '--metrics-port', String(this.o.metricsPort ?? METRICS_PORT),
      ...(this.o.flowLimit !== undefined ? ['--flow-limit', String(this.o.flowLimit)] : [])],
    { stdio: ['ignore', 'ignore', logFd, 'ipc'], env: { ...process.env, STRAIT_PROC: `mesh-node ${n.node}` } });
    closeSync(logFd);
    n.child = child;
    n.up = false;
    const started = Date.now();
    child.on('error', () => {});
    child.on('message', (m: { type?: string; pod?: string; error?: string; report?: unknown }) => this.onMessage(n, m));
    child.once('exit', (code, signal) => {
      n.child = undefined;
      n.up = false;
      for (const key of n.pods) {
        const p = this.pods.get(key);
        if (p) {
          p.ready = false;
          clearTimeout(p.timer);
          if (!n.stopped) p.restarts++;
        }
      }
      this.o.onChange?.();
      if (n.stopped || this.stopping) return;
      this.o.log?.warn({ node: n.node, code, signal }, 'node proxy exited; restarting');
      if (Date.now() - started > 10_000) n.backoff = 200;
      n.restarts++;
      n.timer = setTimeout(() => this.launch(n), n.backoff);
      n.timer.unref?.();
      n.backoff = Math.min(n.backoff * 2, 10_000);
    });
  }

  private onMessage(n: NodeProc, m: { type?: string; pod?: string; error?: string; report?: unknown }): void {
    if (m?.type === 'ready') {
      n.up = true;
      for (const key of n.pods) {
        const p = this.pods.get(key);
        if (p) this.attach(p);
      }
      return;
    }
    const p = m?.pod ? this.pods.get(m.pod) : undefined;
    if (!p || p.node !== n.node) return;
    if (m.type === 'flows') {
      this.o.onFlows?.(p.key, m.report);
    } else if (m.type === 'pod-ready') {
      p.ready = true;
      p.backoff = 200;
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
        this.o.log?.warn({ pod: p.key, netns: p.netns, err: String(err) }, 'cannot install the pod\'s redirect; retrying');
        p.restarts++;
        this.retry(p);
        return;
      }
    }
    const n = this.nodes.get(p.node);
    if (!n?.up || !n.child?.connected) return; // sent when the proxy says it is ready
    n.child.send({ type: 'pod', pod: p.key, netns: p.netns, configFile: this.configFile(p.key) });
  }

  private retry(p: PodState): void {
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.attach(p), p.backoff);
    p.timer.unref?.();
    p.backoff = Math.min(p.backoff * 2, 10_000);
  }

  private dropPod(p: PodState): void {
    clearTimeout(p.timer);
    this.pods.delete(p.key);
    const n = this.nodes.get(p.node);
    if (n) {
      n.pods.delete(p.key);
      if (n.child?.connected) n.child.send({ type: 'remove', pod: p.key });
    }
    if (p.redirected) removeRedirect(p.netns);
  }

  private stopNode(n: NodeProc): void {
    n.stopped = true;
    clearTimeout(n.timer);
    n.child?.kill('SIGTERM');
    this.nodes.delete(n.node);
  }

  push(namespace: string, pod: string, config: unknown): boolean {
    const p = this.pods.get(`${namespace}/${pod}`);
    const n = p ? this.nodes.get(p.node) : undefined;
    if (!p || !n?.up || !n.child?.connected) return false;
    n.child.send({ type: 'config', pod: p.key, netns: p.netns, config });
    return true;
  }

  status(): ProxyStatus[] {
    return [...this.pods.values()].map((p) => {
      const n = this.nodes.get(p.node);
      const pid = n?.child?.pid;
      return { pod: p.key, netns: p.netns, running: !!n?.child, ready: p.ready, ...(pid ? { pid } : {}), restarts: p.restarts };
    });
  }

  /** The node proxies' processes (for measurements): node name and pid. */
  processes(): { node: string; pid: number; pods: number }[] {
    return [...this.nodes.values()].flatMap((n) => (n.child?.pid ? [{ node: n.node, pid: n.child.pid, pods: n.pods.size }] : []));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const exits: Promise<void>[] = [];
    for (const p of [...this.pods.values()]) {
      clearTimeout(p.timer);
      if (p.redirected) removeRedirect(p.netns);
    }
    this.pods.clear();
    for (const n of [...this.nodes.values()]) {
      const child = n.child;
      if (child) exits.push(new Promise<void>((resolve) => child.once('exit', () => resolve())));
      this.stopNode(n);
    }
    await Promise.all(exits);
  }
}
