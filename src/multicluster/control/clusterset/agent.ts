// The per-cluster multicluster controllers, run by the control module of each joined cluster:
//   export: ServiceExport + Service (local) -> this cluster's EndpointSlice and the
//           aggregated ServiceImport on the broker; ServiceExport conditions.
//   import: broker EndpointSlices -> ServiceImport + EndpointSlices (MCS labels) locally.
// A broker that is down leaves local imports and statuses as they are; the informers
// re-list and the queue retries with backoff, so everything converges when it returns.
// While the broker is known to be cut off (broker-reach.ts), an export not synced yet says
// so in its conditions (AwaitingSync, "the broker is unreachable") and an Event, and nothing
// waits on the broker; when it answers again every export and import is reconciled.
// Cost per change: one export or import reconcile reads its own service's slices from
// caches indexed by service (the broker's slices, this cluster's imported slices), never a
// list of every slice: an export costs the same whatever the number of other exports.
// Nothing runs while nothing changes (no periodic resync unless resyncMs asks for one):
// the pods behind a headless export wake it through a Pod watch.
import { createHash } from 'node:crypto';
import { type Clock, systemClock } from '../../../base/clock/index.js';
import { isStraitError } from '../../../base/errors/index.js';
import { type Logger, silentLogger } from '../../../base/log/index.js';
import { Informer, KeyQueue } from '../../../platform/controller/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { BrokerReach, type BrokerReachState } from './broker-reach.js';
import { aggregate, type Aggregate, canon, type ClusterExport, exportFromSlice, type ServicePort, type ServiceProps, type SliceEndpoint } from './aggregate.js';
import { type Condition, ConditionWriter, getCondition, MESSAGE, REASON } from './conditions.js';
import {
  acceptedPorts,
  ANN_DERIVED_SERVICE,
  clustersetIPsOf,
  derivedPorts,
  derivedService,
  derivedServiceCurrent,
  derivedServiceName,
  LABEL_APP_MANAGED_BY,
  LABEL_K8S_SERVICE_NAME,
} from './derived-service.js';
import { LABEL_MIRROR, mirrorCurrent, mirrorSlice } from './endpointslice-mirror.js';
import { processLanes, type WorkLanes } from './lanes.js';
import { connectedClusters } from './records.js';
import type { MulticlusterMetrics } from './metrics.js';
import {
  ANN_EXPORT_CREATED,
  ANN_SERVICE_PROPS,
  ANN_SERVICE_TYPE,
  ANN_SYNCED_AT,
  BROKER_NAMESPACE,
  brokerImportName,
  brokerSliceName,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SERVICE_NAMESPACE,
  LABEL_SOURCE_CLUSTER,
  localSliceName,
  MANAGED_BY,
} from './names.js';
import { ensureNamespace, K } from './store-util.js';

export interface AgentOptions {
  clusterId: string;
  local: ResourceStore;
  broker: ResourceStore;
  clock?: Clock;
  log?: Logger;
  metrics?: MulticlusterMetrics;
  /** full resync period (ms; default none): every export and import reconciled again (each costs store reads) */
  resyncMs?: number;
  /** foreground/follow-up lanes shared with the other agents of this process (default: processLanes) */
  lanes?: WorkLanes;
  /**
   * a clusterset IP per ClusterSetIP import, through a derived Service the cluster allocates
   * and routes (derived-service.ts; default true); false: none, and clusterset DNS answers an
   * exporting cluster's ClusterIP (Submariner Lighthouse's way)
   */
  clustersetIP?: boolean;
}

const ANN_CONTENT_HASH = 'strait.io/content-hash';

interface ServiceLike extends KubeObject {
  spec?: {
    type?: string;
    clusterIP?: string;
    selector?: Record<string, string>;
    ports?: { name?: string; protocol?: string; port: number; targetPort?: number | string }[];
    sessionAffinity?: string;
    sessionAffinityConfig?: unknown;
    internalTrafficPolicy?: string;
    trafficDistribution?: string;
    ipFamilies?: string[];
  };
}

/** What a ServiceImport takes from an export besides type and ports (aggregate.ts ServiceProps). */
function servicePropsOf(se: KubeObject, svc: ServiceLike): ServiceProps {
  const s = svc.spec ?? {};
  const es = (se.spec ?? {}) as { exportedLabels?: Record<string, string>; exportedAnnotations?: Record<string, string> };
  return {
    sessionAffinity: s.sessionAffinity ?? 'None',
    ...(s.sessionAffinityConfig ? { sessionAffinityConfig: s.sessionAffinityConfig } : {}),
    ...(s.internalTrafficPolicy ? { internalTrafficPolicy: s.internalTrafficPolicy } : {}),
    ...(s.trafficDistribution ? { trafficDistribution: s.trafficDistribution } : {}),
    ipFamilies: s.ipFamilies && s.ipFamilies.length > 0 ? s.ipFamilies : ['IPv4'],
    ...(es.exportedLabels && Object.keys(es.exportedLabels).length > 0 ? { exportedLabels: es.exportedLabels } : {}),
    ...(es.exportedAnnotations && Object.keys(es.exportedAnnotations).length > 0 ? { exportedAnnotations: es.exportedAnnotations } : {}),
  };
}

/** The ServiceImport's spec from the aggregate (the broker's; a cluster's adds its clusterset IPs: localImportSpec). */
function importSpec(agg: Aggregate): Record<string, unknown> {
  const p = agg.props;
  return {
    type: agg.type,
    ports: agg.ports,
    ...(p.ipFamilies ? { ipFamilies: p.ipFamilies } : {}),
    ...(p.sessionAffinity ? { sessionAffinity: p.sessionAffinity } : {}),
    ...(p.sessionAffinityConfig ? { sessionAffinityConfig: p.sessionAffinityConfig } : {}),
    ...(p.internalTrafficPolicy ? { internalTrafficPolicy: p.internalTrafficPolicy } : {}),
    ...(p.trafficDistribution ? { trafficDistribution: p.trafficDistribution } : {}),
  };
}

/** A cluster's ServiceImport spec: the aggregate's, and the clusterset IPs of its derived Service with their families. */
function localImportSpec(agg: Aggregate, vip: { ips: string[]; ipFamilies: string[] }): Record<string, unknown> {
  const spec = importSpec(agg);
  if (vip.ips.length > 0) {
    spec['ipFamilies'] = vip.ipFamilies;
    spec['ips'] = vip.ips;
  }
  return spec;
}

/** The ServiceImport's labels and annotations: the winning export's exported ones, and strait's own label. */
function importMeta(
  agg: Aggregate,
  own: Record<string, string>,
  ownAnnotations: Record<string, string> = {},
): { labels: Record<string, string>; annotations?: Record<string, string> } {
  const ann = { ...(agg.props.exportedAnnotations ?? {}), ...ownAnnotations };
  return { labels: { ...(agg.props.exportedLabels ?? {}), ...own }, ...(Object.keys(ann).length > 0 ? { annotations: ann } : {}) };
}

