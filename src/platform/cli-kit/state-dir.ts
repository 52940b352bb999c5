// Where a local world keeps its state: --state-dir, else $STRAIT_STATE_DIR, else
// $XDG_STATE_HOME/strait (~/.local/state/strait). Files inside:
//   world.json   the running world: pid, clusters, addresses, ingress URLs (strait status)
//   store.sock   the local store API (unix socket, reachable from every namespace)
//   store.token  the bearer token of that API (mode 0600)
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function resolveStateDir(opt?: string): string {
  if (opt) return resolve(opt);
  const env = process.env['STRAIT_STATE_DIR'];
  if (env) return resolve(env);
  const xdg = process.env['XDG_STATE_HOME'] ?? join(homedir(), '.local', 'state');
  return join(xdg, 'strait');
}

export const stateFiles = (stateDir: string) => ({
  world: join(stateDir, 'world.json'),
  storeSocket: join(stateDir, 'store.sock'),
  storeToken: join(stateDir, 'store.token'),
});
