// The GitOps controller: watches Applications and AppProjects in its namespace and the
// key store ConfigMap, and reconciles Applications through a deduplicating work queue.
// Triggers: an Application's spec changed, its project changed, the keys changed, the
// polling interval, a push reported by the code-hosting server (notifyPush), or a sync
// asked for through the API (syncNow). Transient failures are retried with backoff,
// waiting ones after a delay, stalled ones only when something changes.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { E } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import { Informer, KeyQueue, eventHandlers, type Requeue } from '../../platform/controller/index.js';
import { GROUPS, Kinds } from '../../platform/resources/index.js';
import type { VerificationResult } from '../../platform/signatures/index.js';
import type { ResourceStore, WatchEvent } from '../../platform/store/index.js';
import { RepoCache } from './git-cache.js';
import { KeyStore } from './key-store.js';
import { SshSignerStore } from './ssh-signer-store.js';
import type { GitOpsMetrics } from './metrics.js';
import { enforcesSignatures } from './project.js';
import { insteadOfRules, rewriteRepoURL, sameRepoURL } from './repo-url.js';

/** the URL rewrites the controller's git applies (a local world names its code-hosting server's host URLs, this run's and earlier ones') */
const REWRITES = insteadOfRules(process.env);
import { reconcileApplication, type ReconcileDeps, type ReconcileOutcome } from './reconcile.js';
import { HistoryVerifier } from './strict-history.js';
import type { AppProject, Application } from './types.js';

export interface GitOpsControllerOptions {
  /** the store of the controller's own cluster: Applications, AppProjects, the key store, Secrets */
  store: ResourceStore;
  /** the controller's namespace (default argocd) */
  namespace?: string;
  /** destination.server -> the store of that cluster; default: in-cluster addresses -> `store` */
  destinations?: (server: string) => ResourceStore | undefined;
  /** state dir; repository mirrors go to <stateDir>/gitops/repos */
  stateDir: string;
  /** polling interval (default 180 s, as Argo CD's timeout.reconciliation) */
  pollIntervalMs?: number;
  /** parallel reconciles (default 8) */
  concurrency?: number;
  /** delay before retrying a waiting failure (default 5 s) */
  waitingRetryMs?: number;
  log?: Logger;
  metrics?: GitOpsMetrics;
  now?: () => Date;
}

export const REFRESH_ANNOTATION = `${GROUPS.gitops.replace(/^argoproj\.io$/, 'argocd.argoproj.io')}/refresh`;

export const IN_CLUSTER_SERVERS = ['https://kubernetes.default.svc', 'https://kubernetes.default.svc.cluster.local', 'in-cluster'];

/** Only reconciledAt moved, and not long ago: skip the write (one durable write per Application per poll adds up). */
function unchangedStatus(before: Application['status'], after: Application['status']): boolean {
  if (!before || !after) return false;
  const { reconciledAt: a, ...restBefore } = before;
  const { reconciledAt: _b, ...restAfter } = after;
  if (!a || Date.now() - Date.parse(a) > 10 * 60_000) return false;
  return JSON.stringify(restBefore) === JSON.stringify(restAfter);
}

/** Transient failures: 1 s, 2 s, ... at most 5 min (a broken repository is not hammered). */
const RETRY_BACKOFF = { initialMs: 1000, maxMs: 300_000 };

/** What the next run of an Application must do, gathered while it waits in the queue. */
interface Job {
  sync: boolean;
  waiters: ((o: ReconcileOutcome | undefined) => void)[];
}

export class GitOpsController {
  readonly namespace: string;
  readonly keys: KeyStore;
  readonly sshSigners: SshSignerStore;
  readonly repos: RepoCache;
  private readonly store: ResourceStore;
  private readonly log: Logger;
  private readonly apps = new Map<string, Application>();
  private readonly projects = new Map<string, AppProject>();
  private readonly seenSpec = new Map<string, string>();
  private readonly jobs = new Map<string, Job>();
  private readonly queue: KeyQueue;
  private readonly verifyCache = new Map<string, VerificationResult>();
  private readonly informers: Informer[] = [];
  private pollTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly deps: ReconcileDeps;

