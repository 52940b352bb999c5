// A Kubernetes-mode HA gateway for the tests (data plane without TUN, loopback only):
// test/integration/gateway-ha-kubernetes.test.ts runs it in process and, to kill it -9,
// in a child process (test/fixtures/gateway-ha-member.ts).
import { startGateway, type Gateway } from '../../src/multicluster/dataplane/gateway/index.js';
import type { Handover } from '../../src/multicluster/dataplane/handover/index.js';

export interface HaTiming {
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
}

/**
 * Gateway `name` of cluster-a, in the election of the Lease through `kubeconfig`; `port`: its
 * liveness link's (ha.port); `tunnelPort` (default: any free one) with `handover`: a successor
 * waits for the tunnel port of the gateway it replaces.
 */
export function startHaTestGateway(
  name: string,
  kubeconfig: string,
  timing: HaTiming,
  port?: number,
  o: { tunnelPort?: number; handover?: Handover } = {},
): Promise<Gateway> {
  return startGateway(
    {
      clusterId: 'cluster-a',
      name,
      psk: 'k8s-ha-psk-0123456789abcdef',
      localSubnets: ['10.1.0.0/16'],
      tunnel: { listen: '127.0.0.1', port: o.tunnelPort ?? 0 },
      vxlan: { listen: '127.0.0.1', port: 0 },
      peers: [{ clusterId: 'cluster-b', endpoint: '127.0.0.1', port: 9, subnets: ['10.2.0.0/16'] }],
      ha: { ...(port !== undefined ? { port } : {}), kubernetes: { kubeconfig, ...timing } },
    },
    { noTun: true, ...(o.handover ? { handover: o.handover } : {}) },
  );
}