const sameMeta = (o: KubeObject | undefined, m: { labels: Record<string, string>; annotations?: Record<string, string> }): boolean =>
  JSON.stringify(Object.entries(o?.metadata.labels ?? {}).sort()) === JSON.stringify(Object.entries(m.labels).sort()) &&
  JSON.stringify(Object.entries(o?.metadata.annotations ?? {}).sort()) === JSON.stringify(Object.entries(m.annotations ?? {}).sort());

/**
 * What this cluster keeps of `cluster`'s export: its endpoints and type, and its ports; for a
 * ClusterSetIP import with a clusterset IP (`derived`: the derived Service's name), only the
 * ports the import took from it, and the label that puts the slice behind the derived Service.
 */
interface ImportedContent {
  e: ClusterExport;
  ports: ServicePort[];
  derived?: string;
}

/** The hash of an imported slice's content, kept on it: an unchanged export is not written again. */
function exportContentHash(c: ImportedContent): string {
  return createHash('sha256')
    .update(JSON.stringify({ e: c.e.endpoints, p: c.ports, t: c.e.type, ...(c.derived ? { d: c.derived } : {}) }))
    .digest('hex')
    .slice(0, 16);
}

/** The EndpointSlice this cluster keeps for `cluster`'s export of ns/name. */
function importedSlice(ns: string, name: string, sliceName: string, cluster: string, c: ImportedContent, hash: string): KubeObject {
  return {
    apiVersion: K.EndpointSlice.apiVersion,
    kind: 'EndpointSlice',
    metadata: {
      name: sliceName,
      namespace: ns,
      labels: {
        [LABEL_SERVICE_NAME]: name,
        [LABEL_SOURCE_CLUSTER]: cluster,
        [LABEL_MANAGED_BY]: MANAGED_BY,
        ...(c.derived ? { [LABEL_K8S_SERVICE_NAME]: c.derived } : {}),
      },
      annotations: { [ANN_CONTENT_HASH]: hash, [ANN_SERVICE_TYPE]: c.e.type },
    },
    addressType: 'IPv4',
    endpoints: c.e.endpoints,
    ports: c.ports,
  };
}

/** An object's `namespace/name` key, the agent's queue and cache key. */
const objectKey = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

const splitKey = (key: string): [string, string] => {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
};

export class MulticlusterAgent {
  readonly clusterId: string;
  private readonly local: ResourceStore;
  private readonly broker: ResourceStore;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics: MulticlusterMetrics | undefined;
  private readonly exports = new KeyQueue((k) => this.reconcileExport(k), { onError: (k, e) => this.onError('export', k, e) });
  private readonly imports = new KeyQueue((k) => this.runImport(k), { onError: (k, e) => this.onError('import', k, e) });
  private readonly lanes: WorkLanes;
  /** queued imports woken by another cluster's slice: foreground work until they have run */
  private readonly foregroundImports = new Set<string>();
  /** imports of this cluster's own slices, waiting for the foreground work to finish */
  private readonly deferredImports = new Set<Promise<void>>();
  private informers: Informer[] = [];
  /** ns/name of every ServiceExport seen in this cluster */
  private knownExports = new Set<string>();
  /** ns/name of every service seen on the broker or imported here */
  private knownImports = new Set<string>();
  /** conditions of this cluster's exports, for metrics */
  private conditions = new Map<string, Condition[]>();
  /** when a change was first noticed, per key, for the sync latency */
  private noticed = new Map<string, number>();
  private resyncTimer: { cancel(): void } | undefined;
  /** the broker's exported EndpointSlices by name, as its informer last saw them (no re-list per reconcile) */
  private readonly brokerSlices = new SliceIndex(
    (o) => `${o.metadata.labels?.[LABEL_SERVICE_NAMESPACE] ?? ''}/${o.metadata.labels?.[LABEL_SERVICE_NAME] ?? ''}`,
  );
  private brokerSliceInformer: Informer | undefined;
  /** the slices this agent imported into its cluster, by name (ns/name) and service */
  private readonly importedSlices = new SliceIndex((o) => `${o.metadata.namespace ?? ''}/${o.metadata.labels?.[LABEL_SERVICE_NAME] ?? ''}`);
  private importedSliceInformer: Informer | undefined;
  /** the derived Services of this cluster's imports, by the import's ns/name, as the Service informer last saw them */
  private readonly derivedServices = new Map<string, KubeObject>();
  private serviceInformer: Informer | undefined;
  private readonly clustersetIP: boolean;
  /** exports of headless services (ns/name): their endpoints follow the pods */
  private readonly headless = new Set<string>();
  /**
   * this cluster's own EndpointSlices (the Services', never strait's), by service (ns/name),
   * then by slice name: a ClusterSetIP export's ClusterIP is ready while one of them lists a
   * ready endpoint (backendsReady), and they are mirrored behind the clusterset IP here
   * (endpointslice-mirror.ts)
   */
  private readonly serviceSlices = new Map<string, Map<string, KubeObject>>();
  private serviceSliceInformer: Informer | undefined;
  /** clusters reachable from here as the active gateway's records say (undefined: no record, all count as reachable) */
  private connected: Set<string> | undefined;
  /** `connected` as text, to act only when it changes */
  private connectedKey = '*';
  /** key@resourceVersion of our own status writes, whose watch events need no reconcile */
  private ownWrites = new Set<string>();
  private stopped = false;
  /** whether the broker answers (a probe and every broker call) */
  private readonly reach: BrokerReach;
  /** exports (ns/name) that were told the broker is unreachable: an Event when they sync */
  private readonly waitedOnBroker = new Set<string>();
  /** the broker was cut off since this agent started: its return reconciles everything */
  private brokerWasCut = false;

  constructor(private readonly opts: AgentOptions) {
    this.clusterId = opts.clusterId;
    this.local = opts.local;
    this.broker = opts.broker;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger();
    this.metrics = opts.metrics;
    this.lanes = opts.lanes ?? processLanes;
    this.clustersetIP = opts.clustersetIP ?? true;
    this.reach = new BrokerReach(
      () => this.broker.get(K.Cluster, this.clusterId, BROKER_NAMESPACE),
      (st) => this.onBrokerReach(st),
      { clock: this.clock },
    );
    this.metrics?.addSource(this);
  }

  start(): void {
    this.reach.start();
    this.watchExportInputs();
    this.watchBrokerSlices();
    this.watchImportedSlices();
    this.watchGateways();
    // services imported here before a restart
    void this.local
      .list(K.ServiceImport, {})
      .then((l) => {
        for (const o of l.items) {
          this.knownImports.add(objectKey(o));
          this.enqueueImport(objectKey(o));
        }
      })
      .catch(() => undefined);
    this.scheduleResync();
  }

