// The `default` AppProject, created at start as Argo CD's API server creates it
// (server.go initializeDefaultProject): every repository, every destination, every
// cluster-scoped kind. An existing `default` project is never touched, whatever it says.
import { GROUPS, Kinds } from '../../platform/resources/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import type { AppProject } from './types.js';

export const DEFAULT_PROJECT = 'default';

/** Create the `default` project when the namespace has none; true when it was created. */
export async function ensureDefaultProject(store: ResourceStore, namespace: string): Promise<boolean> {
  if (await store.get<AppProject>(Kinds.AppProject, DEFAULT_PROJECT, namespace)) return false;
  await store.apply<AppProject>(
    {
      apiVersion: `${GROUPS.gitops}/v1alpha1`,
      kind: 'AppProject',
      metadata: { name: DEFAULT_PROJECT, namespace },
      spec: {
        sourceRepos: ['*'],
        destinations: [{ server: '*', namespace: '*' }],
        clusterResourceWhitelist: [{ group: '*', kind: '*' }],
      },
    },
    { fieldManager: 'strait-gitops' },
  );
  return true;
}
