// Codes owned by multicluster: broker, join, export, clusterset DNS, tunnel.
import { def, q } from '../define.js';

export const multicluster = {
  // --- broker, join, export ---
  mcBrokerInfoEncoding: def('STRAIT_ERR_MC_BROKER_INFO_ENCODING', 'usage', (source: string, reason: string) => ({
    message: `broker info ${q(source)} is not base64 text: ${reason}; pass the broker-info.subm file that 'strait deploy-broker' wrote, unchanged`,
    detail: { source, reason },
  })),
  mcBrokerInfoJson: def('STRAIT_ERR_MC_BROKER_INFO_JSON', 'usage', (source: string, reason: string) => ({
    message: `broker info ${q(source)} does not hold a JSON object: ${reason}; deploy the broker again to get a new file`,
    detail: { source, reason },
  })),
  mcBrokerInfoField: def('STRAIT_ERR_MC_BROKER_INFO_FIELD', 'usage', (source: string, field: string, rule: string, value?: unknown) => ({
    message: `broker info ${q(source)}: field ${field} ${rule}${value === undefined ? '' : ` (got ${q(value)})`}`,
    detail: { source, field, rule, value },
  })),
  mcBrokerInfoPsk: def('STRAIT_ERR_MC_BROKER_INFO_PSK', 'usage', (source: string, bytes: number, min: number) => ({
    message: `broker info ${q(source)}: the IPsec PSK has ${bytes} bytes, at least ${min} are required; deploy the broker again to generate a new PSK`,
    detail: { source, bytes, min },
  })),
  mcBrokerInfoTampered: def('STRAIT_ERR_MC_BROKER_INFO_TAMPERED', 'denied', (source: string) => ({
    message: `broker info ${q(source)} failed its integrity check (the content was changed after 'strait deploy-broker' wrote it); use the original file`,
    detail: { source },
  })),
  mcBrokerInfoStale: def('STRAIT_ERR_MC_BROKER_INFO_STALE', 'unauthenticated', (source: string, what: string) => ({
    message: `broker info ${q(source)} does not match the deployed broker (${what}); the broker was redeployed, use the broker-info.subm of the latest 'strait deploy-broker'`,
    detail: { source, what },
  })),
  mcBrokerPskUnknown: def('STRAIT_ERR_MC_BROKER_PSK_UNKNOWN', 'conflict', (clusters: string[]) => ({
    message:
      `the broker already has joined clusters (${clusters.join(', ')}) and does not hold the PSK they share (deployed by an older strait); ` +
      `deploying it again would leave the set with two PSKs. Keep using the broker-info.subm they joined with, or run 'strait deploy-broker --new-psk' ` +
      `and then join every cluster with the new file: ${clusters.map((c) => `strait join broker-info.subm --clusterid ${c}`).join('; ')}`,
    detail: { clusters },
  })),
  mcBrokerNotDeployed: def('STRAIT_ERR_MC_BROKER_NOT_DEPLOYED', 'notFound', (where: string) => ({
    message: `no broker is deployed at ${q(where)}; run 'strait deploy-broker' first`,
    detail: { where },
  })),
  mcBrokerUrl: def('STRAIT_ERR_MC_BROKER_URL', 'usage', (url: string, reason: string) => ({
    message: `broker URL ${q(url)} cannot be used: ${reason}`,
    detail: { url, reason },
  })),
  mcClusterIdInvalid: def('STRAIT_ERR_MC_CLUSTER_ID_INVALID', 'usage', (clusterId: string) => ({
    message: `cluster ID ${q(clusterId)} is not a DNS label (lower case letters, digits and '-', at most 63, starting and ending with a letter or digit); pick another --clusterid`,
    detail: { clusterId },
  })),
  mcCidrOverlap: def('STRAIT_ERR_MC_CIDR_OVERLAP', 'conflict', (cluster: string, cidr: string, otherCluster: string, otherCidr: string) => ({
    message: `cluster ${q(cluster)} cannot join: its CIDR ${q(cidr)} overlaps CIDR ${q(otherCidr)} of joined cluster ${q(otherCluster)}; change one of the CIDRs (or enable a global-IP scheme) and join again`,
    detail: { cluster, cidr, otherCluster, otherCidr },
  })),
  mcNetworkUnknown: def('STRAIT_ERR_MC_NETWORK_UNKNOWN', 'usage', (cluster: string, what: string) => ({
    message: `cannot discover the ${what} of cluster ${q(cluster)}; pass it with the matching join flag (--clustercidr, --servicecidr)`,
    detail: { cluster, what },
  })),
  mcNotJoined: def('STRAIT_ERR_MC_NOT_JOINED', 'notFound', (cluster: string) => ({
    message: `cluster ${q(cluster)} has not joined a broker; run 'strait join broker-info.subm --clusterid ${cluster}' first`,
    detail: { cluster },
  })),
  mcExportUnsupported: def('STRAIT_ERR_MC_EXPORT_UNSUPPORTED', 'usage', (namespace: string, name: string, type: string) => ({
    message: `service ${q(`${namespace}/${name}`)} has type ${q(type)}, which cannot be exported; export a ClusterIP or headless service`,
    detail: { namespace, name, type },
  })),
  mcDiagnoseFailed: def('STRAIT_ERR_MC_DIAGNOSE_FAILED', 'failed', (failed: string[]) => ({
    message: `diagnose found ${failed.length} problem(s): ${failed.join('; ')}`,
    detail: { failed },
  })),
  mcVerifyFailed: def('STRAIT_ERR_MC_VERIFY_FAILED', 'failed', (failed: string[]) => ({
    message: `verify: ${failed.length} check(s) failed: ${failed.join('; ')}; run 'strait diagnose' and 'strait show all' for the cause`,
    detail: { failed },
  })),

  // --- tunnel, VXLAN and the gateway/agent data plane ---
  tunnelMalformed: def('STRAIT_ERR_TUNNEL_MALFORMED', 'usage', (what: string, offset: number, rule: string) => ({
    message: `malformed ${what} at byte ${offset}: ${rule}; the packet is dropped`,
    detail: { what, offset, rule },
  })),
  tunnelAuth: def('STRAIT_ERR_TUNNEL_AUTH', 'unauthenticated', (peer: string, reason: string) => ({
    message: `tunnel authentication with ${q(peer)} failed: ${reason}; check that both gateways use the PSK from the same broker-info file`,
    detail: { peer, reason },
  })),
  tunnelHandshakeTimeout: def('STRAIT_ERR_TUNNEL_HANDSHAKE_TIMEOUT', 'unavailable', (peer: string, attempts: number) => ({
    message: `no valid handshake response from ${q(peer)} after ${attempts} attempts: the peer is down, unreachable on UDP, or uses a different PSK; check the broker-info file and the endpoint`,
    detail: { peer, attempts },
  })),
  tunnelPeerUnknown: def('STRAIT_ERR_TUNNEL_PEER_UNKNOWN', 'notFound', (clusterId: string, from: string) => ({
    message: `handshake from ${q(from)} claims cluster ${q(clusterId)}, which is not a configured peer; add it to the gateway's peers`,
    detail: { clusterId, from },
  })),
  tunnelDevice: def('STRAIT_ERR_TUNNEL_DEVICE', 'failed', (name: string, reason: string) => ({
    message: `cannot open TUN device ${q(name)}: ${reason}; it needs CAP_NET_ADMIN and /dev/net/tun`,
    detail: { name, reason },
  })),
};
