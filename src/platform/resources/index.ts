export { Kinds, type KindInfo, type KindName } from './kinds.js';
export { GROUPS, GPG_KEYS_CM, SSH_SIGNERS_CM, INJECT_KEY } from './groups.js';
export { allKinds, findKind, kindOf } from './lookup.js';
export { checkStoredObject, failClosedStandIn, generatedValidator, validateObject, type ManifestOrigin } from './validate.js';
export { parseManifests, type LoadedManifest } from './load.js';
export { MAX_YAML_ALIASES, yamlDocuments } from './yaml.js';
export { SCHEMAS, MAX_OBSERVED_FLOWS, type Schema } from './schemas/index.js';
export { describeYamlError, placeYamlError, type YamlErrorPlace } from './yaml-error.js';
export type { KubeObject, ObjectMeta } from './object.js';
