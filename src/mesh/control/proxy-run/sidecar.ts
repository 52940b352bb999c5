// The sidecar proxy process, assembled (agents/sidecar/main.ts): one per injected pod, inside
// the pod's network namespace. The proxy of src/mesh/dataplane/proxy, its configuration
// sources (sidecar-sources.ts), the admin API (sidecar-admin.ts) and /metrics. On start it
// prints one JSON line to stdout: {"ready":true,"inbound":P,"outbound":P,"admin":...}.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { listenServer } from '../../../base/net/index.js';
import { createLogger } from '../../../base/log/index.js';
import { Lifecycle } from '../../../base/lifecycle/index.js';
import { serveMetrics } from '../../../platform/metrics/index.js';
import { Registry, registerProxyMetrics } from '../metrics/index.js';
import { originalDst, SidecarProxy } from '../../dataplane/proxy/index.js';
import type { SidecarSettings } from './sidecar-args.js';
import { sidecarAdmin } from './sidecar-admin.js';
import { controlSource, followFile, followIpc, postFlowsToControl } from './sidecar-sources.js';

const PERMISSIVE = { inbound: { defaultMode: 'PERMISSIVE' }, outbound: { default: { mode: 'DISABLE' } } };

async function listenProxy(proxy: SidecarProxy, s: SidecarSettings): Promise<{ inbound: number; outbound: number }> {
  const inbound = await proxy.listenInbound({ host: s.bind, port: s.inboundPort, app: s.app ?? 'original-dst' });
  const outbound = await proxy.listenOutbound({ host: s.bind, port: s.outboundPort, destination: s.outboundDestination ?? 'original-dst' });
  return { inbound: inbound.port, outbound: outbound.port };
}

export async function runSidecar(s: SidecarSettings): Promise<void> {
  const log = createLogger('sidecar');
  const life = new Lifecycle();
  const control = s.control ? controlSource(s.control, log) : undefined;
  const first = control ? await control.first : s.config ? (JSON.parse(readFileSync(s.config, 'utf8')) as unknown) : PERMISSIVE;
  const proxy = new SidecarProxy(first, { originalDst, flowLimit: s.flowLimit, onEvent: (ev) => log.debug(ev, 'connection') });
  if (control && s.control) {
    control.attach(proxy);
    life.onShutdown('control', () => control.stop());
    postFlowsToControl(proxy, s.control, s.flowReportMs, life, log);
  }
  const ports = await listenProxy(proxy, s);
  life.onShutdown('proxy', () => proxy.close());
  if (s.configIpc) followIpc(proxy, s.flowReportMs, life, log);
  else if (s.config) followFile(proxy, s.config, life, log);
  const reg = new Registry();
  registerProxyMetrics(reg, proxy.metrics);
  const adminServer = await listenServer(
    createServer(sidecarAdmin(proxy, reg, s.configIpc || control !== undefined)),
    typeof s.admin === 'string' ? { path: s.admin } : s.admin,
  );
  life.onShutdown('admin', () => adminServer.close());
  if (s.metrics) {
    // Prometheus only, reachable from outside the pod (Istio's 15020); excluded from the redirect
    const ms = await serveMetrics(reg, s.metrics);
    life.onShutdown('metrics', () => ms.close());
  }
  life.handleSignals(log);
  if (s.uid !== undefined) {
    // listeners are bound; from here on run as the proxy uid that the pod's nftables rules exempt
    process.setgid?.(s.uid);
    process.setuid?.(s.uid);
  }
  const a = adminServer.address;
  process.stdout.write(JSON.stringify({ ready: true, ...ports, admin: typeof a === 'string' ? a : a.port }) + '\n');
  // the world's process table waits for this when it started us with an IPC channel
  process.send?.({ type: 'ready', ...ports });
  log.info(ports, 'sidecar ready');
}
