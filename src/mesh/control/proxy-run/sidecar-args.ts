// The sidecar's flags (agents/sidecar/main.ts): the help text and the parsed, checked settings.
import { parseArgs } from 'node:util';
import { E, hostPortArg, positiveIntArg } from '../../../base/errors/index.js';
import { DEFAULT_FLOW_LIMIT, MAX_FLOW_LIMIT, type Address } from '../../dataplane/proxy/index.js';

export const SIDECAR_HELP = `usage: strait-sidecar --config FILE [options]

The sidecar proxy of one injected pod, inside the pod's network namespace (docs/mesh.md).
Without --app / --outbound-destination it serves the connections redirected by the pod's
nftables rules and reads SO_ORIGINAL_DST.

  --config FILE                  configuration (JSON; re-read when it changes)
  --inbound-port N               inbound listener (default 15006)
  --outbound-port N              outbound listener (default 15001)
  --admin HOST:PORT              admin API: GET/PUT /config, /metrics, /ready, /flows (default 127.0.0.1:15000)
  --admin-socket PATH            the admin API on a unix socket instead
  --bind ADDR                    address of the listeners (default 0.0.0.0)
  --app HOST:PORT                forward inbound connections here (no redirect)
  --outbound-destination HOST:PORT   forward outbound connections here (no redirect)
  --uid N                        run as this uid once the listeners are bound
  --config-ipc                   read the file once, then take configurations over IPC
  --metrics HOST:PORT            Prometheus /metrics
  --flow-limit N                 inbound flows kept (default 256; the one seen longest ago is evicted)
  --flow-report-ms N             with --config-ipc or --control: send changed flows at most this often (default 2000)
  --control URL                  take the configuration from the control module's mesh configuration
                                 service (https://strait-control.strait-system.svc:15012)
  --control-token FILE           the pod's ServiceAccount token, audience "strait"
                                 (default /var/run/secrets/strait/token/token)
  --control-ca FILE              the mesh root the service's certificate chains to
                                 (default /var/run/secrets/strait/root/root-cert.pem)
  -h, --help                     this help
  -V, --version                  the version
`;

export interface SidecarSettings {
  /** --config: the configuration file (absent: a permissive default, or --control's) */
  config: string | undefined;
  configIpc: boolean;
  inboundPort: number;
  outboundPort: number;
  /** the admin API: a unix socket path or HOST:PORT */
  admin: string | Address;
  bind: string;
  app: Address | undefined;
  outboundDestination: Address | undefined;
  uid: number | undefined;
  metrics: Address | undefined;
  flowLimit: number;
  flowReportMs: number;
  /** --control: the mesh configuration service, with the pod's token and the mesh root */
  control: { url: string; tokenFile: string; caFile: string } | undefined;
}

export function parseSidecarArgs(argv: string[]): SidecarSettings {
  const { values } = parseArgs({
    args: argv.slice(2),
    options: {
      config: { type: 'string' },
      'inbound-port': { type: 'string', default: '15006' },
      'outbound-port': { type: 'string', default: '15001' },
      admin: { type: 'string', default: '127.0.0.1:15000' },
      'admin-socket': { type: 'string' },
      bind: { type: 'string', default: '0.0.0.0' },
      app: { type: 'string' },
      'outbound-destination': { type: 'string' },
      uid: { type: 'string' },
      'config-ipc': { type: 'boolean', default: false },
      metrics: { type: 'string' },
      'flow-limit': { type: 'string', default: String(DEFAULT_FLOW_LIMIT) },
      'flow-report-ms': { type: 'string', default: '2000' },
      control: { type: 'string' },
      'control-token': { type: 'string', default: '/var/run/secrets/strait/token/token' },
      'control-ca': { type: 'string', default: '/var/run/secrets/strait/root/root-cert.pem' },
    },
  });
  if (values.control !== undefined && (values.config !== undefined || values['config-ipc']))
    throw E.usage('--control takes the configuration from the control module: give no --config or --config-ipc with it');
  if (values.control !== undefined && !/^https:\/\/[^/]+$/.test(values.control))
    throw E.usage(`--control must be https://HOST:PORT, got ${JSON.stringify(values.control)}`, { value: values.control });
  return {
    config: values.config,
    configIpc: values['config-ipc'] === true,
    inboundPort: Number(values['inbound-port']),
    outboundPort: Number(values['outbound-port']),
    admin: values['admin-socket'] ?? (hostPortArg(values.admin, '--admin') as Address),
    bind: values.bind as string,
    app: hostPortArg(values.app, '--app'),
    outboundDestination: hostPortArg(values['outbound-destination'], '--outbound-destination'),
    uid: values.uid === undefined ? undefined : Number(values.uid),
    metrics: hostPortArg(values.metrics, '--metrics'),
    flowLimit: positiveIntArg(values['flow-limit'] as string, '--flow-limit', MAX_FLOW_LIMIT),
    flowReportMs: positiveIntArg(values['flow-report-ms'] as string, '--flow-report-ms', 3_600_000),
    control:
      values.control === undefined ? undefined : { url: values.control, tokenFile: values['control-token'] as string, caFile: values['control-ca'] as string },
  };
}
