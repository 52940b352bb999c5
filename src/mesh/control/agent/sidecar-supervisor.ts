// Starts and supervises the sidecar of every injected pod that has a network namespace
// (local world: annotation strait.dev/netns): installs the redirect rules in the pod's
// namespace, runs `node agents/sidecar/main.js --config <file> --uid <proxyUid>` there,
// restarts it with backoff when it dies (src/platform/process), and stops it when the pod
// leaves the mesh.
// The sidecar's configuration file is the MeshController's; the supervisor never restarts
// a sidecar for a configuration change (the sidecar re-reads its file).
import { join } from 'node:path';
import type { Logger } from 'pino';
import { SupervisedProcess } from '../../../platform/process/index.js';
import { SIDECAR_NODE_FLAGS, sidecarRedirectRules } from '../../dataplane/proxy/index.js';
import type { MeshView } from '../policy/index.js';
import { installRedirect, removeRedirect } from './redirect.js';

export const PROXY_UID = 1337;
export const INBOUND_PORT = 15006;
export const OUTBOUND_PORT = 15001;
export const ADMIN_PORT = 15000;
/** Prometheus metrics of the sidecar, on the pod's address (Istio's merged-metrics port) */
export const METRICS_PORT = 15020;

/** What both kinds of proxy supervisor are told (a sidecar per pod, or a proxy per node). */
export interface ProxySupervisorOptions {
  /** the MeshController's directory: <dir>/<ns>/<pod>.json (each pod's configuration) */
  dir: string;
  nodeBinary?: string;
  /** inbound ports that bypass the proxy (the world's metrics port: scrapes are plaintext) */
  excludeInboundPorts?: number[];
  log?: Logger;
  /** a proxy started, became ready for a pod, exited or was stopped (status() has the new state) */
  onChange?: () => void;
  /** a proxy sent the flows one pod saw since its last report (over IPC), for pod "ns/name" */
  onFlows?: (pod: string, report: unknown) => void;
  /** inbound flows kept per pod (the proxy's --flow-limit; default the proxy's, 256) */
  flowLimit?: number;
}

/** Sidecars log beside their configuration: <dir>/<ns>/<pod>.log. */
export interface SidecarSupervisorOptions extends ProxySupervisorOptions {
  /** compiled agents/sidecar/main.js */
  sidecarScript: string;
  proxyUid?: number;
}

interface Running {
  key: string;
  netns: string;
  proc: SupervisedProcess;
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
export interface ProxyStatus {
  pod: string;
  netns: string;
  running: boolean;
  ready: boolean;
  pid?: number;
  restarts: number;
}

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
      void this.stopOne(r);
      this.running.delete(key);
      stopped.push(key);
    }
    if (stopped.length) this.o.onChange?.();
    for (const [key, netns] of want) {
      if (this.running.has(key)) continue;
      this.running.set(key, { key, netns, proc: this.supervise(key, netns).start() });
      started.push(key);
    }
    return { started, stopped };
  }

  /** The pod's sidecar: the redirect installed before each start (a failure retried with the backoff). */
  private supervise(key: string, netns: string): SupervisedProcess {
    const [ns, pod] = key.split('/') as [string, string];
    const uid = this.o.proxyUid ?? PROXY_UID;
    const proc = new SupervisedProcess({
      command: [
        'ip',
        'netns',
        'exec',
        netns,
        this.o.nodeBinary ?? process.execPath,
        ...SIDECAR_NODE_FLAGS,
        this.o.sidecarScript,
        '--config',
        join(this.o.dir, ns, `${pod}.json`),
        '--uid',
        String(uid),
        '--inbound-port',
        String(INBOUND_PORT),
        '--outbound-port',
        String(OUTBOUND_PORT),
        '--admin',
        `127.0.0.1:${ADMIN_PORT}`,
        '--config-ipc',
        '--metrics',
        `0.0.0.0:${METRICS_PORT}`,
        ...(this.o.flowLimit !== undefined ? ['--flow-limit', String(this.o.flowLimit)] : []),
      ],
      env: { ...process.env, STRAIT_PROC: `sidecar ${key}` },
      logFile: join(this.o.dir, ns, `${pod}.log`),
      stdout: 'ignore',
      ready: 'ipc',
      prepare: () => installRedirect(netns, podRedirectScript({ proxyUid: uid }, this.o.excludeInboundPorts)),
      onPrepareError: (err) => this.o.log?.warn({ pod: key, netns, err: String(err) }, 'cannot install the sidecar redirect; retrying'),
      onReady: () => this.o.onChange?.(),
      onMessage: (m) => {
        const msg = m as { type?: string; report?: unknown } | undefined;
        // a stopped sidecar's last report is not the pod's any more
        if (msg?.type === 'flows' && this.running.get(key)?.proc === proc) this.o.onFlows?.(key, msg.report);
      },
      onExit: ({ code, signal, restartInMs }) => {
        this.o.onChange?.();
        if (restartInMs !== undefined) this.o.log?.warn({ pod: key, code, signal }, 'sidecar exited; restarting');
      },
    });
    return proc;
  }

  private stopOne(r: Running): Promise<void> {
    const exited = r.proc.stop();
    removeRedirect(r.netns);
    return exited;
  }

  /**
   * Hand a new configuration to a running sidecar over its IPC channel (no file access
   * needed after it dropped to the proxy uid). False when the pod has no running sidecar;
   * a sidecar started later reads the file first.
   */
  push(namespace: string, pod: string, config: unknown): boolean {
    return this.running.get(`${namespace}/${pod}`)?.proc.send({ type: 'config', config }) ?? false;
  }

  status(): ProxyStatus[] {
    return [...this.running.values()].map(({ key, netns, proc }) => ({
      pod: key,
      netns,
      running: proc.running,
      ready: proc.ready,
      ...(proc.pid ? { pid: proc.pid } : {}),
      restarts: proc.restarts,
    }));
  }

  async stop(): Promise<void> {
    const exits = [...this.running.values()].map((r) => this.stopOne(r));
    this.running.clear();
    await Promise.all(exits);
  }
}
