// One OpenAPI-v3 structural schema per kind, keyed by Kind.
import type { KindName } from '../kinds.js';
import type { Schema } from './builders.js';
import { coreSchemas } from './core.js';
import { gitopsSchemas } from './gitops.js';
import { meshSchemas } from './mesh.js';

export { MAX_OBSERVED_FLOWS } from './mesh.js';
import { multiclusterSchemas } from './multicluster.js';

export type { Schema };
export const SCHEMAS: Record<KindName, Schema> = {
  ...coreSchemas,
  ...gitopsSchemas,
  ...meshSchemas,
  ...multiclusterSchemas,
} as Record<KindName, Schema>;
export { resourceAjv, schemaDigest } from './compile.js';