  /** An informer, started and kept: every listed object goes to onKey as 'LIST', every event with its type. */
  private watch(
    store: ResourceStore,
    kind: typeof K.ServiceExport,
    ns: string | undefined,
    sel: string | undefined,
    onKey: (o: KubeObject, type: string) => void,
    onList?: (items: KubeObject[]) => void,
  ): void {
    const i = new Informer(
      store,
      kind,
      { ...(ns ? { namespace: ns } : {}), ...(sel ? { labelSelector: sel } : {}) },
      {
        onList: (items) => {
          onList?.(items);
          for (const o of items) onKey(o, 'LIST');
        },
        onEvent: (t, o) => onKey(o, t),
        onError: (err) => this.log.debug({ err }, 'informer error'),
      },
      { clock: this.clock },
    );
    this.informers.push(i);
    i.start();
  }

  /** What an export is made of, in this cluster: ServiceExports, Services, EndpointSlices, Pods (headless). */
  private watchExportInputs(): void {
    this.watch(this.local, K.ServiceExport, undefined, undefined, (o, type) => {
      const k = objectKey(o);
      this.knownExports.add(k);
      if (type === 'MODIFIED' && this.ownWrites.delete(`${k}@${o.metadata.resourceVersion ?? ''}`)) return;
      if (this.ownWrites.size > 10_000) this.ownWrites.clear();
      this.enqueueExport(k);
    });
    // every Service: an exported one wakes its export; a derived one (a clusterset IP) is
    // cached, and its change (an address given, a deletion by hand) wakes its import
    this.watch(
      this.local,
      K.Service,
      undefined,
      undefined,
      (o, type) => {
        if (o.metadata.labels?.[LABEL_APP_MANAGED_BY] === MANAGED_BY) {
          const k = `${o.metadata.namespace ?? ''}/${o.metadata.labels[LABEL_SERVICE_NAME] ?? ''}`;
          if (type === 'DELETED') this.derivedServices.delete(k);
          else this.derivedServices.set(k, o);
          if (type !== 'LIST') {
            this.knownImports.add(k);
            this.enqueueImport(k);
          }
          return;
        }
        if (this.knownExports.has(objectKey(o))) this.enqueueExport(objectKey(o));
      },
      (items) => {
        this.derivedServices.clear();
        for (const o of items) {
          if (o.metadata.labels?.[LABEL_APP_MANAGED_BY] !== MANAGED_BY) continue;
          const k = `${o.metadata.namespace ?? ''}/${o.metadata.labels[LABEL_SERVICE_NAME] ?? ''}`;
          // a derived Service whose import went while this agent was away is removed by that import's reconcile
          this.knownImports.add(k);
          this.enqueueImport(k);
        }
      },
    );
    this.serviceInformer = this.informers[this.informers.length - 1];
    this.watch(
      this.local,
      K.EndpointSlice,
      undefined,
      'kubernetes.io/service-name',
      (o, type) => {
        if (o.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY) return;
        const k = `${o.metadata.namespace ?? ''}/${o.metadata.labels?.['kubernetes.io/service-name'] ?? ''}`;
        this.noteServiceSlice(k, o, type);
        if (!this.knownExports.has(k)) return;
        this.enqueueExport(k);
        // its mirror behind the clusterset IP here follows it
        if (type !== 'LIST' && this.knownImports.has(k)) this.enqueueImport(k);
      },
      () => this.serviceSlices.clear(),
    );
    this.serviceSliceInformer = this.informers[this.informers.length - 1];
    // the pods behind a headless export (where no EndpointSlice lists them)
    this.watch(this.local, K.Pod, undefined, undefined, (o) => {
      const ns = o.metadata.namespace ?? '';
      for (const k of this.headless) if (k.startsWith(`${ns}/`)) this.enqueueExport(k);
    });
  }

  /** A service's own slice, as this cluster's endpoint controller wrote it. */
  private noteServiceSlice(k: string, o: KubeObject, type: string): void {
    let m = this.serviceSlices.get(k);
    if (type === 'DELETED') {
      m?.delete(o.metadata.name);
      if (m?.size === 0) this.serviceSlices.delete(k);
      return;
    }
    if (!m) this.serviceSlices.set(k, (m = new Map()));
    m.set(o.metadata.name, o);
  }

  /** A service's own slices: from the cache while its informer is current, else listed. */
  private async ownSlicesOf(ns: string, name: string): Promise<KubeObject[]> {
    if (this.serviceSliceInformer?.synced) return [...(this.serviceSlices.get(`${ns}/${name}`)?.values() ?? [])];
    const l = await this.local.list(K.EndpointSlice, { namespace: ns, labelSelector: `kubernetes.io/service-name=${name}` });
    return l.items.filter((o) => o.metadata.labels?.[LABEL_MANAGED_BY] !== MANAGED_BY);
  }

  /**
   * Whether a Service has a ready backend, from its own EndpointSlices (the cache once its
   * informer has listed, else listed now: an export made before that must not say ready
   * while its backends are not): one of them lists a ready endpoint. A Service without any
   * slice (none written yet, or endpoints kept some other way) counts as ready: nothing says otherwise.
   */
  private async backendsReady(ns: string, name: string): Promise<boolean> {
    const slices = await this.ownSlicesOf(ns, name);
    if (slices.length === 0) return true;
    for (const o of slices) {
      const eps = (o['endpoints'] as { addresses?: string[]; conditions?: { ready?: boolean } }[] | undefined) ?? [];
      // an endpoint without conditions counts as ready, as in Kubernetes
      if (eps.some((e) => (e.addresses?.length ?? 0) > 0 && e.conditions?.ready !== false)) return true;
    }
    return false;
  }

  /**
   * The active gateway's records in this cluster (the Gateway kind, as clusterset DNS reads
   * them): which clusters the tunnel reaches now. A change re-imports every service, whose
   * slices then mark an unreachable cluster's endpoints not ready (routedEndpoints).
   */
  private watchGateways(): void {
    const gateways = new Map<string, KubeObject>();
    const update = (): void => {
      const connected = connectedClusters([...gateways.values()], this.clusterId);
      const key = connected ? [...connected].sort().join(',') : '*';
      if (key === this.connectedKey) return;
      this.connectedKey = key;
      this.connected = connected;
      this.log.info({ connected: key }, 'clusters reachable through the tunnel changed: imports follow');
      for (const k of this.knownImports) this.enqueueImport(k);
    };
    this.watch(
      this.local,
      K.Gateway,
      undefined,
      undefined,
      (o, type) => {
        if (type === 'LIST') return;
        if (type === 'DELETED') gateways.delete(objectKey(o));
        else gateways.set(objectKey(o), o);
        update();
      },
      (items) => {
        gateways.clear();
        for (const o of items) gateways.set(objectKey(o), o);
        update();
      },
    );
  }

