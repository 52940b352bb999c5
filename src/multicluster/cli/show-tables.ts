// The `strait show` tables, with Submariner's column headers, from plain rows.
import { statusText, type ConnectionRow, type EndpointRow, type GatewayRow, type ClusterNetwork, type BrokerDescription } from '../control/clusterset/index.js';
import { formatTable } from '../../platform/cli-kit/index.js';

export const COLUMNS = {
  connections: ['GATEWAY', 'CLUSTER', 'REMOTE IP', 'NAT', 'CABLE DRIVER', 'SUBNETS', 'STATUS', 'RTT avg.'],
  endpoints: ['CLUSTER', 'ENDPOINT IP', 'PUBLIC IP', 'CABLE DRIVER', 'TYPE'],
  gateways: ['NODE', 'HA STATUS', 'SUMMARY'],
  versions: ['COMPONENT', 'REPOSITORY', 'CONFIGURED', 'RUNNING', 'ARCH'],
  brokers: ['NAMESPACE', 'NAME', 'COMPONENTS', 'GLOBALNET', 'GLOBALNET CIDR', 'DEFAULT GLOBALNET SIZE', 'DEFAULT DOMAINS'],
  clusters: ['CLUSTER ID', 'NETWORK PLUGIN', 'SERVICE CIDRS', 'CLUSTER CIDRS', 'CONNECTION'],
  exports: ['NAMESPACE', 'NAME', 'VALID', 'REASON', 'MESSAGE'],
  imports: ['NAMESPACE', 'NAME', 'TYPE', 'IP', 'PORTS', 'CLUSTERS'],
} as const;

/** A row of `strait show connections`, in COLUMNS.connections' order. */
export function connectionRow(r: ConnectionRow): string[] {
  return [r.gateway, r.cluster, r.remoteIP, r.nat, r.cableDriver, r.subnets.join(', '), statusText(r), r.rttAvg];
}

export interface VersionRow {
  component: string;
  repository: string;
  configured: string;
  running: string;
  arch: string;
}

/** A joined cluster (the broker's Cluster records; the cluster's own when the broker cannot be read). */
export interface ClusterRow extends ClusterNetwork {
  /** 'local' for the cluster shown, else its connection's status in the active gateway's records ('' when none) */
  connection: string;
}

/** A ServiceExport of the cluster, with its Valid condition. */
export interface ExportRow {
  namespace: string;
  name: string;
  valid: string;
  reason: string;
  message: string;
}

/** A ServiceImport in the cluster (what the cluster set exports to it). */
export interface ImportRow {
  namespace: string;
  name: string;
  type: string;
  ips: string[];
  ports: string[];
  clusters: string[];
}

export interface ShowData {
  cluster: string;
  connections: ConnectionRow[];
  endpoints: EndpointRow[];
  gateways: GatewayRow[];
  network?: ClusterNetwork;
  versions: VersionRow[];
  brokers: BrokerDescription[];
  clusters: ClusterRow[];
  exports: ExportRow[];
  imports: ImportRow[];
}

export type ShowWhat = 'connections' | 'endpoints' | 'gateways' | 'networks' | 'versions' | 'brokers' | 'clusters' | 'exports' | 'imports';
/** What `show all` prints: subctl's sections, in its order. */
export const SHOW_ALL: ShowWhat[] = ['brokers', 'networks', 'endpoints', 'connections', 'gateways', 'versions'];
/** Every section `show` has a subcommand for: subctl's, then the cluster set's clusters, exports and imports. */
export const SHOW_SECTIONS: ShowWhat[] = ['connections', 'endpoints', 'gateways', 'networks', 'versions', 'brokers', 'clusters', 'exports', 'imports'];
const TITLES: Record<ShowWhat, string> = {
  connections: 'Connections',
  endpoints: 'Endpoints',
  gateways: 'Gateways',
  networks: 'Network details',
  versions: 'Versions',
  brokers: 'Brokers',
  clusters: 'Clusters',
  exports: 'Service exports',
  imports: 'Service imports',
};

export function renderSection(what: ShowWhat, d: ShowData): string {
  const head = ` ✓ Showing ${TITLES[what]}\n`;
  const none = (thing: string) => `${head} ⚠ No ${thing} found\n`;
  switch (what) {
    case 'connections':
      if (d.connections.length === 0) return none('connections');
      return head + formatTable([...COLUMNS.connections], d.connections.map(connectionRow));
    case 'endpoints':
      if (d.endpoints.length === 0) return none('endpoints');
      return (
        head +
        formatTable(
          [...COLUMNS.endpoints],
          d.endpoints.map((r) => [r.cluster, r.endpointIP, r.publicIP, r.cableDriver, r.type]),
        )
      );
    case 'gateways':
      if (d.gateways.length === 0) return none('gateways');
      return (
        head +
        formatTable(
          [...COLUMNS.gateways],
          d.gateways.map((r) => [r.node, r.haStatus, r.summary]),
        )
      );
    case 'versions':
      return (
        head +
        formatTable(
          [...COLUMNS.versions],
          d.versions.map((r) => [r.component, r.repository, r.configured, r.running, r.arch]),
        )
      );
    case 'brokers':
      if (d.brokers.length === 0) return none('brokers');
      return (
        head +
        formatTable(
          [...COLUMNS.brokers],
          d.brokers.map((b) => [b.namespace, b.name, b.components.join(', '), b.globalnetEnabled ? 'yes' : 'no', '', '', b.customDomains.join(', ')]),
        )
      );
    case 'clusters':
      if (d.clusters.length === 0) return none('clusters (the cluster has not joined)');
      return (
        head +
        formatTable(
          [...COLUMNS.clusters],
          d.clusters.map((c) => [c.clusterId, c.networkPlugin, c.serviceCIDRs.join(', '), c.clusterCIDRs.join(', '), c.connection]),
        )
      );
    case 'exports':
      if (d.exports.length === 0) return none('service exports');
      return (
        head +
        formatTable(
          [...COLUMNS.exports],
          d.exports.map((e) => [e.namespace, e.name, e.valid, e.reason, e.message]),
        )
      );
    case 'imports':
      if (d.imports.length === 0) return none('service imports');
      return (
        head +
        formatTable(
          [...COLUMNS.imports],
          d.imports.map((i) => [i.namespace, i.name, i.type, i.ips.join(', '), i.ports.join(', '), i.clusters.join(', ')]),
        )
      );
    case 'networks': {
      if (!d.network) return none('network details (the cluster has not joined)');
      const n = d.network;
      return `${head}    Discovered network details via strait:\n        Network plugin:  ${n.networkPlugin}\n        Service CIDRs:   [${n.serviceCIDRs.join(' ')}]\n        Cluster CIDRs:   [${n.clusterCIDRs.join(' ')}]\n`;
    }
  }
}

export function renderShow(whats: ShowWhat[], d: ShowData): string {
  return `Cluster "${d.cluster}"\n` + whats.map((w) => renderSection(w, d)).join('\n');
}

/** The JSON shape of `-o json`: one key per section. */
export function showJson(whats: ShowWhat[], d: ShowData): Record<string, unknown> {
  const out: Record<string, unknown> = { cluster: d.cluster };
  for (const w of whats) out[w] = w === 'networks' ? (d.network ?? null) : d[w];
  return out;
}
