// Writes the MeshTrafficObservation of every injected pod whose sidecar the agent runs: its
// flows (the sidecar's reports added up), the effective inbound mode with the policies behind
// it, and for each flow whether STRICT would reset it. One write per pod and change at most:
// a report (a sidecar sends one at most every 2 s, only when something changed) or a policy
// change (each reconcile; only objects whose content differs are written). The object goes
// when its pod leaves the mesh.
import type { Logger } from 'pino';
import { parseIpv4 } from '../../../base/config/index.js';
import { isStraitError } from '../../../base/errors/index.js';
import { KeyQueue, type Requeue } from '../../../platform/controller/index.js';
import { MAX_OBSERVED_FLOWS } from '../../../platform/resources/index.js';
import type { ResourceStore } from '../../../platform/store/index.js';
import { spiffeId, parseSpiffeId } from '../ca/index.js';
import { DEFAULT_FLOW_LIMIT, type FlowReport } from '../../dataplane/proxy/index.js';
import { inboundOf, type MeshView, type Workload } from '../policy/index.js';
import { PodFlows, type HeldFlow } from './pod-flows.js';
import { strictWouldReset } from './strict.js';
import {
  OBSERVATION_KIND,
  type MeshTrafficObservation,
  type ObservationSpec,
  type ObservationStatus,
  type ObservedClient,
  type ObservedFlow,
} from './types.js';

export interface ObservationWriterOptions {
  store: ResourceStore;
  /** flows kept per pod (default 256, at most MAX_OBSERVED_FLOWS) */
  flowLimit?: number;
  /**
   * only pods with a network namespace of the local world (default true: the mesh agent runs
   * their sidecars); false in Kubernetes mode, where every injected pod's proxy reports itself
   */
  requireNetns?: boolean;
  /**
   * least time between two writes of one pod's object, ms (default 0: at every change); reports
   * in between are merged and written together (Kubernetes mode: any pod can post reports, and
   * every write is an etcd revision)
   */
  minWriteIntervalMs?: number;
  log?: Logger;
}

const FIELD_MANAGER = 'strait-mesh';

/** The pods that have a sidecar: injected (and with a network namespace, where the agent runs them). */
function observedPods(view: MeshView, requireNetns = true): Map<string, Workload> {
  const out = new Map<string, Workload>();
  for (const w of view.workloads) if (w.sidecar && (w.netns || !requireNetns) && !w.fromDeployment) out.set(`${w.namespace}/${w.name}`, w);
  return out;
}

/** Who a flow's client is, as far as this cluster knows: its pod by address, its account by SPIFFE ID. */
function clientOf(f: HeldFlow, byIp: ReadonlyMap<string, Workload>): ObservedClient {
  const c: ObservedClient = { address: f.address, ...(f.identity !== undefined ? { identity: f.identity } : {}) };
  const ip = parseIpv4(f.address.replace(/^::ffff:/, ''));
  const pod = ip ? byIp.get(ip) : undefined;
  const id = f.identity !== undefined ? parseSpiffeId(f.identity) : undefined;
  if (pod && (!id || (id.namespace === pod.namespace && id.serviceAccount === pod.serviceAccount))) {
    c.namespace = pod.namespace;
    c.pod = pod.name;
    c.serviceAccount = pod.serviceAccount;
    c.sidecar = pod.sidecar;
  } else if (id) {
    c.namespace = id.namespace;
    c.serviceAccount = id.serviceAccount;
  }
  return c;
}

/** The object's spec and status for a pod, from its flows and the current view. */
export function observationOf(view: MeshView, w: Workload, flows: PodFlows): { spec: ObservationSpec; status: ObservationStatus } {
  const byIp = new Map<string, Workload>();
  for (const x of view.workloads) if (x.ip && !x.fromDeployment) byIp.set(x.ip, x);
  const inbound = inboundOf(view, w);
  const held = [...flows.flows.values()].sort(
    (a, b) => a.port - b.port || b.lastSeen - a.lastSeen || (a.identity ?? a.address).localeCompare(b.identity ?? b.address),
  );
  const out: ObservedFlow[] = held.map((f) => ({
    client: clientOf(f, byIp),
    port: f.port,
    tls: f.tls,
    outcome: f.outcome,
    ...(f.reason ? { reason: f.reason } : {}),
    mode: f.mode,
    count: f.count,
    firstSeen: new Date(f.firstSeen).toISOString(),
    lastSeen: new Date(f.lastSeen).toISOString(),
    strictWouldReset: strictWouldReset(inbound, f),
  }));
  const summary = { flows: out.length, mtls: 0, plaintext: 0, tlsPassthrough: 0, reset: 0, strictWouldReset: 0 };
  for (const f of out) {
    if (f.outcome === 'reset') summary.reset++;
    else if (f.tls === 'mtls') summary.mtls++;
    else if (f.tls === 'plaintext') summary.plaintext++;
    else if (f.tls === 'tls-passthrough') summary.tlsPassthrough++;
    if (f.strictWouldReset) summary.strictWouldReset++;
  }
  return {
    spec: {
      pod: w.name,
      ...(w.deployment ? { deployment: w.deployment } : {}),
      serviceAccount: w.serviceAccount,
      spiffeId: spiffeId({ trustDomain: view.settings.trustDomain, namespace: w.namespace, serviceAccount: w.serviceAccount }),
      ...(w.ip ? { address: w.ip } : {}),
    },
    status: {
      ...(flows.lastReport ? { lastReport: new Date(flows.lastReport).toISOString() } : {}),
      flowLimit: flows.limit,
      evictedFlows: flows.evicted,
      inbound,
      summary,
      flows: out,
    },
  };
}

