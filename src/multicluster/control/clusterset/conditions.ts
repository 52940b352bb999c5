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
  /** Ready=False of an export not synced while its cluster's agent cannot reach the broker (and its Warning Event) */
  brokerUnreachable: 'BrokerUnreachable',
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

/**
 * The conditions of one object while a reconcile sets them, and their writes in order: a
 * write waits for the one before it, and writes the conditions as they were when it was
 * asked for, whatever is set while it waits.
 */
export class ConditionWriter {
  private dirty = false;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    public list: Condition[],
    private readonly now: () => string,
    /** called at every write, changed or not, once the writes before it are done */
    private readonly onCurrent: (list: Condition[]) => void,
    /** writes a changed list */
    private readonly persist: (list: Condition[]) => Promise<void>,
  ) {}

  set(c: Omit<Condition, 'lastTransitionTime'>): void {
    const r = setCondition(this.list, c, this.now());
    this.list = r.list;
    this.dirty ||= r.changed;
  }

  get(type: string): Condition | undefined {
    return getCondition(this.list, type);
  }

  async write(): Promise<void> {
    const snapshot = this.list;
    const changed = this.dirty;
    this.dirty = false;
    await this.pending;
    this.onCurrent(snapshot);
    if (!changed) return;
    await this.persist(snapshot);
  }

  /** Write beside the caller's work; every later write waits for this one. */
  writeBehind(): void {
    this.pending = this.write();
    this.pending.catch(() => undefined);
  }
}
