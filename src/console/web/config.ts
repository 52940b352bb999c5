// What the server put into the page: the apiVersion of each kind (groups are configurable
// there), the home cluster (where the control module runs) and its namespace.
export interface ConsoleConfig {
  kinds: Record<string, string>;
  home: string;
  namespace: string;
}

export function readConfig(): ConsoleConfig {
  const el = document.getElementById('console-config');
  const parsed = el?.textContent ? (JSON.parse(el.textContent) as Partial<ConsoleConfig>) : {};
  return { kinds: parsed.kinds ?? {}, home: parsed.home ?? '', namespace: parsed.namespace ?? 'argocd' };
}

export const CONFIG = readConfig();

export const kindRef = (kind: string): { apiVersion: string; kind: string } => ({ apiVersion: CONFIG.kinds[kind] ?? 'v1', kind });