  /** Every cluster's EndpointSlices on the broker: the imports to make here (and this cluster's exports coming back). */
  private watchBrokerSlices(): void {
    this.watch(
      this.broker,
      K.EndpointSlice,
      BROKER_NAMESPACE,
      LABEL_SOURCE_CLUSTER,
      (o, type) => {
        if (type === 'DELETED') this.brokerSlices.delete(o.metadata.name);
        else this.brokerSlices.set(o.metadata.name, o);
        const l = o.metadata.labels ?? {};
        const k = `${l[LABEL_SERVICE_NAMESPACE] ?? ''}/${l[LABEL_SERVICE_NAME] ?? ''}`;
        this.knownImports.add(k);
        // another cluster's slice: foreground (this cluster's DNS answer waits on the import);
        // this cluster's own export coming back: follow-up work, after the other clusters' imports
        if (l[LABEL_SOURCE_CLUSTER] !== this.clusterId) this.enqueueForegroundImport(k);
        else if (type === 'LIST') this.enqueueImport(k);
        else this.enqueueImportAfterForeground(k);
        if (this.knownExports.has(k)) this.enqueueExport(k);
        // the last slice of a service gone (two clusters withdrawing at once each folded
        // the other's in): whoever sees it removes the aggregate left behind
        else if (type === 'DELETED' && this.brokerSlices.ofService(k).length === 0) this.dropAggregate(k);
      },
      (items) => {
        this.brokerSlices.reset(items.map((o) => [o.metadata.name, o]));
        // after a (re)list: also look at every service imported here, to drop what the broker no longer has
        for (const k of this.knownImports) this.enqueueImport(k);
      },
    );
    this.brokerSliceInformer = this.informers[this.informers.length - 1];
  }

