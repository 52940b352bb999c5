// PLACEHOLDER: the embedded store lands with the store work of issue 2.
import { E } from '../../../base/errors/index.js';
import type { ResourceStore } from '../types.js';

export interface EmbeddedStoreOptions {
  /** directory holding the store's database */
  dir: string;
}

export function openEmbeddedStore(_opts: EmbeddedStoreOptions): ResourceStore {
  throw E.internal('embedded store not built yet');
}
