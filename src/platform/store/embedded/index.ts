// The embedded store: durable SQLite-backed ResourceStore held by one process of the
// local world and served to the others by ../api.
import type { ResourceStore } from '../types.js';
import { EmbeddedStore, type Admission, type EmbeddedStoreOptions } from './embedded-store.js';

export type { Admission, EmbeddedStoreOptions };

/** Open (or create) the store kept in `dir`. Only one process may hold a store dir at a time. */
export function openEmbeddedStore(opts: EmbeddedStoreOptions): ResourceStore {
  return new EmbeddedStore(opts);
}
