// Prometheus gauges of each tunnel's health, read from the endpoint's peers at scrape time:
// the status with its reason, probe loss and the RTT statistics of the health window.
import { Gauge, type Registry } from 'prom-client';
import type { TunnelEndpoint } from '../../dataplane/tunnel/index.js';

export function registerTunnelHealthMetrics(registry: Registry, tunnel: TunnelEndpoint): void {
  new Gauge({
    name: 'strait_tunnel_status',
    help: 'Status of the tunnel to each remote cluster from its probes: 1 for the current status and reason (psk-mismatch, no-handshake-answer, loss 100%)',
    labelNames: ['cluster', 'status', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of tunnel.records()) this.set({ cluster: r.cluster, status: r.status, reason: r.reason }, 1);
    },
  });
  new Gauge({
    name: 'strait_tunnel_probe_loss_ratio',
    help: 'Share of the probes of the health window (the last 50) not answered in time',
    labelNames: ['cluster'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of tunnel.peers) {
        const l = p.health.loss(tunnel.monotonic());
        if (l) this.set({ cluster: p.clusterId }, l.lost / l.due);
      }
    },
  });
  new Gauge({
    name: 'strait_tunnel_probe_rtt_seconds',
    help: 'Round-trip time of the answered probes of the health window: last, min, avg, max, stddev',
    labelNames: ['cluster', 'stat'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of tunnel.peers) {
        const s = p.health.stats();
        if (!s) continue;
        for (const [stat, ms] of [
          ['last', s.lastMs],
          ['min', s.minMs],
          ['avg', s.avgMs],
          ['max', s.maxMs],
          ['stddev', s.stddevMs],
        ] as const)
          this.set({ cluster: p.clusterId, stat }, ms / 1000);
      }
    },
  });
}

/** The node agent's VXLAN leg to its active gateway (answered hellos), read at scrape time. */
export function registerAgentLegMetrics(registry: Registry, agent: { gatewayLeg(): { status: string; rttAvgMs: number | null } }): void {
  new Gauge({
    name: 'strait_agent_gateway_leg_up',
    help: "1 while the active gateway answers this node agent's VXLAN hellos (within 2 s), 0 when the leg is broken",
    registers: [registry],
    collect() {
      this.set(agent.gatewayLeg().status === 'broken' ? 0 : 1);
    },
  });
  new Gauge({
    name: 'strait_agent_gateway_leg_rtt_seconds',
    help: 'Average round-trip time of the answered VXLAN hellos (the last 20)',
    registers: [registry],
    collect() {
      this.reset();
      const r = agent.gatewayLeg().rttAvgMs;
      if (r !== null) this.set(r / 1000);
    },
  });
}