export class ObservationWriter {
  private view: MeshView | undefined;
  private readonly pods = new Map<string, PodFlows>();
  /** what was last written per pod (JSON of spec and status) */
  private readonly written = new Map<string, { spec: string; status: string }>();
  /** when each pod's object was last written (minWriteIntervalMs) */
  private readonly writtenAt = new Map<string, number>();
  /** objects in the store that may need deleting (read at start) */
  private readonly stored = new Set<string>();
  private readonly queue: KeyQueue;
  private readonly limit: number;
  writes = 0;

  constructor(private readonly o: ObservationWriterOptions) {
    this.limit = Math.max(1, Math.min(MAX_OBSERVED_FLOWS, o.flowLimit ?? DEFAULT_FLOW_LIMIT));
    this.queue = new KeyQueue((key) => this.sync(key), {
      onError: (key, err) => o.log?.warn({ pod: key, err: String(err) }, 'cannot write the traffic observation; retrying'),
    });
  }

  /** Read the observations already stored (the agent restarted): their flows carry on. */
  async start(): Promise<void> {
    const have = await this.o.store.list<MeshTrafficObservation>(OBSERVATION_KIND);
    for (const obj of have.items) {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      this.stored.add(key);
      const st = obj.status;
      if (!st || !Array.isArray(st.flows)) continue;
      this.flowsOf(key).seed(st.flows, st.evictedFlows, st.lastReport);
    }
  }

  private flowsOf(key: string): PodFlows {
    let p = this.pods.get(key);
    if (!p) {
      p = new PodFlows(this.limit);
      this.pods.set(key, p);
    }
    return p;
  }

  /** A sidecar's report ({type:'flows', report} over its IPC channel) for pod "ns/name". */
  report(pod: string, report: FlowReport | unknown): void {
    if (this.view && !observedPods(this.view, this.o.requireNetns).has(pod)) return;
    const r = this.flowsOf(pod).merge(report, Date.now(), `the flow report of pod ${pod}`);
    if (r.skipped > 0) this.o.log?.warn({ pod, skipped: r.skipped }, 'sidecar flow report had malformed entries; skipped');
    this.queue.add(pod);
  }

  /** The mesh changed (a reconcile): observations follow the pods and the policies. */
  update(view: MeshView): void {
    this.view = view;
    const want = observedPods(view, this.o.requireNetns);
    for (const key of new Set([...want.keys(), ...this.pods.keys(), ...this.stored, ...this.written.keys()])) this.queue.add(key);
  }

  private async sync(key: string): Promise<Requeue> {
    const view = this.view;
    if (!view) return undefined;
    const [namespace, name] = key.split('/') as [string, string];
    const w = observedPods(view, this.o.requireNetns).get(key);
    if (!w) {
      this.pods.delete(key);
      if (this.written.has(key) || this.stored.has(key)) {
        await this.o.store.delete(OBSERVATION_KIND, name, namespace);
        this.written.delete(key);
        this.writtenAt.delete(key);
        this.stored.delete(key);
        this.writes++;
      }
      return undefined;
    }
    const { spec, status } = observationOf(view, w, this.flowsOf(key));
    const want = { spec: JSON.stringify(spec), status: JSON.stringify(status) };
    const had = this.written.get(key);
    if (had && had.spec === want.spec && had.status === want.status) return undefined;
    const wait = had ? (this.writtenAt.get(key) ?? 0) + (this.o.minWriteIntervalMs ?? 0) - Date.now() : 0;
    if (wait > 0) return { afterMs: wait };
    const meta = { name, namespace };
    const obj: MeshTrafficObservation = { apiVersion: OBSERVATION_KIND.apiVersion, kind: OBSERVATION_KIND.kind, metadata: meta, spec };
    // written again in full after a failure (the object may have been deleted under us)
    this.written.delete(key);
    if (!had || had.spec !== want.spec) await this.o.store.apply(obj, { fieldManager: FIELD_MANAGER });
    try {
      await this.o.store.updateStatus<MeshTrafficObservation>({ ...obj, status });
    } catch (err) {
      // deleted by someone since we wrote it: make it again
      if (!isStraitError(err, 'STRAIT_ERR_NOT_FOUND')) throw err;
      await this.o.store.apply(obj, { fieldManager: FIELD_MANAGER });
      await this.o.store.updateStatus<MeshTrafficObservation>({ ...obj, status });
    }
    this.written.set(key, want);
    this.writtenAt.set(key, Date.now());
    this.stored.add(key);
    this.writes++;
    return undefined;
  }

  /** Wait until every queued write is done (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
  }
}