  constructor(private readonly opts: GitOpsControllerOptions) {
    this.store = opts.store;
    this.namespace = opts.namespace ?? 'argocd';
    this.log = opts.log ?? silentLogger();
    this.keys = new KeyStore(this.store, this.namespace, undefined, this.log);
    this.sshSigners = new SshSignerStore(this.store, this.namespace, undefined, this.log);
    this.repos = new RepoCache(join(opts.stateDir, 'gitops', 'repos'), 1000);
    this.queue = new KeyQueue((name) => this.work(name), { concurrency: opts.concurrency ?? 8, backoff: RETRY_BACKOFF });
    const destinations = opts.destinations ?? ((server: string) => (IN_CLUSTER_SERVERS.includes(server) ? this.store : undefined));
    this.deps = {
      repos: this.repos,
      keyring: () => ({ ring: this.keys.keyring, version: this.keys.version }),
      sshSigners: () => ({ signers: this.sshSigners.signers, version: this.sshSigners.version }),
      project: (name) => this.projects.get(name),
      destination: destinations,
      verifyCache: this.verifyCache,
      history: new HistoryVerifier(this.repos),
      renderCache: new Map(),
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
      now: opts.now ?? (() => new Date()),
      beginSync: (app, status) => this.recordSyncStart(app, status),
    };
  }

