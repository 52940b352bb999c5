// Prometheus metrics of the node agent, read from plain counters at scrape time (JS's
// counts plus the native pump's, summed by counters.totals()).
import { Counter, Registry } from 'prom-client';
import type { NodeAgent } from '../../dataplane/node-agent/index.js';
import { registerAgentLegMetrics } from '../health/index.js';

export function agentRegistry(a: NodeAgent): Registry {
  const registry = new Registry();
  const counters = a.counters;
  new Counter({
    name: 'strait_agent_vxlan_packets_total',
    help: 'VXLAN frames to (tx) and from (rx) the gateway',
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      const c = counters.totals();
      this.reset();
      this.inc({ direction: 'tx' }, c.txPackets);
      this.inc({ direction: 'rx' }, c.rxPackets);
    },
  });
  new Counter({
    name: 'strait_agent_vxlan_bytes_total',
    help: 'Inner bytes to (tx) and from (rx) the gateway',
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      const c = counters.totals();
      this.reset();
      this.inc({ direction: 'tx' }, c.txBytes);
      this.inc({ direction: 'rx' }, c.rxBytes);
    },
  });
  new Counter({
    name: 'strait_agent_drops_total',
    help: 'Packets dropped by reason',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const c = counters.totals();
      this.reset();
      for (const reason of Object.keys(c.drops) as (keyof typeof c.drops)[]) this.inc({ reason }, c.drops[reason]);
    },
  });
  new Counter({
    name: 'strait_agent_gateway_switches_total',
    help: 'HA: times an announcement moved this agent to another active gateway',
    registers: [registry],
    collect() {
      const c = counters.totals();
      this.reset();
      this.inc(c.gatewaySwitches);
    },
  });
  new Counter({
    name: 'strait_agent_pump_send_failures_total',
    help: 'Native pump: VXLAN sends that failed after waiting out a full socket buffer',
    registers: [registry],
    collect() {
      const c = counters.totals();
      this.reset();
      this.inc(c.pumpSendErrors);
    },
  });
  registerAgentLegMetrics(registry, a);
  return registry;
}
