// The injected init container of a pod with a sidecar (Kubernetes mode; the webhook adds it):
// installs the pod's nftables redirect (inbound TCP to the proxy's inbound port, outbound
// TCP to its outbound port, except the proxy's own uid, loopback, the proxy's admin and
// metrics ports), as istio-init does, then exits. Runs as root with NET_ADMIN and NET_RAW only.
//   node dist/agents/sidecar/init.js [--inbound-port 15006] [--outbound-port 15001] [--proxy-uid 1337]
//     [--exclude-inbound-ports 15020,...] [--dry-run]
// --dry-run prints the nft script instead of loading it.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { E } from '../../../base/errors/index.js';
import { sidecarRedirectRules } from '../../dataplane/proxy/index.js';
import { positiveIntArg } from '../../../base/errors/index.js';

export const SIDECAR_INIT_HELP = `usage: strait-sidecar-init [options]

The init container of a pod with a strait sidecar (docs/kubernetes.md): redirects the pod's
TCP traffic to the proxy (nftables table ip strait_sidecar in the pod's network namespace).

  --inbound-port N             the proxy's inbound listener (default 15006)
  --outbound-port N            the proxy's outbound listener (default 15001)
  --proxy-uid N                the proxy's uid: its own connections are not redirected (default 1337)
  --exclude-inbound-ports LIST inbound ports that reach the pod directly (comma separated;
                               15000 and 15020, the proxy's admin and metrics, always do)
  --dry-run                    print the nft script, load nothing
  -h, --help                   this help
  -V, --version                the version
`;

/** The proxy's admin and metrics ports: never redirected (docs/mesh.md). */
const ALWAYS_EXCLUDED = [15000, 15020];

function initScript(o: { inboundPort: number; outboundPort: number; proxyUid: number; excludeInboundPorts: number[] }): string {
  const exclude = [...new Set([...ALWAYS_EXCLUDED, ...o.excludeInboundPorts])];
  // replaces strait's table when it exists (a restarted init container)
  return `table ip strait_sidecar {}\ndelete table ip strait_sidecar\n${sidecarRedirectRules({ inboundPort: o.inboundPort, outboundPort: o.outboundPort, proxyUid: o.proxyUid, excludeInboundPorts: exclude })}`;
}

function portList(v: string): number[] {
  if (v.trim() === '') return [];
  return v.split(',').map((p) => positiveIntArg(p.trim(), '--exclude-inbound-ports', 65535));
}

export async function runSidecarInit(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'inbound-port': { type: 'string', default: '15006' },
      'outbound-port': { type: 'string', default: '15001' },
      'proxy-uid': { type: 'string', default: '1337' },
      'exclude-inbound-ports': { type: 'string', default: '' },
      'dry-run': { type: 'boolean', default: false },
    },
  });
  const script = initScript({
    inboundPort: positiveIntArg(values['inbound-port'] as string, '--inbound-port', 65535),
    outboundPort: positiveIntArg(values['outbound-port'] as string, '--outbound-port', 65535),
    proxyUid: positiveIntArg(values['proxy-uid'] as string, '--proxy-uid', 0x7fffffff),
    excludeInboundPorts: portList(values['exclude-inbound-ports'] as string),
  });
  if (values['dry-run']) {
    process.stdout.write(script);
    return;
  }
  try {
    execFileSync('nft', ['-f', '-'], { input: script, stdio: ['pipe', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as { status?: number | null; stderr?: Buffer; message?: string };
    throw E.systemTool('nft -f -', e.status ?? 'spawn', String(e.stderr ?? e.message ?? err).trim());
  }
  process.stdout.write(JSON.stringify({ msg: 'sidecar redirect installed', table: 'ip strait_sidecar' }) + '\n');
}