  async start(): Promise<void> {
    await this.keys.start(() => this.requeueEnforcing());
    await this.sshSigners.start(() => this.requeueEnforcing());
    const watchEnded = (err: unknown): void => this.log.debug({ err }, 'watch ended; listing again');
    const projInf = new Informer<AppProject>(
      this.store,
      Kinds.AppProject,
      { namespace: this.namespace },
      eventHandlers((ev) => this.onProject(ev), watchEnded),
    ).start();
    this.informers.push(projInf);
    await projInf.firstSync;
    const appInf = new Informer<Application>(
      this.store,
      Kinds.Application,
      { namespace: this.namespace },
      eventHandlers((ev) => this.onApp(ev), watchEnded),
    ).start();
    this.informers.push(appInf);
    await appInf.firstSync;
    const every = this.opts.pollIntervalMs ?? 180_000;
    this.pollTimer = setInterval(() => this.poll(), every);
    this.pollTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const i of this.informers) i.stop();
    this.keys.stop();
    this.sshSigners.stop();
    this.queue.stop();
    this.repos.close();
    for (const job of this.jobs.values()) for (const w of job.waiters) w(undefined);
    this.jobs.clear();
  }

  /** The code-hosting server calls this on a push: fetch now, then reconcile the Applications of that repository. */
  notifyPush(repoURL: string): void {
    // compared as git fetches them: a repoURL naming the server by an earlier address is the same repository
    const pushed = rewriteRepoURL(repoURL, REWRITES);
    const names = [...this.apps.values()]
      .filter((a) => sameRepoURL(rewriteRepoURL(a.spec?.source?.repoURL ?? '', REWRITES), pushed))
      .map((a) => a.metadata.name);
    if (names.length === 0) return;
    const url = this.apps.get(names[0]!)?.spec?.source?.repoURL ?? repoURL;
    void this.repos
      .sync(url, { force: true })
      .catch(() => undefined)
      .then(() => {
        for (const n of names) this.enqueue(n);
      });
  }

  /** Reconcile one Application now and sync it (strait app sync); resolves with the status written. */
  async syncNow(name: string): Promise<ReconcileOutcome | undefined> {
    const app = this.apps.get(name) ?? (await this.store.get<Application>(Kinds.Application, name, this.namespace));
    if (!app) return undefined;
    if (!this.apps.has(name)) this.apps.set(name, app);
    return new Promise((resolve) => this.enqueue(name, { sync: true, waiter: resolve }));
  }

  /** Refresh: compare (and auto-sync) one Application now. */
  refresh(name: string): Promise<ReconcileOutcome | undefined> {
    return new Promise((resolve) => this.enqueue(name, { waiter: resolve }));
  }

  /** Resolves when the queue is empty and nothing runs; retries may be waiting (tests, benchmarks). */
  idle(): Promise<void> {
    return this.queue.drained();
  }

  async getApplication(name: string): Promise<Application | undefined> {
    return this.store.get<Application>(Kinds.Application, name, this.namespace);
  }

  async listApplications(): Promise<Application[]> {
    return (await this.store.list<Application>(Kinds.Application, { namespace: this.namespace })).items;
  }

  async getProject(name: string): Promise<AppProject | undefined> {
    return this.store.get<AppProject>(Kinds.AppProject, name, this.namespace);
  }

  async listProjects(): Promise<AppProject[]> {
    return (await this.store.list<AppProject>(Kinds.AppProject, { namespace: this.namespace })).items;
  }

  /** Create or replace an AppProject's spec, labels and annotations (the API's project create/update). */
  async saveProject(p: AppProject): Promise<AppProject> {
    return this.store.apply<AppProject>(
      {
        apiVersion: `${GROUPS.gitops}/v1alpha1`,
        kind: 'AppProject',
        metadata: {
          name: p.metadata.name,
          namespace: this.namespace,
          ...(p.metadata.labels ? { labels: p.metadata.labels } : {}),
          ...(p.metadata.annotations ? { annotations: p.metadata.annotations } : {}),
        },
        spec: p.spec ?? {},
      },
      { fieldManager: 'strait-gitops' },
    );
  }

  /**
   * Replace an existing AppProject's spec, labels and annotations (the API's project update, as
   * Argo CD's: a field the request leaves out is emptied). `spec.sourceIntegrity` is the one
   * exception: an update without it keeps the stored policies (null removes them), because an
   * argocd older than 3.5 reads and writes projects without knowing the field.
   */
  async replaceProject(p: AppProject): Promise<AppProject> {
    const existing = await this.getProject(p.metadata.name);
    if (!existing) throw E.notFound('AppProject', p.metadata.name, this.namespace);
    const spec: Record<string, unknown> = { ...(p.spec ?? {}) };
    if (!('sourceIntegrity' in spec) && existing.spec?.sourceIntegrity !== undefined) spec['sourceIntegrity'] = existing.spec.sourceIntegrity;
    if (spec['sourceIntegrity'] === null) delete spec['sourceIntegrity'];
    const { labels: _l, annotations: _a, ...meta } = existing.metadata;
    // the resourceVersion just read: a write in between is a conflict, not lost
    return this.store.update<AppProject>({
      ...existing,
      metadata: {
        ...meta,
        ...(p.metadata.labels ? { labels: p.metadata.labels } : {}),
        ...(p.metadata.annotations ? { annotations: p.metadata.annotations } : {}),
      },
      spec: spec as AppProject['spec'] & object,
    });
  }

  /** The Application(s) now (as ADDED), then every change, until the signal aborts (the API's Watch). */
  async *watchApplications(name: string | undefined, signal: AbortSignal): AsyncGenerator<{ type: string; application: Application }> {
    const queue: { type: string; application: Application }[] = [];
    let wake: (() => void) | undefined;
    const push = (ev: { type: string; application: Application }): void => {
      queue.push(ev);
      wake?.();
    };
    const list = await this.store.list<Application>(Kinds.Application, { namespace: this.namespace });
    for (const a of list.items) if (!name || a.metadata.name === name) queue.push({ type: 'ADDED', application: a });
    const w = this.store.watch<Application>(Kinds.Application, { namespace: this.namespace, resourceVersion: list.resourceVersion }, (ev) => {
      if (!name || ev.object.metadata.name === name) push({ type: ev.type, application: ev.object });
    });
    const ended = (): void => wake?.();
    signal.addEventListener('abort', ended);
    let done = false;
    w.done.then(
      () => {
        done = true;
        ended();
      },
      () => {
        done = true;
        ended();
      },
    );
    try {
      while (!signal.aborted) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (done) return;
        await new Promise<void>((r) => {
          wake = r;
        });
        wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', ended);
      w.stop();
    }
  }

  get applicationCount(): number {
    return this.apps.size;
  }

  private onApp(ev: WatchEvent<Application>): void {
    const name = ev.object.metadata.name;
    if (ev.type === 'DELETED') {
      this.apps.delete(name);
      this.seenSpec.delete(name);
      return;
    }
    this.apps.set(name, ev.object);
    // the spec, plus Argo CD's refresh annotation (set it to any new value to force a reconcile)
    const spec = JSON.stringify(ev.object.spec ?? {}) + (ev.object.metadata.annotations?.[REFRESH_ANNOTATION] ?? '');
    if (this.seenSpec.get(name) === spec) return; // our own status write, or no spec change
    this.seenSpec.set(name, spec);
    this.enqueue(name);
  }

  private onProject(ev: WatchEvent<AppProject>): void {
    const name = ev.object.metadata.name;
    const before = JSON.stringify(this.projects.get(name)?.spec ?? null);
    if (ev.type === 'DELETED') this.projects.delete(name);
    else this.projects.set(name, ev.object);
    if (ev.type !== 'DELETED' && before === JSON.stringify(ev.object.spec ?? null)) return;
    for (const a of this.apps.values()) if ((a.spec?.project || 'default') === name) this.enqueue(a.metadata.name);
  }

  private requeueEnforcing(): void {
    for (const a of this.apps.values()) {
      const p = this.projects.get(a.spec?.project || 'default');
      if (p && enforcesSignatures(p)) this.enqueue(a.metadata.name);
    }
  }

  private poll(): void {
    for (const a of this.apps.values()) {
      const url = a.spec?.source?.repoURL;
      if (url) void this.repos.sync(url).catch(() => undefined);
    }
    for (const name of this.apps.keys()) this.enqueue(name);
  }

  private enqueue(name: string, o: { sync?: boolean; waiter?: (x: ReconcileOutcome | undefined) => void } = {}): void {
    if (this.stopped) {
      o.waiter?.(undefined);
      return;
    }
    const job = this.jobs.get(name) ?? { sync: false, waiters: [] };
    job.sync ||= o.sync === true;
    if (o.waiter) job.waiters.push(o.waiter);
    this.jobs.set(name, job);
    this.queue.add(name);
  }

  private async work(name: string): Promise<Requeue> {
    const job = this.jobs.get(name) ?? { sync: false, waiters: [] };
    this.jobs.delete(name);
    const app = this.apps.get(name);
    let outcome: ReconcileOutcome | undefined;
    try {
      if (!app) return undefined;
      outcome = await reconcileApplication(app, this.deps, job.sync);
      await this.writeStatus(app, outcome);
      return this.requeueAfter(outcome);
    } catch (err) {
      this.log.warn({ err, app: name }, 'reconcile failed');
      return 'backoff';
    } finally {
      for (const w of job.waiters) w(outcome);
    }
  }

  /** The status a sync starts with (Running), written before it applies anything (reconcile.ts recordSyncStart). */
  private async recordSyncStart(app: Application, status: NonNullable<Application['status']>): Promise<void> {
    const { resourceVersion: _rv, ...meta } = app.metadata;
    const written = await this.store.updateStatus<Application>({ ...app, metadata: meta, status });
    this.apps.set(app.metadata.name, written);
  }

  private async writeStatus(app: Application, outcome: ReconcileOutcome): Promise<void> {
    this.opts.metrics?.syncs.inc({ result: outcome.result });
    // compared with the status last written (a sync's start may have written one since `app` was read)
    if (!unchangedStatus(this.apps.get(app.metadata.name)?.status ?? app.status, outcome.status)) {
      const { resourceVersion: _rv, ...meta } = app.metadata;
      const written = await this.store.updateStatus<Application>({ ...app, metadata: meta, status: outcome.status });
      this.apps.set(app.metadata.name, written);
    }
    for (const ev of outcome.events) {
      await this.store.recordEvent({
        involvedObject: {
          apiVersion: app.apiVersion,
          kind: 'Application',
          name: app.metadata.name,
          namespace: this.namespace,
          ...(app.metadata.uid ? { uid: app.metadata.uid } : {}),
        },
        type: ev.type,
        reason: ev.reason,
        message: ev.message,
        source: 'strait-gitops',
      });
    }
    if (outcome.failure) this.log.info({ app: app.metadata.name, kind: outcome.failure.kind, reason: outcome.failure.reason }, outcome.failure.message);
    else if (outcome.result === 'synced') this.log.info({ app: app.metadata.name, revision: outcome.status.sync?.revision }, 'synced');
  }

  /** Stalled: only a change helps; waiting: look again after a delay; transient: back off. */
  private requeueAfter(outcome: ReconcileOutcome): Requeue {
    const f = outcome.failure;
    if (!f || f.kind === 'stalled') return undefined;
    if (f.kind === 'waiting') return { afterMs: this.opts.waitingRetryMs ?? 5000 };
    return 'backoff';
  }
}
