// The mesh root kept on disk (mode 0600) so that every process of a world, and a restarted
// one, uses the same root. The first writer wins (exclusive create); others load it.
import { readFileSync, writeFileSync } from 'node:fs';
import { MeshCa } from './mesh-ca.js';

export function loadOrCreateCa(file: string, trustDomain = 'cluster.local'): MeshCa {
  const load = (): MeshCa => {
    const j = JSON.parse(readFileSync(file, 'utf8')) as { trustDomain: string; certPem: string; keyPem: string };
    return MeshCa.load(j.trustDomain, { certPem: j.certPem, keyPem: j.keyPem });
  };
  try {
    return load();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const ca = MeshCa.create({ trustDomain });
  try {
    writeFileSync(file, JSON.stringify({ trustDomain, ...ca.material() }), { mode: 0o600, flag: 'wx' });
    return ca;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return load();
    throw err;
  }
}
