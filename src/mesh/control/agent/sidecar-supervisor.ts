// Starts and supervises the sidecar of every injected pod that has a network namespace
// (local world: annotation strait.dev/netns): installs the redirect rules in the pod's
// namespace, runs `node agents/sidecar/main.js --config <file> --uid <proxyUid>` there,
// restarts it with backoff when it dies, and stops it when the pod leaves the mesh.
// The sidecar's configuration file is the MeshController's; the supervisor never restarts
// a sidecar for a configuration change (the sidecar re-reads its file).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { SIDECAR_NODE_FLAGS, sidecarRedirectRules } from '../../dataplane/proxy/index.js';
import type { MeshView } from '../policy/index.js';
import { installRedirect, removeRedirect } from './redirect.js';

export const PROXY_UID = 1337;
export const INBOUND_PORT = 15006;
export const OUTBOUND_PORT = 15001;
export const ADMIN_PORT = 15000;
/** Prometheus metrics of the sidecar, on the pod's address (Istio's merged-metrics port) */
export const METRICS_PORT = 15020;

export interface SidecarSupervisorOptions {
  /** the MeshController's directory: <dir>/<ns>/<pod>.json; logs go beside: <ns>/<pod>.log */
  dir: string;
  /** compiled agents/sidecar/main.js */
  sidecarScript: string;
  nodeBinary?: string;
  proxyUid?: number;
  /** inbound ports that bypass the sidecar (the world's metrics port: scrapes are plaintext) */
  excludeInboundPorts?: number[];
  log?: Logger;
  /** a sidecar started, became ready, exited or was stopped (status() has the new state) */
  onChange?: () => void;
  /** a sidecar sent the flows it saw since its last report ({type:'flows', report} over IPC), for pod "ns/name" */
  onFlows?: (pod: string, report: unknown) => void;
  /** inbound flows each sidecar keeps (its --flow-limit; default the sidecar's, 256) */
  flowLimit?: number;
}

interface Running {
  key: string;
  netns: string;
  child?: ChildProcess;
  stopped: boolean;
  restarts: number;
  timer?: NodeJS.Timeout;
  backoff: number;
  ready?: boolean;
}

/**
 * The nft script for a pod: replaces strait's table if it exists. The proxy's own
 * connections are spared by its uid (a sidecar) or by the mark on its sockets (the
 * node-level proxy).
 */
export function podRedirectScript(own: { proxyUid?: number; proxyMark?: number } = { proxyUid: PROXY_UID }, excludeInboundPorts: number[] = []): string {
  const exclude = [...new Set([ADMIN_PORT, METRICS_PORT, ...excludeInboundPorts])];
  return `table ip strait_sidecar {}\ndelete table ip strait_sidecar\n${sidecarRedirectRules({ inboundPort: INBOUND_PORT, outboundPort: OUTBOUND_PORT, ...own, excludeInboundPorts: exclude })}`;
}

/** What the mesh agent needs of whatever runs the pods' proxies (a process per pod, or one per node). */
export interface ProxySupervisor {
  /** Make the served pods match the view: every injected pod with a namespace. */
  sync(view: MeshView): { started: string[]; stopped: string[] };
  /** Hand a new configuration to a pod's proxy; false when it has no running proxy (it reads its file when it starts). */
  push(namespace: string, pod: string, config: unknown): boolean;
  status(): ProxyStatus[];
  stop(): Promise<void>;
}

/** One pod's proxy: `pid` is the process serving it (its sidecar, or the node proxy). */
export interface ProxyStatus { pod: string; netns: string; running: boolean; ready: boolean; pid?: number; restarts: number }

export class SidecarSupervisor implements ProxySupervisor {
  private readonly running = new Map<string, Running>();

  constructor(private readonly o: SidecarSupervisorOptions) {}

