// Observed traffic: the inbound flows each sidecar saw (client → pod port, mTLS or plaintext,
// the peer's identity, accepted or reset), kept as MeshTrafficObservation objects by the mesh
// agent, and what a STRICT policy would reset among them (docs/mesh.md, Observed traffic).
export {
  OBSERVATION_KIND,
  type FlowRow,
  type MeshTrafficObservation,
  type ObservationSpec,
  type ObservationStatus,
  type ObservationSummary,
  type ObservedClient,
  type ObservedFlow,
} from './types.js';
export { modeOnPort, strictWouldReset } from './strict.js';
export { PodFlows, readReportEntry, type HeldFlow } from './pod-flows.js';
export { ObservationWriter, observationOf, type ObservationWriterOptions } from './writer.js';
export { flowRows, listObservedFlows, type FlowFilter } from './list.js';
