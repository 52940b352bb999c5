// The mesh traffic table in the local world with `meshDataplane: node`: one node-level
// proxy per node serves every injected pod (docs/mesh-node.md).
import { meshWorldSuite } from './mesh-world-suite.js';

meshWorldSuite('node');
