import { Kinds } from '../../src/platform/resources/index.js';
import type { ResourceStore } from '../../src/platform/store/index.js';

export interface SeenEvent {
  name: string;
  namespace?: string;
  kind: string;
  reason: string;
  type: string;
  message: string;
}

/** Every core/v1 Event the store holds, flattened for assertions. */
export async function listEvents(store: ResourceStore): Promise<SeenEvent[]> {
  const items = (await store.list(Kinds.Event)).items as unknown as {
    involvedObject: { name: string; namespace?: string; kind: string };
    reason: string;
    type: string;
    message: string;
  }[];
  return items.map((e) => ({
    name: e.involvedObject.name,
    ...(e.involvedObject.namespace ? { namespace: e.involvedObject.namespace } : {}),
    kind: e.involvedObject.kind,
    reason: e.reason,
    type: e.type,
    message: e.message,
  }));
}
