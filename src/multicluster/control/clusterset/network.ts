// Network details of a cluster and the overlap rule between clusters.
import { E } from '../../../base/errors/index.js';
import { cidrsOverlap, parseCidr } from '../../../base/config/index.js';

export interface ClusterNetwork {
  clusterId: string;
  networkPlugin: string;
  serviceCIDRs: string[];
  clusterCIDRs: string[];
}

export interface CidrOverlap {
  cluster: string;
  cidr: string;
  otherCluster: string;
  otherCidr: string;
}

const cidrsOf = (n: ClusterNetwork) => [...n.clusterCIDRs, ...n.serviceCIDRs];

/** Every overlap between a candidate and the joined clusters, and within the candidate itself. */
export function findOverlaps(candidate: ClusterNetwork, joined: ClusterNetwork[]): CidrOverlap[] {
  const out: CidrOverlap[] = [];
  const own = cidrsOf(candidate);
  own.forEach((a, i) => {
    for (const b of own.slice(i + 1)) {
      if (cidrsOverlap(parseCidr(a), parseCidr(b))) out.push({ cluster: candidate.clusterId, cidr: a, otherCluster: candidate.clusterId, otherCidr: b });
    }
  });
  for (const other of joined) {
    if (other.clusterId === candidate.clusterId) continue;
    for (const a of own) {
      for (const b of cidrsOf(other)) {
        let overlap = false;
        try {
          overlap = cidrsOverlap(parseCidr(a), parseCidr(b));
        } catch {
          /* a bad record on the broker is diagnose's business */
        }
        if (overlap) out.push({ cluster: candidate.clusterId, cidr: a, otherCluster: other.clusterId, otherCidr: b });
      }
    }
  }
  return out;
}

/** Every overlapping pair among joined clusters (for diagnose). */
export function findAllOverlaps(joined: ClusterNetwork[]): CidrOverlap[] {
  const out: CidrOverlap[] = [];
  joined.forEach((c, i) => out.push(...findOverlaps(c, joined.slice(i + 1))));
  joined.forEach((c) => out.push(...findOverlaps(c, []).filter((o) => o.otherCluster === c.clusterId)));
  return dedupe(out);
}

function dedupe(list: CidrOverlap[]): CidrOverlap[] {
  const seen = new Set<string>();
  return list.filter((o) => {
    const k = [o.cluster, o.cidr, o.otherCluster, o.otherCidr].join('|');
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export function validateNetwork(n: ClusterNetwork): void {
  if (n.clusterCIDRs.length === 0) throw E.mcNetworkUnknown(n.clusterId, 'cluster CIDRs');
  if (n.serviceCIDRs.length === 0) throw E.mcNetworkUnknown(n.clusterId, 'service CIDRs');
  n.clusterCIDRs.forEach((c, i) => parseCidr(c, `clusterCIDRs[${i}]`));
  n.serviceCIDRs.forEach((c, i) => parseCidr(c, `serviceCIDRs[${i}]`));
}
