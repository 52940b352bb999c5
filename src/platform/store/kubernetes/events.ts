// core/v1 Events, aggregated as kubectl describe shows them: one Event per involved
// object + reason, whose count and lastTimestamp grow on every repeat.
import { createHash } from 'node:crypto';
import type { CoreEvent, KubeObject } from '../types.js';

export function eventName(ev: CoreEvent): string {
  const o = ev.involvedObject;
  const h = createHash('sha256')
    .update(`${o.apiVersion}\n${o.kind}\n${o.namespace ?? ''}\n${o.name}\n${o.uid ?? ''}\n${ev.type}\n${ev.reason}`)
    .digest('hex');
  // names are DNS subdomains: <= 253 chars; keep the object's name readable
  return `${o.name.slice(0, 200)}.${h.slice(0, 16)}`;
}

export function newEvent(ev: CoreEvent, now: string): KubeObject {
  const namespace = ev.involvedObject.namespace ?? 'default';
  const component = ev.source ?? 'strait';
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(ev), namespace },
    involvedObject: { ...ev.involvedObject, namespace: ev.involvedObject.namespace },
    type: ev.type,
    reason: ev.reason,
    message: ev.message,
    source: { component },
    reportingComponent: component,
    reportingInstance: component,
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
  };
}
