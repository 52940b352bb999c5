// The one ResourceStore interface. Two implementations: the embedded store (default,
// durable, served to the world's processes over a local authenticated API) and the
// Kubernetes store (@kubernetes/client-node). One conformance suite runs against both.
import type { KubeObject } from '../resources/index.js';

export type { KubeObject, ObjectMeta } from '../resources/index.js';

/** Which kind: apiVersion ("group/version" or "v1") and kind. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}

/** Just the kind of something that names one (a kind table entry, an object). */
export const kindRef = (k: { apiVersion: string; kind: string }): KindRef => ({ apiVersion: k.apiVersion, kind: k.kind });

export interface ListOptions {
  /** undefined = all namespaces (for namespaced kinds) */
  namespace?: string;
  /** Kubernetes label selector syntax: "a=b,c!=d,e in (x,y),!f,g" */
  labelSelector?: string;
}

export interface ObjectList<T extends KubeObject = KubeObject> {
  items: T[];
  resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions extends ListOptions {
  /** Deliver every change after this resourceVersion. Too old -> STRAIT_ERR_WATCH_EXPIRED. */
  resourceVersion?: string;
}

export interface Watch {
  /** Stop delivering events. */
  stop(): void;
  /** Resolves when the watch ends; rejects with STRAIT_ERR_WATCH_EXPIRED or a transport error. */
  readonly done: Promise<void>;
}

export interface ApplyOptions {
  /** who applies (recorded in managedFields by the Kubernetes store) */
  fieldManager?: string;
  /** dry run: validate only */
  dryRun?: boolean;
}

export interface CoreEvent {
  /** object the event is about */
  involvedObject: { apiVersion: string; kind: string; name: string; namespace?: string; uid?: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** component that reports, e.g. "strait-control" */
  source?: string;
}

export interface ResourceStore {
  get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined>;
  list<T extends KubeObject = KubeObject>(kind: KindRef, opts?: ListOptions): Promise<ObjectList<T>>;
  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch;
  /** Create, or merge into the existing object (JSON merge patch semantics for spec/metadata/data; status is kept). */
  apply<T extends KubeObject = KubeObject>(obj: T, opts?: ApplyOptions): Promise<T>;
  /** Replace the object; when metadata.resourceVersion is set it must match (STRAIT_ERR_CONFLICT). Status is kept. */
  update<T extends KubeObject = KubeObject>(obj: T): Promise<T>;
  /** Replace only .status; when metadata.resourceVersion is set it must match. */
  updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T>;
  /** true when something was deleted */
  delete(kind: KindRef, name: string, namespace?: string): Promise<boolean>;
  /** Record a core/v1 Event (aggregated by involved object + reason). */
  recordEvent(ev: CoreEvent): Promise<void>;
  close(): Promise<void>;
}
