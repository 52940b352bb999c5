import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore, type ResourceStore } from '../../src/platform/store/index.js';

/** A fresh embedded store in a temp dir; close() also removes the dir. */
export function tempEmbeddedStore(): ResourceStore {
  const dir = mkdtempSync(join(tmpdir(), 'strait-store-'));
  const store = openEmbeddedStore({ dir });
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  };
  return store;
}
