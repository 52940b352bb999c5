// The shape of every object strait stores: a Kubernetes-shaped object with its metadata (the
// store's interface, src/platform/store/types.ts, is written in it).
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  generateName?: string;
}

/** A Kubernetes-shaped object. */
export interface KubeObject<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: Status;
  // ConfigMap/Secret data, Event fields, ...
  [field: string]: unknown;
}
