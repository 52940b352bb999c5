// Status conditions of a ServiceExport: Valid (docs/multicluster.md), Ready and Conflict (MCS API).
// lastTransitionTime changes only when the status of a condition changes.
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export const REASON = {
  awaitingSync: 'AwaitingSync',
  exported: 'ServiceExported',
  serviceNotFound: 'ServiceNotFound',
  unsupportedType: 'UnsupportedServiceType',
  noConflict: 'NoConflicts',
} as const;

export const MESSAGE = {
  awaitingSync: 'Awaiting sync of the ServiceImport to the broker',
  synced: 'Service was successfully synced to the broker',
} as const;

/** Set one condition in a copy of the list; returns the new list and whether anything changed. */
export function setCondition(list: Condition[], next: Omit<Condition, 'lastTransitionTime'>, now: string): { list: Condition[]; changed: boolean } {
  const out = list.map((c) => ({ ...c }));
  const i = out.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? out[i] : undefined;
  if (prev && prev.status === next.status && prev.reason === next.reason && prev.message === next.message) return { list: out, changed: false };
  const cond: Condition = { ...next, lastTransitionTime: prev && prev.status === next.status ? prev.lastTransitionTime : now };
  if (i >= 0) out[i] = cond;
  else out.push(cond);
  return { list: out, changed: true };
}

export function getCondition(list: Condition[] | undefined, type: string): Condition | undefined {
  return list?.find((c) => c.type === type);
}
