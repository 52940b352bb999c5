// `strait diagnose`: what blocks a join or breaks the cluster set, one check per line.
import { isStraitError } from '../../../base/errors/index.js';
import type { ResourceStore } from '../../../platform/store/index.js';
import { checkBrokerInfoCurrent, describeBroker } from './broker.js';
import type { BrokerInfo } from './broker-info.js';
import { type Condition } from './conditions.js';
import { listJoinedClusters } from './join.js';
import { BROKER_NAMESPACE, DNS_LABEL } from './names.js';
import { type ClusterNetwork, findAllOverlaps, findOverlaps, validateNetwork } from './network.js';
import { readEndpoint, readGateway, statusText, type ConnectionRow } from './records.js';
import { K } from './store-util.js';

/** 'skip': a check that does not apply where the command runs (its message says why) */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface DiagnoseCheck {
  check: string;
  status: CheckStatus;
  message: string;
}

export interface DiagnoseOptions {
  broker: ResourceStore;
  /** the cluster to look at (its exports and gateway) */
  local?: ResourceStore;
  localClusterId?: string;
  /** a cluster that wants to join: its broker info and network */
  candidate?: { info?: BrokerInfo; source?: string; network: ClusterNetwork };
}

type AddCheck = (check: string, status: CheckStatus, message: string) => void;

export async function diagnose(opts: DiagnoseOptions): Promise<DiagnoseCheck[]> {
  const out: DiagnoseCheck[] = [];
  const add: AddCheck = (check, status, message) => out.push({ check, status, message });
  try {
    const b = await describeBroker(opts.broker);
    add('broker', 'ok', `broker deployed on ${b.cluster} with components ${b.components.join(', ')}`);
  } catch (err) {
    if (!isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE')) {
      add('broker', 'fail', isStraitError(err) ? err.message : String(err));
      return out;
    }
    // cut off: what this cluster's own records say still counts (the data plane does not need the broker)
    add(
      'broker',
      'fail',
      `the broker is unreachable (${err.message}): tunnels and the services imported so far keep working; new and changed exports wait for it (strait show exports)`,
    );
    if (opts.local) {
      await checkGateways(opts.local, add);
      await checkExports(opts.local, add);
    }
    return out;
  }
  const joined = await listJoinedClusters(opts.broker);
  add('clusters', 'ok', `${joined.length} cluster(s) joined: ${joined.map((c) => c.clusterId).join(', ') || '(none)'}`);
  const overlaps = findAllOverlaps(joined);
  if (overlaps.length === 0) add('cidr-overlap', 'ok', 'no CIDRs overlap between joined clusters');
  for (const o of overlaps) {
    add('cidr-overlap', 'fail', `CIDR ${o.cidr} of cluster ${o.cluster} overlaps CIDR ${o.otherCidr} of cluster ${o.otherCluster}`);
  }
  if (opts.candidate) await checkCandidate(opts.broker, opts.candidate, joined, add);

  const endpoints = (await opts.broker.list(K.Endpoint, { namespace: BROKER_NAMESPACE })).items;
  for (const c of joined) {
    const has = endpoints.some((e) => readEndpoint(e, '').cluster === c.clusterId);
    add(
      'endpoint',
      has ? 'ok' : 'warn',
      has
        ? `cluster ${c.clusterId} has published its gateway endpoint`
        : `cluster ${c.clusterId} has no Endpoint record on the broker; is its gateway daemon running?`,
    );
  }

  if (opts.local) {
    await checkGateways(opts.local, add);
    await checkExports(opts.local, add);
  }
  return out;
}

/** A cluster that wants to join: its ID, its CIDRs against the joined clusters', its broker info. */
async function checkCandidate(
  broker: ResourceStore,
  c: NonNullable<DiagnoseOptions['candidate']>,
  joined: Awaited<ReturnType<typeof listJoinedClusters>>,
  add: AddCheck,
): Promise<void> {
  if (!DNS_LABEL.test(c.network.clusterId)) add('join', 'fail', `cluster ID ${JSON.stringify(c.network.clusterId)} is not a DNS label`);
  try {
    validateNetwork(c.network);
    const o = findOverlaps(c.network, joined);
    if (o.length === 0) add('join-cidrs', 'ok', `the CIDRs of ${c.network.clusterId} overlap no joined cluster`);
    for (const x of o)
      add('join-cidrs', 'fail', `cluster ${x.cluster} cannot join: its CIDR ${x.cidr} overlaps CIDR ${x.otherCidr} of cluster ${x.otherCluster}`);
  } catch (err) {
    add('join-cidrs', 'fail', isStraitError(err) ? err.message : String(err));
  }
  if (c.info) {
    try {
      await checkBrokerInfoCurrent(broker, c.info, c.source ?? 'broker-info.subm');
      add('broker-info', 'ok', 'broker info matches the deployed broker');
    } catch (err) {
      add('broker-info', 'fail', isStraitError(err) ? err.message : String(err));
    }
  }
}