  /** This cluster's imported slices: a cache, no events needed (the broker's say what to do). */
  private watchImportedSlices(): void {
    this.watch(
      this.local,
      K.EndpointSlice,
      undefined,
      `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
      (o, type) => {
        if (type === 'DELETED') this.importedSlices.delete(objectKey(o));
        else this.importedSlices.set(objectKey(o), o);
      },
      (items) => this.importedSlices.reset(items.map((o) => [objectKey(o), o])),
    );
    this.importedSliceInformer = this.informers[this.informers.length - 1];
  }

  private scheduleResync(): void {
    const ms = this.opts.resyncMs ?? 0;
    if (!(ms > 0)) return;
    this.resyncTimer = this.clock.setTimeout(() => {
      if (this.stopped) return;
      for (const k of this.knownExports) this.exports.add(k);
      for (const k of this.knownImports) this.imports.add(k);
      this.scheduleResync();
    }, ms);
  }

  /** The broker was cut off or answers again: say so, and reconcile what waits on it. */
  private onBrokerReach(st: BrokerReachState): void {
    if (st.reachable === false) {
      this.brokerWasCut = true;
      this.log.warn({ err: st.error }, 'the broker is unreachable: exports not synced yet wait for it; imports and DNS answers stay as they are');
      // the exports not synced yet say so in their conditions
      for (const k of this.knownExports) this.enqueueExport(k);
      return;
    }
    if (st.reachable && this.brokerWasCut) {
      this.brokerWasCut = false;
      this.log.info('the broker answers again: reconciling every export and import');
      for (const k of this.knownExports) this.enqueueExport(k);
      for (const k of this.knownImports) this.enqueueImport(k);
    }
  }

  /** 1 while the broker answers, 0 while it is cut off, undefined before the first probe (metrics) */
  brokerReachable(): boolean | undefined {
    return this.reach.current.reachable;
  }

  /** The message of an export waiting for a broker that does not answer. */
  private unreachableMessage(): string {
    const st = this.reach.current;
    return `the broker is unreachable (since ${new Date(st.since).toISOString()}: ${st.error}); the export is synced when it answers`;
  }

  /**
   * An export while the broker is cut off: one already synced stays as it is (its slice is
   * on the broker, the other clusters keep their imports); one not synced yet says it waits.
   */
  private async waitForBroker(key: string, se: KubeObject, conds: ConditionWriter): Promise<void> {
    if (conds.get('Valid')?.status === 'True') return;
    const message = this.unreachableMessage();
    conds.set({ type: 'Valid', status: 'False', reason: REASON.awaitingSync, message: `${MESSAGE.awaitingSync}: ${message}` });
    conds.set({ type: 'Ready', status: 'False', reason: REASON.brokerUnreachable, message });
    await conds.write();
    if (this.waitedOnBroker.has(key)) return;
    this.waitedOnBroker.add(key);
    this.exportEvent(se, 'Warning', REASON.brokerUnreachable, `ServiceExport ${key} is not synced: ${message}`);
  }

  /** best effort: an Event on a ServiceExport */
  private exportEvent(se: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.local
      .recordEvent({
        involvedObject: {
          apiVersion: K.ServiceExport.apiVersion,
          kind: 'ServiceExport',
          name: se.metadata.name,
          namespace: se.metadata.namespace ?? 'default',
        },
        type,
        reason,
        message,
        source: 'strait-multicluster',
      })
      .catch(() => undefined);
  }

  private brokerSlicesSynced(): boolean {
    return this.brokerSliceInformer?.synced === true;
  }

  /** A broker slice from the informer's cache; undefined when not cached or the cache is not current. */
  private brokerSlice(name: string): KubeObject | undefined {
    return this.brokerSlicesSynced() ? this.brokerSlices.get(name) : undefined;
  }

  /** The broker slices of one service: from the informer's cache while it is current, else listed (throws when the broker is down). */
  private async brokerSlicesOf(ns: string, name: string): Promise<KubeObject[]> {
    if (this.brokerSlicesSynced()) return this.brokerSlices.ofService(`${ns}/${name}`);
    return (
      await this.broker.list(K.EndpointSlice, {
        namespace: BROKER_NAMESPACE,
        labelSelector: `${LABEL_SERVICE_NAME}=${name},${LABEL_SERVICE_NAMESPACE}=${ns}`,
      })
    ).items;
  }

  private enqueueExport(k: string): void {
    if (!this.noticed.has(`e:${k}`)) this.noticed.set(`e:${k}`, performance.now());
    this.exports.add(k);
  }

  private enqueueImport(k: string): void {
    if (!this.noticed.has(`i:${k}`)) this.noticed.set(`i:${k}`, performance.now());
    this.imports.add(k);
  }

  private enqueueForegroundImport(k: string): void {
    if (this.stopped) return;
    if (!this.foregroundImports.has(k)) {
      this.foregroundImports.add(k);
      this.lanes.begin();
    }
    this.enqueueImport(k);
  }

  private enqueueImportAfterForeground(k: string): void {
    const p = this.lanes.afterForeground().then(() => {
      this.deferredImports.delete(p);
      if (!this.stopped) this.enqueueImport(k);
    });
    this.deferredImports.add(p);
  }

  /** One import; foreground work (if it was queued as such) ends when its writes have committed or failed. */
  private async runImport(k: string): Promise<void> {
    const foreground = this.foregroundImports.delete(k);
    try {
      // a foreground import writes what the name needs to answer; its clusterset IP (the
      // derived Service and the IPs on the ServiceImport) is follow-up work, after the foreground
      const later = await this.reconcileImport(k, !foreground);
      if (later) this.enqueueImportAfterForeground(k);
    } finally {
      if (foreground) this.lanes.end();
    }
  }

  private observe(kind: 'e' | 'i', k: string): void {
    const t0 = this.noticed.get(`${kind}:${k}`);
    this.noticed.delete(`${kind}:${k}`);
    if (t0 !== undefined) this.metrics?.syncLatency.observe({ direction: kind === 'e' ? 'export' : 'import' }, (performance.now() - t0) / 1000);
  }

  private onError(what: string, key: string, err: unknown): void {
    const level = isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE') ? 'debug' : 'warn';
    this.log[level]({ err, key, what }, `${what} sync failed; will retry`);
  }

  /** Resolves when both queues are idle (tests and benchmarks). */
  async idle(): Promise<void> {
    await Promise.all(this.deferredImports);
    await Promise.all([this.exports.idle(), this.imports.idle()]);
  }

  exportConditions(): Map<string, Map<string, number>> {
    const out = new Map<string, Map<string, number>>();
    for (const list of this.conditions.values()) {
      for (const c of list) {
        const m = out.get(c.type) ?? new Map<string, number>();
        m.set(c.status, (m.get(c.status) ?? 0) + 1);
        out.set(c.type, m);
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.reach.stop();
    this.resyncTimer?.cancel();
    for (const i of this.informers) i.stop();
    this.exports.stop();
    this.imports.stop();
    for (let n = this.foregroundImports.size; n > 0; n--) this.lanes.end();
    this.foregroundImports.clear();
    this.metrics?.removeSource(this);
  }

  // --- export ------------------------------------------------------------------------

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private async reconcileExport(key: string): Promise<void> {
    const [ns, name] = splitKey(key);
    const se = await this.local.get(K.ServiceExport, name, ns);
    if (!se) {
      this.knownExports.delete(key);
      this.headless.delete(key);
      this.conditions.delete(key);
      await this.withdraw(ns, name);
      this.observe('e', key);
      return;
    }
    const status = (se.status ?? {}) as { conditions?: Condition[] };
    const conds = new ConditionWriter(
      status.conditions ?? [],
      () => this.now(),
      (list) => this.conditions.set(key, list),
      (list) => this.writeExportConditions(key, se, list),
    );
    const svc = await this.local.get<ServiceLike>(K.Service, name, ns);
    if (!svc || svc.spec?.type === 'ExternalName') {
      await this.refuseExport(ns, name, svc, conds);
      this.observe('e', key);
      return;
    }
    if (this.reach.unreachable) {
      await this.waitForBroker(key, se, conds);
      return;
    }
    const agg = await this.syncExport(ns, name, await this.buildSlice(se, svc), conds);
    exportedConditions(conds, agg);
    await conds.write();
    this.observe('e', key);
    if (this.waitedOnBroker.delete(key)) this.exportEvent(se, 'Normal', REASON.exported, `ServiceExport ${key}: ${MESSAGE.synced} (the broker answers again)`);
  }

  /** The export's conditions, as they are now, in its status; no read first (see below). */
  private async writeExportConditions(key: string, se: KubeObject, conditions: Condition[]): Promise<void> {
    // no read first: a read commits what the store has staged (an fsync) on the spot, ahead
    // of the other clusters' import writes; the status is this controller's alone
    let written: KubeObject;
    try {
      written = await this.local.updateStatus({
        ...se,
        metadata: { ...se.metadata, resourceVersion: undefined },
        status: { ...((se.status ?? {}) as object), conditions },
      });
    } catch (err) {
      if (isStraitError(err, 'STRAIT_ERR_NOT_FOUND')) return; // deleted meanwhile: the next reconcile withdraws it
      throw err;
    }
    this.ownWrites.add(`${key}@${written.metadata.resourceVersion ?? ''}`);
  }

  /** A ServiceExport of a missing or ExternalName Service: not valid, and not on the broker. */
  private async refuseExport(ns: string, name: string, svc: ServiceLike | undefined, conds: ConditionWriter): Promise<void> {
    const notFound = !svc;
    conds.set({
      type: 'Valid',
      status: 'False',
      reason: notFound ? REASON.serviceNotFound : REASON.unsupportedType,
      message: notFound
        ? `Service ${ns}/${name} to be exported does not exist; create it or delete the ServiceExport`
        : `Service ${ns}/${name} has type ExternalName, which cannot be exported`,
    });
    conds.set({ type: 'Ready', status: 'False', reason: notFound ? REASON.serviceNotFound : REASON.unsupportedType, message: 'The service is not exported' });
    await conds.write();
    await this.withdraw(ns, name);
  }

  /**
   * This cluster's slice on the broker, then the aggregated ServiceImport; the export is
   * AwaitingSync in between. A broker outage leaves an established export alone; a new or
   * changed one says it waits (and the error goes to the queue's retry).
   */
  private async syncExport(ns: string, name: string, slice: KubeObject, conds: ConditionWriter): Promise<Aggregate | undefined> {
    const valid = conds.get('Valid');
    try {
      await this.publishSlice(slice);
      // the aggregated ServiceImport is not synced yet: AwaitingSync (docs/multicluster.md), then True below
      if (valid?.status !== 'True' && valid?.reason !== REASON.awaitingSync) {
        awaitingConditions(conds, MESSAGE.awaitingSync);
        conds.writeBehind();
      }
      return await this.reaggregate(ns, name);
    } catch (err) {
      this.reach.observe(err);
      if (valid?.status !== 'True' || !isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE')) {
        awaitingConditions(conds, `${MESSAGE.awaitingSync}: ${this.reach.unreachable ? this.unreachableMessage() : (err as Error).message}`);
        await conds.write().catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * This cluster's slice on the broker first: it is what the other clusters import and
   * answer from; nothing else is written before it (each durable write is an fsync, and
   * an earlier one would sit on the path to the other clusters' DNS answers).
   */
  private async publishSlice(slice: KubeObject): Promise<void> {
    const existing = this.brokerSlice(slice.metadata.name) ?? (await this.broker.get(K.EndpointSlice, slice.metadata.name, BROKER_NAMESPACE));
    if (existing?.metadata.annotations?.[ANN_CONTENT_HASH] === slice.metadata.annotations?.[ANN_CONTENT_HASH]) return;
    // foreground work: the write is on the path to the other clusters' DNS answers
    this.lanes.begin();
    let written: KubeObject;
    try {
      await ensureNamespace(this.broker, BROKER_NAMESPACE);
      written = existing ? await this.broker.update({ ...slice, metadata: { ...slice.metadata, resourceVersion: undefined } }) : await this.broker.apply(slice);
    } finally {
      this.lanes.end();
    }
    if (this.brokerSlicesSynced()) this.brokerSlices.set(written.metadata.name, written);
    // the imports the slice woke up (this process's other clusters) go first; the
    // aggregate and this status are follow-up work
    await this.lanes.afterForeground();
  }

  /** Remove this cluster's slice for a service from the broker and fold the rest again. */
  private async withdraw(ns: string, name: string): Promise<void> {
    const sliceName = brokerSliceName(ns, name, this.clusterId);
    const removed = await this.broker.delete(K.EndpointSlice, sliceName, BROKER_NAMESPACE);
    // the cache forgets the slice now, not when the watch says so: the aggregate folded
    // next must not bring this cluster back (the ServiceImport stayed on the broker)
    if (this.brokerSlicesSynced()) this.brokerSlices.delete(sliceName);
    if (removed) await this.reaggregate(ns, name);
  }

  private async buildSlice(se: KubeObject, svc: ServiceLike): Promise<KubeObject> {
    const ns = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name;
    const headless = svc.spec?.clusterIP === 'None';
    let endpoints: SliceEndpoint[];
    let ports: ServicePort[];
    const svcPorts = svc.spec?.ports ?? [];
    if (headless) {
      endpoints = await this.podEndpoints(ns, name, svc.spec?.selector);
      ports = svcPorts.map((p) => ({
        ...(p.name ? { name: p.name } : {}),
        protocol: p.protocol ?? 'TCP',
        port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
      }));
    } else {
      // the ClusterIP is ready while a backend behind it is (Lighthouse's rule): a cluster
      // whose pods are gone is not answered by DNS nor routed to behind the clusterset IP
      endpoints = svc.spec?.clusterIP ? [{ addresses: [svc.spec.clusterIP], conditions: { ready: await this.backendsReady(ns, name) } }] : [];
      ports = svcPorts.map((p) => ({ ...(p.name ? { name: p.name } : {}), protocol: p.protocol ?? 'TCP', port: p.port }));
    }
    const created =
      se.metadata.creationTimestamp ??
      getCondition((se.status as { conditions?: Condition[] } | undefined)?.conditions, 'Valid')?.lastTransitionTime ??
      this.now();
    const type = headless ? 'Headless' : 'ClusterSetIP';
    if (headless) this.headless.add(`${ns}/${name}`);
    else this.headless.delete(`${ns}/${name}`);
    const props = servicePropsOf(se, svc);
    const hash = createHash('sha256').update(JSON.stringify({ endpoints, ports, type, created, props })).digest('hex').slice(0, 16);
    return {
      apiVersion: K.EndpointSlice.apiVersion,
      kind: 'EndpointSlice',
      metadata: {
        name: brokerSliceName(ns, name, this.clusterId),
        namespace: BROKER_NAMESPACE,
        labels: {
          [LABEL_SERVICE_NAME]: name,
          [LABEL_SERVICE_NAMESPACE]: ns,
          [LABEL_SOURCE_CLUSTER]: this.clusterId,
          [LABEL_MANAGED_BY]: MANAGED_BY,
        },
        annotations: {
          [ANN_EXPORT_CREATED]: created,
          [ANN_SERVICE_TYPE]: type,
          [ANN_SERVICE_PROPS]: JSON.stringify(props),
          [ANN_CONTENT_HASH]: hash,
          [ANN_SYNCED_AT]: this.now(),
        },
      },
      addressType: 'IPv4',
      endpoints,
      ports,
    };
  }

  /** Endpoints of a headless service: the cluster's own EndpointSlices, else its pods by selector. */
  private async podEndpoints(ns: string, name: string, selector: Record<string, string> | undefined): Promise<SliceEndpoint[]> {
    const slices = await this.local.list(K.EndpointSlice, { namespace: ns, labelSelector: `kubernetes.io/service-name=${name}` });
    const out: SliceEndpoint[] = [];
    for (const s of slices.items) {
      if (s.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY) continue;
      for (const e of (s['endpoints'] as { addresses?: string[]; hostname?: string; conditions?: { ready?: boolean } }[] | undefined) ?? []) {
        // the MCS DNS name of a pod: the slice's hostname (a StatefulSet pod's), else its address with dashes
        for (const address of e.addresses ?? []) {
          const hostname = e.hostname ?? address.replace(/[.:]/g, '-');
          if (out.some((x) => x.addresses[0] === address)) continue;
          out.push({ addresses: [address], hostname, conditions: { ready: e.conditions?.ready !== false } });
        }
      }
    }
    if (out.length > 0 || !selector || Object.keys(selector).length === 0) return sortEndpoints(out);
    const sel = Object.entries(selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = await this.local.list(K.Pod, { namespace: ns, labelSelector: sel });
    for (const p of pods.items) {
      const st = (p.status ?? {}) as { podIP?: string; phase?: string };
      if (!st.podIP || (st.phase && st.phase !== 'Running')) continue;
      out.push({ addresses: [st.podIP], hostname: p.metadata.name, conditions: { ready: true } });
    }
    return sortEndpoints(out);
  }

  /**
   * The aggregated ServiceImport of a service no cluster exports any more: removed after the
   * foreground work, once the broker itself (not only this cache) has no slice of it. A
   * cluster exporting it again meanwhile writes it back at its next resync at the latest.
   */
  private dropAggregate(k: string): void {
    const [ns, name] = splitKey(k);
    const p = this.lanes
      .afterForeground()
      .then(async () => {
        if (this.stopped || this.knownExports.has(k)) return;
        const left = await this.broker.list(K.EndpointSlice, {
          namespace: BROKER_NAMESPACE,
          labelSelector: `${LABEL_SERVICE_NAME}=${name},${LABEL_SERVICE_NAMESPACE}=${ns}`,
        });
        if (left.items.length === 0) await this.broker.delete(K.ServiceImport, brokerImportName(ns, name), BROKER_NAMESPACE);
      })
      .catch((err: unknown) => {
        this.reach.observe(err);
        this.log.warn({ service: k, err }, "the broker's ServiceImport of a service no cluster exports not removed yet");
      })
      .finally(() => this.deferredImports.delete(p));
    this.deferredImports.add(p);
  }

  /** Fold all clusters' slices of a service into the aggregated ServiceImport on the broker. */
  private async reaggregate(ns: string, name: string): Promise<Aggregate | undefined> {
    // a cluster whose slice the cache has not seen yet folds it in itself: its slice's event
    // wakes this export again (knownExports), and the next aggregate has both
    const slices = await this.brokerSlicesOf(ns, name);
    const exports = slices.map(exportFromSlice).filter((e): e is ClusterExport => e !== undefined);
    const agg = aggregate(exports);
    const importName = brokerImportName(ns, name);
    if (!agg) {
      await this.broker.delete(K.ServiceImport, importName, BROKER_NAMESPACE);
      return undefined;
    }
    const spec = importSpec(agg);
    const status = { clusters: agg.clusters.map((cluster) => ({ cluster })) };
    const meta = importMeta(agg, { [LABEL_SERVICE_NAME]: name, [LABEL_SERVICE_NAMESPACE]: ns, [LABEL_MANAGED_BY]: MANAGED_BY });
    const existing = await this.broker.get(K.ServiceImport, importName, BROKER_NAMESPACE);
    if (JSON.stringify(existing?.spec) === JSON.stringify(spec) && JSON.stringify(existing?.status) === JSON.stringify(status) && sameMeta(existing, meta))
      return agg;
    await writeWithStatus(
      this.broker,
      existing,
      {
        apiVersion: K.ServiceImport.apiVersion,
        kind: 'ServiceImport',
        metadata: { name: importName, namespace: BROKER_NAMESPACE, ...meta },
        spec,
      },
      status,
    );
    return agg;
  }

  // --- import ------------------------------------------------------------------------

  /**
   * One service's import: its slices and ServiceImport, then (when `withVip`) the derived
   * Service and the clusterset IPs on the ServiceImport. Returns true when the clusterset IP
   * part is still to do (`withVip` false and something to write).
   */
  private async reconcileImport(key: string, withVip: boolean): Promise<boolean> {
    const [ns, name] = splitKey(key);
    // from the broker informer's cache while its watch runs; otherwise a list, which throws
    // when the broker is unreachable, before anything local is touched
    const slices = await this.brokerSlicesOf(ns, name);
    const byCluster = new Map<string, ClusterExport>();
    for (const s of slices) {
      const e = exportFromSlice(s);
      if (e) byCluster.set(e.cluster, e);
    }
    const agg = aggregate([...byCluster.values()]);
    // every read first, then the writes together: a read after a write would commit it on the
    // spot, and writes issued together share one commit (one fsync) in the embedded store
    const localSlices = this.importedSliceInformer?.synced
      ? { items: this.importedSlices.ofService(key) }
      : await this.local.list(K.EndpointSlice, { namespace: ns, labelSelector: `${LABEL_SERVICE_NAME}=${name},${LABEL_MANAGED_BY}=${MANAGED_BY}` });
    const existing = await this.local.get(K.ServiceImport, name, ns);
    const derivedName = derivedServiceName(ns, name);
    const derived = this.serviceInformer?.synced ? this.derivedServices.get(key) : await this.local.get(K.Service, derivedName, ns);
    const wantVip = this.clustersetIP && agg?.type === 'ClusterSetIP';
    const keep = new Set(agg?.clusters ?? []);
    // this cluster's own export behind its clusterset IP: mirrors of its Service's slices
    const own = agg && wantVip ? byCluster.get(this.clusterId) : undefined;
    const mirrorsWanted = agg && own ? await this.mirrorsOf(ns, name, derivedName, own, agg) : new Map<string, KubeObject>();
    const writes: Promise<unknown>[] = localSlices.items
      .filter((s) =>
        s.metadata.labels?.[LABEL_MIRROR] === 'true' ? !mirrorsWanted.has(s.metadata.name) : !keep.has(s.metadata.labels?.[LABEL_SOURCE_CLUSTER] ?? ''),
      )
      .map((s) => this.local.delete(K.EndpointSlice, s.metadata.name, ns).then(() => this.importedSlices.delete(`${ns}/${s.metadata.name}`)));
    // no clusterset IP wanted (unexported, headless, or turned off): its derived Service goes
    if (derived && !wantVip) writes.push(this.deleteDerived(key, derived));
    if (!agg) {
      if (existing) writes.push(this.local.delete(K.ServiceImport, name, ns));
      await Promise.all(writes);
      this.knownImports.delete(key);
      this.observe('i', key);
      return false;
    }
    await ensureNamespace(this.local, ns);
    const existingByName = new Map(localSlices.items.map((s) => [s.metadata.name, s]));
    for (const cluster of agg.clusters) {
      const e = byCluster.get(cluster)!;
      const sliceName = localSliceName(name, cluster);
      const routed = this.routedExport(e);
      // this cluster's own slice is not behind the clusterset IP: its mirrors are
      const content: ImportedContent =
        wantVip && cluster !== this.clusterId ? { e: routed, ports: acceptedPorts(e.ports, agg.ports), derived: derivedName } : { e: routed, ports: e.ports };
      const hash = exportContentHash(content);
      const prev = existingByName.get(sliceName);
      if (prev?.metadata.annotations?.[ANN_CONTENT_HASH] === hash) continue;
      writes.push(this.writeSlice(importedSlice(ns, name, sliceName, cluster, content, hash), prev !== undefined));
    }
    for (const [mirrorName, m] of mirrorsWanted) {
      const prev = existingByName.get(mirrorName);
      if (!mirrorCurrent(prev, m)) writes.push(this.writeSlice(m, prev !== undefined));
    }
    // the ServiceImport beside the slices (the slices alone already make the name answerable),
    // with the clusterset IPs its derived Service holds
    const vip = wantVip ? clustersetIPsOf(derived) : { ips: [], ipFamilies: [] };
    const spec = localImportSpec(agg, vip);
    const status = { clusters: agg.clusters.map((cluster) => ({ cluster })) };
    const meta = importMeta(agg, { [LABEL_MANAGED_BY]: MANAGED_BY }, wantVip ? { [ANN_DERIVED_SERVICE]: derivedName } : {});
    let imported: KubeObject | undefined = existing;
    if (canon(existing?.spec) !== canon(spec) || canon(existing?.status) !== canon(status) || !sameMeta(existing, meta)) {
      const obj: KubeObject = { apiVersion: K.ServiceImport.apiVersion, kind: 'ServiceImport', metadata: { name, namespace: ns, ...meta }, spec };
      writes.push(
        writeWithStatus(this.local, existing, obj, status).then((w) => {
          imported = w;
        }),
      );
    }
    await Promise.all(writes);
    this.observe('i', key);
    if (!wantVip || !imported) return false;
    // the ServiceImport already carries what the derived Service holds: only a derived Service to write is left
    if (!withVip) return !derivedServiceCurrent(derived, this.derivedFor(ns, name, imported, agg));
    await this.syncClustersetIP(key, agg, imported, derived, spec);
    return false;
  }

  /** An imported slice or a mirror written (`exists`: replaced); the cache knows its own writes at once (a reconcile before their events sees them). */
  private async writeSlice(obj: KubeObject, exists: boolean): Promise<void> {
    const written = exists ? await this.local.update(obj) : await this.local.apply(obj);
    if (this.importedSliceInformer?.synced) this.importedSlices.set(objectKey(written), written);
  }

  /** The mirrors of this cluster's own Service's slices behind its clusterset IP (endpointslice-mirror.ts), by name. */
  private async mirrorsOf(ns: string, name: string, derivedName: string, own: ClusterExport, agg: Aggregate): Promise<Map<string, KubeObject>> {
    const accepted = acceptedPorts(own.ports, agg.ports);
    const out = new Map<string, KubeObject>();
    for (const s of await this.ownSlicesOf(ns, name)) {
      const m = mirrorSlice(ns, name, derivedName, s, accepted);
      out.set(m.metadata.name, m);
    }
    return out;
  }

  /**
   * A cluster's export as this cluster routes to it: while the tunnel does not reach that
   * cluster (the active gateway's records), its endpoints are not ready here, so the service
   * proxy (kube-proxy, the world's node proxy) leaves it out behind the clusterset IP and
   * DNS does not answer it; they are ready again when the connection is.
   */
  private routedExport(e: ClusterExport): ClusterExport {
    if (this.connected === undefined || this.connected.has(e.cluster)) return e;
    return { ...e, endpoints: e.endpoints.map((x) => ({ ...x, conditions: { ...x.conditions, ready: false } })) };
  }

  /** The derived Service this import wants (its owner: the ServiceImport as stored). */
  private derivedFor(ns: string, name: string, imported: KubeObject, agg: Aggregate): KubeObject {
    return derivedService({ namespace: ns, name, importUid: imported.metadata.uid ?? '', importApiVersion: K.ServiceImport.apiVersion, agg });
  }

  /**
   * The clusterset IP of a ClusterSetIP import: the derived Service created or brought up to
   * date (the cluster gives it its addresses), then those addresses on the ServiceImport.
   */
  private async syncClustersetIP(
    key: string,
    agg: Aggregate,
    imported: KubeObject,
    derived: KubeObject | undefined,
    spec: Record<string, unknown>,
  ): Promise<void> {
    const [ns, name] = splitKey(key);
    const want = this.derivedFor(ns, name, imported, agg);
    let svc = derived;
    if (!derivedServiceCurrent(derived, want)) {
      const left = derivedPorts(agg.ports).leftOut;
      if (left.length > 0)
        this.log.warn(
          { service: key, ports: left },
          'unnamed ports of a multi-port import get no clusterset IP port (a Service with several ports names each)',
        );
      if (derived) {
        // what the cluster allocated stays: its addresses and their families
        const had = (derived.spec ?? {}) as Record<string, unknown>;
        const kept = Object.fromEntries(
          ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'].filter((f) => had[f] !== undefined).map((f) => [f, had[f]]),
        );
        svc = await this.local.update({
          ...want,
          metadata: { ...want.metadata, resourceVersion: derived.metadata.resourceVersion },
          spec: { ...(want.spec as object), ...kept },
        });
      } else {
        svc = await this.local.apply(want);
        this.log.info({ service: key, derived: want.metadata.name, ips: clustersetIPsOf(svc).ips }, 'clusterset IP allocated');
      }
      if (this.serviceInformer?.synced) this.derivedServices.set(key, svc);
    }
    const vip = clustersetIPsOf(svc);
    const next = localImportSpec(agg, vip);
    if (canon(next) === canon(spec)) return;
    // update keeps the status; the ServiceImport is this controller's alone (no resourceVersion)
    await this.local.update({ ...imported, metadata: { ...imported.metadata, resourceVersion: undefined }, spec: next });
  }

  /** Remove a derived Service (its import is gone, headless, or has no clusterset IP). */
  private async deleteDerived(key: string, derived: KubeObject): Promise<void> {
    await this.local.delete(K.Service, derived.metadata.name, derived.metadata.namespace);
    this.derivedServices.delete(key);
    this.log.info({ service: key, derived: derived.metadata.name }, 'clusterset IP released');
  }
}

/**
 * Write an object and its status: a new one with applyWithStatus; an existing one replaced
 * (labels and annotations no longer wanted go, which a merge would keep), its status beside.
 */
async function writeWithStatus(store: ResourceStore, existing: KubeObject | undefined, obj: KubeObject, status: unknown): Promise<KubeObject> {
  if (!existing) return applyWithStatus(store, obj, status);
  const replaced = store.update(obj);
  replaced.catch(() => undefined);
  const [, withStatus] = await Promise.all([replaced, store.updateStatus({ ...obj, status } as KubeObject)]);
  return withStatus;
}

/**
 * Apply an object and set its status, issued together: the embedded store commits both in
 * one transaction (one fsync, not two). A store that runs the status write first (requests
 * in flight together may be reordered) answers NotFound for a new object: then it is
 * written again once the apply is done.
 */
async function applyWithStatus(store: ResourceStore, obj: KubeObject, status: unknown): Promise<KubeObject> {
  const applying = store.apply(obj);
  const withStatus = { ...obj, status } as KubeObject;
  const statusWrite = store.updateStatus(withStatus).catch(async (err: unknown) => {
    if (!isStraitError(err, 'STRAIT_ERR_NOT_FOUND')) throw err;
    await applying;
    return store.updateStatus(withStatus);
  });
  applying.catch(() => undefined);
  const [, written] = await Promise.all([applying, statusWrite]);
  return written;
}

/** Valid and (when not set yet) Ready: AwaitingSync, with `message` for Valid. */
function awaitingConditions(conds: ConditionWriter, message: string): void {
  conds.set({ type: 'Valid', status: 'False', reason: REASON.awaitingSync, message });
  if (!conds.get('Ready')) conds.set({ type: 'Ready', status: 'False', reason: REASON.awaitingSync, message: MESSAGE.awaitingSync });
}

/** Exported: Valid and Ready, and whether the aggregate found a conflict with other clusters' exports. */
function exportedConditions(conds: ConditionWriter, agg: Aggregate | undefined): void {
  conds.set({ type: 'Valid', status: 'True', reason: REASON.exported, message: MESSAGE.synced });
  conds.set({ type: 'Ready', status: 'True', reason: REASON.exported, message: 'Service is exported and discoverable in the cluster set' });
  if (agg?.conflict) conds.set({ type: 'Conflict', status: 'True', reason: agg.conflict.reason, message: agg.conflict.message });
  else conds.set({ type: 'Conflict', status: 'False', reason: REASON.noConflict, message: 'No conflicts with exports of other clusters' });
}

/** Slices by name and by the service they belong to: a service's slices without a scan of all. */
class SliceIndex {
  private readonly byName = new Map<string, KubeObject>();
  private readonly byService = new Map<string, Map<string, KubeObject>>();
  private readonly serviceOfName = new Map<string, string>();
  constructor(private readonly serviceOf: (o: KubeObject) => string) {}

  get(name: string): KubeObject | undefined {
    return this.byName.get(name);
  }

  set(name: string, o: KubeObject): void {
    this.delete(name);
    const svc = this.serviceOf(o);
    this.byName.set(name, o);
    this.serviceOfName.set(name, svc);
    let m = this.byService.get(svc);
    if (!m) this.byService.set(svc, (m = new Map()));
    m.set(name, o);
  }

  delete(name: string): void {
    const svc = this.serviceOfName.get(name);
    this.byName.delete(name);
    this.serviceOfName.delete(name);
    if (svc === undefined) return;
    const m = this.byService.get(svc);
    m?.delete(name);
    if (m?.size === 0) this.byService.delete(svc);
  }

  reset(entries: [string, KubeObject][]): void {
    this.byName.clear();
    this.byService.clear();
    this.serviceOfName.clear();
    for (const [name, o] of entries) this.set(name, o);
  }

  ofService(svc: string): KubeObject[] {
    return [...(this.byService.get(svc)?.values() ?? [])];
  }
}

function sortEndpoints(list: SliceEndpoint[]): SliceEndpoint[] {
  return list.sort((a, b) => (a.hostname ?? a.addresses[0] ?? '').localeCompare(b.hostname ?? b.addresses[0] ?? ''));
}
