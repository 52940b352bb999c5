// The world file: its schema, the built-in default world, and loading from disk.
// Kept apart from src/world/supervisor so the CLI can validate a world without loading
// the supervisor's dependencies.
export {
  parseWorld,
  nodeCidrOf,
  DEFAULT_WORLD,
  IMAGES,
  type WorldFile,
  type WorldCluster,
  type WorldNode,
  type WorldNamespace,
  type WorldDeployment,
  type WorldPod,
  type WorldService,
  type WorldServicePort,
  type Image,
} from './config.js';
export { loadWorld } from './load.js';