  /** Make the running sidecars match the view: one per injected pod with a namespace. */
  sync(view: MeshView): { started: string[]; stopped: string[] } {
    const want = new Map<string, string>();
    for (const w of view.workloads) if (w.sidecar && w.netns) want.set(`${w.namespace}/${w.name}`, w.netns);
    const started: string[] = [];
    const stopped: string[] = [];
    for (const [key, r] of this.running) {
      if (want.get(key) === r.netns) continue;
      this.stopOne(r);
      this.running.delete(key);
      stopped.push(key);
    }
    if (stopped.length) this.o.onChange?.();
    for (const [key, netns] of want) {
      if (this.running.has(key)) continue;
      const r: Running = { key, netns, stopped: false, restarts: 0, backoff: 200 };
      this.running.set(key, r);
      this.launch(r);
      started.push(key);
    }
    return { started, stopped };
  }

  private launch(r: Running): void {
    if (r.stopped) return;
    const [ns, pod] = r.key.split('/') as [string, string];
    try {
      installRedirect(r.netns, podRedirectScript({ proxyUid: this.o.proxyUid ?? PROXY_UID }, this.o.excludeInboundPorts));
    } catch (err) {
      this.o.log?.warn({ pod: r.key, netns: r.netns, err: String(err) }, 'cannot install the sidecar redirect; retrying');
      this.retry(r);
      return;
    }
    mkdirSync(join(this.o.dir, ns), { recursive: true });
    const logFd = openSync(join(this.o.dir, ns, `${pod}.log`), 'a');
    const child = spawn('ip', ['netns', 'exec', r.netns, this.o.nodeBinary ?? process.execPath, ...SIDECAR_NODE_FLAGS, this.o.sidecarScript,
      '--config', join(this.o.dir, ns, `${pod}.json`), '--uid', String(this.o.proxyUid ?? PROXY_UID),
      '--inbound-port', String(INBOUND_PORT), '--outbound-port', String(OUTBOUND_PORT), '--admin', `127.0.0.1:${ADMIN_PORT}`, '--config-ipc', '--metrics', `0.0.0.0:${METRICS_PORT}`,
      ...(this.o.flowLimit !== undefined ? ['--flow-limit', String(this.o.flowLimit)] : [])],
    { stdio: ['ignore', 'ignore', logFd, 'ipc'], env: { ...process.env, STRAIT_PROC: `sidecar ${r.key}` } });
    child.on('message', (m: { type?: string; report?: unknown }) => {
      if (m?.type === 'ready') {
        r.ready = true;
        this.o.onChange?.();
      } else if (m?.type === 'flows' && !r.stopped) {
        this.o.onFlows?.(r.key, m.report);
      }
    });
    child.on('error', () => {});
    closeSync(logFd);
    r.child = child;
    r.ready = false;
    const started = Date.now();
    child.once('exit', (code, signal) => {
      r.child = undefined;
      r.ready = false;
      this.o.onChange?.();
      if (r.stopped) return;
      this.o.log?.warn({ pod: r.key, code, signal }, 'sidecar exited; restarting');
      if (Date.now() - started > 10_000) r.backoff = 200;
      this.retry(r);
    });
  }

  private retry(r: Running): void {
    r.restarts++;
    r.timer = setTimeout(() => this.launch(r), r.backoff);
    r.timer.unref?.();
    r.backoff = Math.min(r.backoff * 2, 10_000);
  }

  private stopOne(r: Running): void {
    r.stopped = true;
    clearTimeout(r.timer);
    r.child?.kill('SIGTERM');
    removeRedirect(r.netns);
  }

  /**
   * Hand a new configuration to a running sidecar over its IPC channel (no file access
   * needed after it dropped to the proxy uid). False when the pod has no running sidecar;
   * a sidecar started later reads the file first.
   */
  push(namespace: string, pod: string, config: unknown): boolean {
    const r = this.running.get(`${namespace}/${pod}`);
    if (!r?.child?.connected) return false;
    r.child.send({ type: 'config', config });
    return true;
  }

  status(): ProxyStatus[] {
    return [...this.running.values()].map((r) => ({ pod: r.key, netns: r.netns, running: !!r.child, ready: !!r.ready, ...(r.child?.pid ? { pid: r.child.pid } : {}), restarts: r.restarts }));
  }

  async stop(): Promise<void> {
    const exits: Promise<void>[] = [];
    for (const r of this.running.values()) {
      const child = r.child;
      if (child) exits.push(new Promise<void>((resolve) => child.once('exit', () => resolve())));
      this.stopOne(r);
    }
    this.running.clear();
    await Promise.all(exits);
  }
}
