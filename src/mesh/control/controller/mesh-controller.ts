// The mesh controller of one cluster: watches the mesh resources in the store, keeps a
// workload certificate per service account (rotated before expiry), publishes the root in
// member namespaces, and writes each injected pod's sidecar configuration to
// <dir>/<namespace>/<pod>.json (atomically; the sidecar re-reads it when it changes).
// Reconcile is one pass over a fresh list: list → view → certificates → files.
import { chownSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { reconcileOnChange, type ReconcileLoop } from '../../../platform/controller/index.js';
import { Kinds, type KindInfo } from '../../../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { CertRotator, publishRootCert, type MeshCa, type WorkloadCert } from '../ca/index.js';
import type { SidecarConfig } from '../../dataplane/proxy/index.js';
import { buildMeshView, generatedPolicies, GENERATED_ANNOTATION, sidecarConfigFor, type MeshView } from '../policy/index.js';
import { ingressConfigFor, type IngressRouteSpec } from './ingress-config.js';

export const INGRESS_FILE = 'ingress.json';

/** Every kind mesh policy depends on. */
export const MESH_KINDS: readonly KindInfo[] = [
  Kinds.Namespace,
  Kinds.Pod,
  Kinds.Deployment,
  Kinds.Service,
  Kinds.ServiceMeshControlPlane,
  Kinds.ServiceMeshMemberRoll,
  Kinds.PeerAuthentication,
  Kinds.DestinationRule,
];

export async function listMeshObjects(store: ResourceStore): Promise<{ objects: KubeObject[]; versions: Map<string, string> }> {
  const objects: KubeObject[] = [];
  const versions = new Map<string, string>();
  for (const k of MESH_KINDS) {
    const l = await store.list({ apiVersion: k.apiVersion, kind: k.kind });
    objects.push(...l.items);
    versions.set(k.kind, l.resourceVersion);
  }
  return { objects, versions };
}

export interface MeshControllerOptions {
  store: ResourceStore;
  ca: MeshCa;
  /** where the sidecar configurations go: <dir>/<namespace>/<pod>.json */
  dir: string;
  /** owner of the files (the proxy uid); unset = leave as is */
  proxyUid?: number;
  /** debounce of change bursts, default 20 ms */
  debounceMs?: number;
  /** lifetime of workload certificates, default 24 h; each is re-issued at half its lifetime */
  workloadLifetimeMs?: number;
  log?: Logger;
  /** called after every reconcile (tests, status) */
  onReconciled?: (r: ReconcileResult) => void;
  /** also write <dir>/ingress.json for the ingress gateway (its own identity, routes to mesh services) */
  ingress?: { namespace: string; serviceAccount: string; routes: IngressRouteSpec[] };
}

/**
 * What a pod's proxy is to enforce, as the controller last computed it (Kubernetes mode: the
 * mesh config server hands it to the pod's sidecar): `mesh` = its configuration (JSON text);
 * `outside` = the pod is known but not in the mesh (why: not a member namespace, no injection);
 * undefined = the controller has not seen the pod (yet).
 */
export type PodConfigState = { state: 'mesh'; serviceAccount: string; text: string } | { state: 'outside'; serviceAccount: string; why: string };

export interface ReconcileResult {
  written: string[];
  removed: string[];
  /** the configurations that changed in this pass (what `written` holds) */
  changed: { namespace: string; pod: string; config: SidecarConfig }[];
  view: MeshView;
}

export class MeshController {
  private readonly rotators = new Map<string, CertRotator>();
  private readonly certs = new Map<string, WorkloadCert>();
  private readonly written = new Map<string, string>();
  /** every pod of the last reconcile: ns/name -> service account, in the mesh or why not */
  private pods = new Map<string, { serviceAccount: string; sidecar: boolean; why: string }>();
  private members = new Set<string>();
  /** the member namespaces that did not exist at the last reconcile (logged when that changes) */
  private missingMembers = '';
  /** kind/namespace/name -> reason of an invalid policy already reported */
  private readonly reportedInvalid = new Map<string, string>();
  private loop: ReconcileLoop | undefined;
  private stopped = false;
  reconciles = 0;

  constructor(private readonly o: MeshControllerOptions) {}

  /**
   * First reconcile, then the controller kit's loop: every event and re-list of the mesh
   * kinds triggers a (debounced) reconcile; a failed one is retried with the backoff.
   */
  async start(): Promise<ReconcileResult> {
    const first = await this.reconcile();
    if (!this.stopped) {
      this.loop = reconcileOnChange(
        this.o.store,
        MESH_KINDS.map((k) => ({ apiVersion: k.apiVersion, kind: k.kind })),
        async () => {
          await this.reconcile();
        },
        {
          debounceMs: this.o.debounceMs ?? 20,
          onError: (err) => this.o.log?.warn({ err: String(err) }, 'mesh reconcile failed; retrying'),
        },
      );
    }
    return first;
  }

  /** Reconcile soon (debounced); before start() finished, nothing. */
  schedule(): void {
    this.loop?.schedule();
  }

  private async certFor(ns: string, sa: string): Promise<WorkloadCert> {
    const key = `${ns}/${sa}`;
    let cert = this.certs.get(key);
    if (!cert) {
      const rotator = new CertRotator({
        ca: this.o.ca,
        namespace: ns,
        serviceAccount: sa,
        ...(this.o.workloadLifetimeMs ? { issue: { lifetimeMs: this.o.workloadLifetimeMs } } : {}),
        onError: (err) => this.o.log?.warn({ err: String(err), workload: key }, 'certificate rotation failed; retrying in a minute'),
        onRotate: (c) => {
          const had = this.certs.has(key);
          this.certs.set(key, c);
          if (had) this.schedule(); // a rotated certificate goes out with the next files
        },
      });
      this.rotators.set(key, rotator);
      cert = await rotator.start();
    }
    return cert;
  }

  async reconcile(): Promise<ReconcileResult> {
    const { objects } = await listMeshObjects(this.o.store);
    const view = buildMeshView(objects);
    this.reportInvalid(view);
    await this.syncGenerated(view, objects);
    const missing: string[] = [];
    await publishRootCert(this.o.store, [...view.members], this.o.ca.rootPem, missing);
    const missingKey = missing.sort().join(',');
    if (missingKey !== this.missingMembers) {
      this.missingMembers = missingKey;
      if (missing.length > 0) this.o.log?.warn({ members: missing }, 'member namespaces that do not exist (yet): the mesh goes on without them');
    }
    const want = new Set<string>();
    const written: string[] = [];
    const changed: ReconcileResult['changed'] = [];
    const pods = new Map<string, { serviceAccount: string; sidecar: boolean; why: string }>();
    for (const w of view.workloads)
      if (!w.fromDeployment) pods.set(`${w.namespace}/${w.name}`, { serviceAccount: w.serviceAccount, sidecar: w.sidecar, why: w.injection });
    for (const w of view.workloads) {
      if (!w.sidecar) continue;
      const cert = await this.certFor(w.namespace, w.serviceAccount);
      const identity = { certPem: cert.certPem, keyPem: cert.keyPem, rootPem: cert.rootPem };
      let cfg: SidecarConfig;
      try {
        cfg = sidecarConfigFor(view, w, identity);
      } catch (err) {
        // fail closed: a workload whose policy cannot be computed requires mTLS inbound
        this.o.log?.warn({ err: String(err), workload: `${w.namespace}/${w.name}` }, 'sidecar configuration cannot be computed; enforcing STRICT');
        cfg = { identity, inbound: { defaultMode: 'STRICT', ports: {} }, outbound: { default: { mode: 'DISABLE' }, destinations: {} } };
      }
      const rel = join(w.namespace, `${w.name}.json`);
      want.add(rel);
      const text = JSON.stringify(cfg);
      if (this.written.get(rel) === text) continue;
      this.writeAtomic(rel, text);
      this.written.set(rel, text);
      written.push(rel);
      changed.push({ namespace: w.namespace, pod: w.name, config: cfg });
    }
    if (this.o.ingress) {
      const g = this.o.ingress;
      const cert = await this.certFor(g.namespace, g.serviceAccount);
      const cfg = ingressConfigFor(view, g.routes, g, { certPem: cert.certPem, keyPem: cert.keyPem, rootPem: cert.rootPem });
      const text = JSON.stringify(cfg);
      want.add(INGRESS_FILE);
      if (this.written.get(INGRESS_FILE) !== text) {
        this.writeAtomic(INGRESS_FILE, text);
        this.written.set(INGRESS_FILE, text);
        written.push(INGRESS_FILE);
      }
    }
    const removed: string[] = [];
    for (const rel of [...this.written.keys()]) {
      if (want.has(rel)) continue;
      rmSync(join(this.o.dir, rel), { force: true });
      this.written.delete(rel);
      removed.push(rel);
    }
    this.pods = pods;
    this.members = view.members;
    this.reconciles++;
    const result = { written, removed, changed, view };
    this.o.onReconciled?.(result);
    return result;
  }

  /** One Warning Event (and a log line) per invalid policy and reason; the rest of the mesh goes on. */
  private reportInvalid(view: MeshView): void {
    const now = new Set<string>();
    for (const p of view.invalid) {
      const k = `${p.kind}/${p.namespace}/${p.name}`;
      now.add(k);
      if (this.reportedInvalid.get(k) === p.reason) continue;
      this.reportedInvalid.set(k, p.reason);
      this.o.log?.warn({ policy: k, reason: p.reason, action: p.action }, 'mesh policy does not parse');
      const info = p.kind === 'PeerAuthentication' ? Kinds.PeerAuthentication : Kinds.DestinationRule;
      this.o.store
        .recordEvent({
          involvedObject: { apiVersion: info.apiVersion, kind: p.kind, name: p.name, ...(p.namespace ? { namespace: p.namespace } : {}) },
          type: 'Warning',
          reason: 'InvalidPolicy',
          message: `${p.reason}; ${p.action}`,
          source: 'strait-mesh',
        })
        .catch((err: unknown) => this.o.log?.warn({ err: String(err), policy: k }, 'cannot record the Event'));
    }
    for (const k of [...this.reportedInvalid.keys()]) if (!now.has(k)) this.reportedInvalid.delete(k);
  }

  /**
   * Keep the objects the operator generates from the SMCP in the store, as OSSM does (so
   * `strait get peerauthentications -n istio-system` shows them): applied when missing or
   * different, deleted when the SMCP no longer asks for them.
   */
  private async syncGenerated(view: MeshView, objects: KubeObject[]): Promise<void> {
    const gen = generatedPolicies(view.settings);
    const want = [...gen.peerAuthentications, ...gen.destinationRules];
    const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
    const stored = new Map(objects.filter((o) => o.metadata.annotations?.[GENERATED_ANNOTATION] !== undefined).map((o) => [key(o), o]));
    for (const g of want) {
      const have = objects.find((o) => key(o) === key(g));
      if (have && JSON.stringify(have.spec) === JSON.stringify(g.spec) && have.metadata.annotations?.[GENERATED_ANNOTATION] !== undefined) {
        stored.delete(key(g));
        continue;
      }
      const { creationTimestamp: _drop, ...metadata } = g.metadata;
      await this.o.store.apply({ ...g, metadata }, { fieldManager: 'strait-mesh-operator' });
      stored.delete(key(g));
    }
    for (const o of stored.values()) {
      await this.o.store.delete({ apiVersion: o.apiVersion, kind: o.kind }, o.metadata.name, o.metadata.namespace);
    }
  }

  private writeAtomic(rel: string, text: string): void {
    const file = join(this.o.dir, rel);
    const dir = join(file, '..');
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, text, { mode: 0o600 });
    if (this.o.proxyUid !== undefined) chownSync(tmp, this.o.proxyUid, this.o.proxyUid);
    renameSync(tmp, file);
  }

  /** The configuration of pod ns/name as last reconciled (see PodConfigState). */
  podConfig(namespace: string, pod: string): PodConfigState | undefined {
    const p = this.pods.get(`${namespace}/${pod}`);
    if (!p) return undefined;
    if (!p.sidecar) return { state: 'outside', serviceAccount: p.serviceAccount, why: p.why };
    const text = this.written.get(join(namespace, `${pod}.json`));
    // a member pod whose configuration is not written yet: not seen, as far as its proxy goes
    return text === undefined ? undefined : { state: 'mesh', serviceAccount: p.serviceAccount, text };
  }

  /** Is the namespace a member of the mesh (as last reconciled)? */
  isMember(namespace: string): boolean {
    return this.members.has(namespace);
  }

  /** The ingress gateway's configuration (JSON text), when the controller has an `ingress`. */
  ingressConfig(): string | undefined {
    return this.written.get(INGRESS_FILE);
  }

  /** Files currently written, relative to dir. */
  files(): string[] {
    return readdirSync(this.o.dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.json'))
      .sort();
  }

  stop(): void {
    this.stopped = true;
    this.loop?.stop();
    for (const r of this.rotators.values()) r.stop();
  }
}
