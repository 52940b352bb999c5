// The mesh CLI: `strait mesh describe|check|...`.
export { registerMeshCommand } from './mesh.js';
