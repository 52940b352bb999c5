// Observed traffic in the local world with the sidecar dataplane (test/integration/mesh-flows-world-suite.ts).
import { meshFlowsSuite } from './mesh-flows-world-suite.js';

meshFlowsSuite('sidecar');
