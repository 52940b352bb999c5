// The node agent daemon, assembled: the data plane of src/multicluster/dataplane/node-agent
// with /metrics (run.ts, metrics.ts) and the process around it (process.ts), for
// agents/node-agent/main.ts.
export { runNodeAgentDaemon, withNodeName, type NodeAgentDaemon } from './run.js';
export { startNodeAgentProcess, type NodeAgentProcess } from './process.js';
export { agentRegistry } from './metrics.js';
