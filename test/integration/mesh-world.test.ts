// The mesh traffic table in the local world, injected pods with a sidecar process each.
import { meshWorldSuite } from './mesh-world-suite.js';

meshWorldSuite('sidecar');