/** This cluster's Gateway records: exactly one active, its node agents' VXLAN legs, its connections. */
async function checkGateways(local: ResourceStore, add: AddCheck): Promise<void> {
  const gws = (await local.list(K.Gateway, {})).items;
  if (gws.length === 0) add('gateway', 'warn', 'no Gateway record in this cluster; is the gateway daemon running?');
  const active = gws
    .map((g) => readGateway(g).gateway)
    .filter((g) => g.haStatus === 'active')
    .map((g) => g.node)
    .sort();
  if (active.length === 1) add('gateway', 'ok', `gateway ${active[0]} is active`);
  else if (active.length > 1) add('gateway', 'fail', `${active.length} gateways say they are active (${active.join(', ')}); exactly one may be`);
  else if (gws.length > 0) add('gateway', 'warn', `no gateway is active (${gws.length} Gateway record(s)); is the active gateway's lease held?`);
  for (const g of gws) {
    const { gateway, connections } = readGateway(g);
    // the VXLAN legs of the node agents, as the active gateway hears their hellos
    for (const leg of gateway.nodeLegs ?? []) {
      if (leg.status === 'ok') add('node-leg', 'ok', `gateway ${gateway.node}: the node agent at ${leg.address} answers over VXLAN`);
      else
        add(
          'node-leg',
          'fail',
          `gateway ${gateway.node}: broken VXLAN leg to the node at ${leg.address} (${leg.message}): pods of that node cannot reach other clusters; is its node agent running (strait status), and does UDP 4800 reach the gateway?`,
        );
    }
    for (const conn of connections) {
      const who = `gateway ${gateway.node}: connection to ${conn.cluster || '?'}`;
      if (conn.status !== 'connected')
        add('connection', 'fail', `${who} is ${statusText(conn)}${conn.statusMessage ? ` (${conn.statusMessage})` : ''}; ${connectionFix(conn)}`);
      else if (conn.loss !== '' && conn.loss !== '0%')
        add('connection', 'warn', `${who} is connected but loses ${conn.loss} of its probes (RTT avg. ${conn.rttAvg || 'unknown'}): the path drops packets`);
      else add('connection', 'ok', `${who} is connected${conn.rttAvg ? `, RTT avg. ${conn.rttAvg}` : ''}${conn.loss ? `, loss ${conn.loss}` : ''}`);
    }
  }
}

/** This cluster's ServiceExports whose conditions say invalid or in conflict. */
async function checkExports(local: ResourceStore, add: AddCheck): Promise<void> {
  const exports = (await local.list(K.ServiceExport, {})).items;
  for (const se of exports) {
    const conds = ((se.status ?? {}) as { conditions?: Condition[] }).conditions ?? [];
    const who = `${se.metadata.namespace}/${se.metadata.name}`;
    for (const c of conds) {
      if ((c.type === 'Valid' && c.status !== 'True') || (c.type === 'Conflict' && c.status === 'True')) {
        add('service-export', 'warn', `ServiceExport ${who}: ${c.type}=${c.status} (${c.reason}): ${c.message}`);
      }
    }
  }
}

/** What to do about a connection that is not connected, by its reason. */
export function connectionFix(c: Pick<ConnectionRow, 'cluster' | 'reason' | 'remoteIP'>): string {
  switch (c.reason) {
    case 'psk-mismatch':
      return `${c.cluster} joined with a different broker-info: join both clusters with the same file (strait join broker-info.subm --clusterid <each cluster>)`;
    case 'loss 100%':
      return `no probe comes back through the tunnel from ${c.remoteIP}: check the remote gateway (strait show gateways --cluster ${c.cluster}) and the path for UDP 4500 between the gateways`;
    case 'peer fenced':
      return `${c.cluster}'s gateway lost its HA lease (it could not renew it, or another gateway took it) and sends nothing: see its lease and gateways (strait show gateways --cluster ${c.cluster}); the gateway holding the lease connects next`;
    case 'no-handshake-answer':
      return `the remote gateway at ${c.remoteIP} does not answer handshakes: is it running (strait status), and does UDP 4500 reach it?`;
    default:
      return "wait for the handshake, or see the gateway's log (strait logs <cluster>.gateway)";
  }
}
