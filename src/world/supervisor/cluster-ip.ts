// ClusterIP allocation for one cluster of the world, done where Kubernetes does it: at
// the write of the Service, inside the store's write step (an embedded-store admission),
// so that the check "this address is free" and the write that takes it are one step.
//   - a Service without spec.clusterIP gets the next free address of the service CIDR;
//     an update that leaves it out keeps the one it had;
//   - a given address must be inside the service CIDR and held by no other Service:
//     `spec.clusterIP: provided IP is already allocated` (STRAIT_ERR_OBJECT_INVALID), as
//     the API server answers;
//   - headless ("None") and ExternalName Services hold no address.
import { cidrContains, intToIpv4, ipv4ToInt, parseCidr } from '../../base/config/index.js';
import { E } from '../../base/errors/index.js';
import type { Admission, KubeObject } from '../../platform/store/index.js';

type Spec = { type?: string; clusterIP?: string; clusterIPs?: string[] };

const specOf = (o: KubeObject | undefined): Spec => (o?.spec && typeof o.spec === 'object' ? (o.spec as Spec) : {});
const nameOf = (o: KubeObject): string => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;

/** The admission that keeps ClusterIPs unique and inside `serviceCIDR`. */
export function clusterIpAdmission(serviceCIDR: string): Admission {
  const cidr = parseCidr(serviceCIDR, 'serviceCIDR');
  const size = 2 ** (32 - cidr.prefix);
  return (next, old, peers) => {
    if (next.kind !== 'Service') return;
    const spec = specOf(next);
    if (spec.type === 'ExternalName') return;
    const had = specOf(old).clusterIP;
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && had) {
      next.spec = { ...spec, clusterIP: had, clusterIPs: [had] };
      return;
    }
    if (spec.clusterIP === 'None') return;
    const me = nameOf(next);
    const held = new Map<string, string>();
    for (const p of peers({ apiVersion: 'v1', kind: 'Service' })) {
      const ip = specOf(p).clusterIP;
      if (ip && ip !== 'None' && nameOf(p) !== me) held.set(ip, nameOf(p));
    }
    if (spec.clusterIP === undefined || spec.clusterIP === '') {
      // .1 (gateway) and .10 (kube-dns) are kept; the first free from .11 up
      for (let i = 11; i < size - 1; i++) {
        const ip = intToIpv4((cidr.network + i) >>> 0);
        if (!held.has(ip)) {
          next.spec = { ...spec, clusterIP: ip, clusterIPs: [ip] };
          return;
        }
      }
      throw E.objectInvalid(
        'Service',
        me,
        'spec.clusterIP',
        `no address is free in the service CIDR ${serviceCIDR}; delete a Service or give this one clusterIP: None`,
      );
    }
    const n = ipv4ToInt(spec.clusterIP);
    if (n === undefined || !cidrContains(cidr, n)) {
      throw E.objectInvalid('Service', me, 'spec.clusterIP', `provided IP is not in the valid range; the range of valid IPs is ${serviceCIDR}`, spec.clusterIP);
    }
    const holder = held.get(spec.clusterIP);
    if (holder)
      throw E.objectInvalid(
        'Service',
        me,
        'spec.clusterIP',
        `provided IP is already allocated (to Service ${holder}); leave clusterIP out to get a free one`,
        spec.clusterIP,
      );
    // one IPv4 family: clusterIPs follows clusterIP
    next.spec = { ...spec, clusterIPs: [spec.clusterIP] };
  };
}
