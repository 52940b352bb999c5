export type {
  ApplyOptions, CoreEvent, KindRef, KubeObject, ListOptions, ObjectList, ObjectMeta,
  ResourceStore, Watch, WatchEvent, WatchEventType, WatchOptions,
} from './types.js';
