// Where the sidecar's configuration comes from, and where its inbound flows go: the control
// module's mesh configuration service (Kubernetes mode: followed by long poll, flows POSTed to
// /v1/flows), the mesh agent over IPC (the local world: configurations pushed, flows sent
// back), or the --config file (re-read when it changes).
import { readFileSync } from 'node:fs';
import type { Lifecycle } from '../../../base/lifecycle/index.js';
import type { Logger } from '../../../base/log/index.js';
import { watchFile } from '../../../platform/fs/index.js';
import { followMeshConfig, meshFlowsPoster, type SidecarProxy } from '../../dataplane/proxy/index.js';
import type { SidecarSettings } from './sidecar-args.js';

type Control = NonNullable<SidecarSettings['control']>;

export interface ControlSource {
  /** the first configuration: nothing is bound before it came (the pod's redirect is in place, so connections are refused until then: fail closed) */
  first: Promise<unknown>;
  /** apply later configurations to the proxy */
  attach(proxy: SidecarProxy): void;
  stop(): void;
}

export function controlSource(c: Control, log: Logger): ControlSource {
  let resolveFirst: (config: unknown) => void = () => undefined;
  const first = new Promise<unknown>((r) => {
    resolveFirst = r;
  });
  let proxy: SidecarProxy | undefined;
  let lastError = '';
  const client = followMeshConfig({
    url: c.url,
    path: '/v1/sidecar',
    tokenFile: c.tokenFile,
    caFile: c.caFile,
    onConfig: (config, outside) => {
      lastError = '';
      if (!proxy) {
        log.info({ control: c.url, outside }, outside ? 'not in the mesh: passing traffic through' : 'configuration received');
        resolveFirst(config);
        return;
      }
      try {
        proxy.update(config);
        log.info({ updates: proxy.metrics.configUpdates }, 'configuration from the control module applied');
      } catch (err) {
        log.warn({ err: String(err) }, 'configuration from the control module rejected; keeping the previous one');
      }
    },
    onError: (message) => {
      if (message !== lastError) log.warn({ err: message }, 'mesh configuration: retrying');
      lastError = message;
    },
  });
  return {
    first,
    attach: (p) => {
      proxy = p;
    },
    stop: () => client.stop(),
  };
}

/** The flows seen, to the control module, which writes the pod's MeshTrafficObservation. */
export function postFlowsToControl(proxy: SidecarProxy, c: Control, everyMs: number, life: Lifecycle, log: Logger): void {
  let lastFlowError = '';
  const poster = meshFlowsPoster({
    url: c.url,
    tokenFile: c.tokenFile,
    caFile: c.caFile,
    onError: (message) => {
      if (message !== lastFlowError) log.warn({ err: message }, 'flow report not delivered; kept for the next one');
      lastFlowError = message;
    },
  });
  const flowTimer = setInterval(() => {
    const report = proxy.flows.report();
    if (report || poster.queued > 0) void poster.send(report);
  }, everyMs);
  flowTimer.unref();
  life.onShutdown('flows', () => clearInterval(flowTimer));
}

/**
 * The mesh agent configures the proxy over IPC and takes its flows (only what changed,
 * bounded). When it dies the sidecar goes too: its successor starts a fresh sidecar, which
 * needs the ports.
 */
export function followIpc(proxy: SidecarProxy, everyMs: number, life: Lifecycle, log: Logger): void {
  process.on('disconnect', () => {
    void life.shutdown(log).then(() => process.exit(0));
  });
  process.on('message', (m: { type?: string; config?: unknown }) => {
    if (m?.type !== 'config') return;
    try {
      proxy.update(m.config);
      process.send?.({ type: 'config-applied', updates: proxy.metrics.configUpdates });
    } catch (err) {
      log.warn({ err: String(err) }, 'pushed configuration rejected; keeping the previous one');
      process.send?.({ type: 'config-rejected', error: String((err as Error).message) });
    }
  });
  const flowTimer = setInterval(() => {
    const report = proxy.flows.report();
    if (report && process.connected) process.send?.({ type: 'flows', report });
  }, everyMs);
  flowTimer.unref();
  life.onShutdown('flows', () => clearInterval(flowTimer));
}

/** The --config file, applied again whenever it changes (also when equal: PUT /config may have changed the proxy since). */
export function followFile(proxy: SidecarProxy, file: string, life: Lifecycle, log: Logger): void {
  const watcher = watchFile(file, () => {
    try {
      proxy.update(JSON.parse(readFileSync(file, 'utf8')));
      log.info({ file }, 'configuration reloaded from file');
    } catch (err) {
      log.warn({ err: String(err), file }, 'configuration file rejected; keeping the previous one');
    }
  });
  life.onShutdown('watch', () => watcher.close());
}
