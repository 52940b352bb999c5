// What a STRICT policy would break: an observed flow that reached the application in
// plaintext (or as TLS without a mesh certificate, which STRICT terminates and refuses) on a
// port whose effective mode is not STRICT now. Flows already reset and mTLS flows are not.
import type { EffectiveMode, InboundResolution } from '../policy/index.js';
import type { FlowOutcome, FlowTls } from '../../dataplane/proxy/index.js';

/** The effective mode on one port: its port-level mode, else the workload's. */
export function modeOnPort(inbound: InboundResolution, port: number): EffectiveMode {
  return inbound.ports.find((p) => p.port === port)?.mode ?? inbound.mode;
}

export function strictWouldReset(inbound: InboundResolution | undefined, flow: { port: number; tls: FlowTls; outcome: FlowOutcome }): boolean {
  if (!inbound || flow.outcome !== 'accepted') return false;
  if (flow.tls !== 'plaintext' && flow.tls !== 'tls-passthrough') return false;
  return modeOnPort(inbound, flow.port) !== 'STRICT';
}
