// Gateway HA: which of a cluster's two gateway nodes is active, decided by a Lease
// (coordination.k8s.io/v1) in the cluster's resource store, as Kubernetes leader election
// does: the holder renews it every `renewMs`; the other one takes it when it has not
// changed for `leaseDurationMs` (observed on its own monotonic clock, so no clock skew
// matters), or at once when it knows the holder's process is gone (`takeOver`, called by
// the daemon when its liveness link to the holder breaks). Every write is a compare-and-swap
// on the resourceVersion, so two candidates can never both win one transition.
//
// Kubernetes' Lease has whole seconds; the millisecond duration is kept in the annotation
// `strait.dev/lease-duration-ms` (leaseDurationSeconds is the rounded-up value), renewTime
// and acquireTime are RFC 3339 with microseconds (MicroTime). leaseTransitions is the
// epoch the active gateway announces to the node agents.
//
// A store that cannot be reached changes nothing: the active gateway stays active (its
// tunnels do not depend on the store) and the passive one cannot take over; only a lease
// that another holder wrote demotes the active one (`onLost`). With `renewDeadlineMs`
// (Kubernetes mode, as client-go's RenewDeadline) that is different: an active candidate
// that has not renewed successfully for that long gives the role up (`onLost`), and only
// successful renewals are confirmed (`onRenewed`), so the data plane fences itself before
// the other candidate may take the lease (renewDeadline < leaseDuration). That fence is
// for a rival only: with `rivals` saying no other candidate is known (a cluster's one
// gateway), an overdue renewal keeps the role (`onKeptAlone`, once per outage): nobody can
// take the lease, and giving it up would only cut the cluster's tunnels while its API
// server restarts (Submariner keeps its cables when its lease cannot be renewed too).
//
// With `create` (Kubernetes: POST, 409 AlreadyExists = another candidate created it
// first) a missing lease is created atomically; without it (the world's store has no
// create-only write) it is applied and read back, and `createDelayMs` avoids double wins.
import { isStraitError } from '../../../base/errors/index.js';
import type { KindRef, KubeObject, ResourceStore } from '../../../platform/store/index.js';

export const LEASE_KIND: KindRef = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };
export const ANN_LEASE_MS = 'strait.dev/lease-duration-ms';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface ElectorOptions {
  store: ResourceStore;
  namespace: string;
  name: string;
  /** this candidate (the gateway's node name) */
  identity: string;
  leaseDurationMs: number;
  renewMs: number;
  /**
   * this candidate holds the lease; `epoch` = leaseTransitions; `why` says how it got it;
   * `former`: the other candidate it took the lease from (not after a release or creation)
   */
  onActive: (epoch: number, why: string, former?: string) => void;
  /** another candidate holds it (or nobody yet) */
  onPassive: (holder: string | undefined, epoch: number) => void;
  /** this candidate held it and another one wrote it since: stop being active (the daemon exits) */
  onLost: (holder: string | undefined, why?: string) => void;
  onError?: (err: unknown) => void;
  /**
   * While active: the lease is confirmed as of `at` (this.now() when the renewal was sent:
   * it succeeded, or the store could not be reached, which changes nothing). The daemon
   * fences the data plane at `at + leaseDurationMs`.
   */
  onRenewed?: (at: number) => void;
  /**
   * How long the lease must be missing before this candidate creates it (the store has no
   * create-only write, so two creators could both believe they won once): 0 for the
   * cluster's first gateway, the lease duration for the other.
   */
  createDelayMs?: number;
  /** create-only write of a missing lease: true when this call created it, false when it existed */
  create?: (lease: KubeObject<LeaseSpec>) => Promise<boolean>;
  /** create the lease's Namespace first (the world's store; not on Kubernetes, where RBAC forbids it) */
  ensureNamespace?: boolean;
  /** give the role up when no renewal succeeded for this long (client-go RenewDeadline); default: never */
  renewDeadlineMs?: number;
  /**
   * With renewDeadlineMs: whether another candidate could take the lease now (a second
   * gateway of the cluster is known); asked when the deadline passes. false: the role is
   * kept (nobody can take it). Default: a rival is assumed.
   */
  rivals?: () => boolean;
  /** the renew deadline passed with no rival known: the role is kept (called once until a renewal succeeds) */
  onKeptAlone?: (sinceMs: number) => void;
  /** monotonic ms (tests) */
  now?: () => number;
}

/** RFC 3339 with microseconds, as Kubernetes writes MicroTime. */
export function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaseElector {
  private readonly o: ElectorOptions;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private busy = false;
  /** last lease read or written, and when (monotonic) its resourceVersion was first seen */
  private observed: KubeObject<LeaseSpec> | undefined;
  private observedAt = 0;
  private active = false;
  private missingSince: number | undefined;
  private lastRole: string | undefined;
  /** when (monotonic) the last successful renewal was sent */
  private confirmedAt = 0;
  /** the other candidate this one took the lease from (for onActive) */
  private former: string | undefined;
  /** the renew deadline passed with no rival known (onKeptAlone said so) */
  private keptAlone = false;

  constructor(opts: ElectorOptions) {
    this.o = opts;
    this.now = opts.now ?? (() => performance.now());
  }

  get isActive(): boolean {
    return this.active;
  }

  /** the holder in the last lease seen */
  get holder(): string | undefined {
    return this.observed?.spec?.holderIdentity || undefined;
  }

  get epoch(): number {
    return this.observed?.spec?.leaseTransitions ?? 0;
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Give the lease up (graceful stop of the active one): the other candidate takes it at once. */
  async release(): Promise<void> {
    this.stop();
    const l = this.observed;
    if (!this.active || !l) return;
    this.active = false;
    await this.o.store.update({ ...l, spec: { ...l.spec, holderIdentity: '' } }).catch(() => undefined);
  }

  /**
   * The holder `who` is known to be gone (its liveness link closed): take the lease now
   * if it still names `who`, without waiting for it to expire.
   */
  async takeOver(who: string): Promise<boolean> {
    for (let i = 0; i < 3 && !this.stopped && !this.active; i++) {
      const l = await this.read().catch(() => undefined);
      if (!l || (l.spec?.holderIdentity ?? '') !== who) return false;
      this.why = `the holder ${who} is gone (liveness link closed)`;
      if (await this.acquire(l)) return true;
    }
    return false;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.loop(), ms);
  }

  private async read(): Promise<KubeObject<LeaseSpec> | undefined> {
    const l = await this.o.store.get<KubeObject<LeaseSpec>>(LEASE_KIND, this.o.name, this.o.namespace);
    if (l && l.metadata.resourceVersion !== this.observed?.metadata.resourceVersion) {
      this.observed = l;
      this.observedAt = this.now();
    }
    return l;
  }

  private spec(prev: LeaseSpec | undefined, taking: boolean): LeaseSpec {
    const t = microTime();
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.o.leaseDurationMs / 1000)),
      acquireTime: taking ? t : (prev?.acquireTime ?? t),
      renewTime: t,
      leaseTransitions:
        (prev?.leaseTransitions ?? 0) + (taking && (prev?.holderIdentity ?? '') !== this.o.identity && prev?.holderIdentity !== undefined ? 1 : 0),
    };
  }

  /** Compare-and-swap the lease to this candidate; true when it is ours now. */
  private async acquire(l: KubeObject<LeaseSpec> | undefined): Promise<boolean> {
    const store = this.o.store;
    const startedAt = this.now();
    const taken = !this.active;
    try {
      let written: KubeObject<LeaseSpec>;
      this.former = undefined;
      if (!l) {
        if (this.o.ensureNamespace !== false)
          await store.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.o.namespace } }).catch(() => undefined);
        const lease: KubeObject<LeaseSpec> = {
          ...LEASE_KIND,
          metadata: { name: this.o.name, namespace: this.o.namespace, annotations: { [ANN_LEASE_MS]: String(this.o.leaseDurationMs) } },
          spec: { ...this.spec(undefined, true), leaseTransitions: 0 },
        };
        if (this.o.create) {
          if (!(await this.o.create(lease))) {
            await this.read();
            return false;
          }
        } else await store.apply(lease);
        // apply merges: whoever wrote last holds it; read back to know
        const back = await this.read();
        if (back?.spec?.holderIdentity !== this.o.identity) return false;
        written = back;
      } else {
        const taking = l.spec?.holderIdentity !== this.o.identity;
        if (taking && l.spec?.holderIdentity) this.former = l.spec.holderIdentity;
        written = await store.update<KubeObject<LeaseSpec>>({
          ...l,
          metadata: { ...l.metadata, annotations: { ...l.metadata.annotations, [ANN_LEASE_MS]: String(this.o.leaseDurationMs) } },
          spec: this.spec(l.spec, taking),
        });
      }
      // an answer that comes after the role was given up (a renewal past its deadline) changes nothing
      if (this.stopped) return false;
      this.observed = written;
      this.observedAt = this.now();
      this.confirmedAt = startedAt;
      this.becomeActive();
      if (taken) this.o.onRenewed?.(startedAt);
      return true;
    } catch (err) {
      if (isStraitError(err) && (err.code === 'STRAIT_ERR_CONFLICT' || err.code === 'STRAIT_ERR_NOT_FOUND')) return false;
      throw err;
    }
  }

  private becomeActive(): void {
    this.active = true;
    const role = `active@${this.epoch}`;
    if (this.lastRole !== role) {
      this.lastRole = role;
      this.o.onActive(this.epoch, this.why, this.former);
    }
  }

  /** why the last acquisition happened (logged with onActive) */
  private why = 'created';

  private becomePassive(): void {
    const role = `passive:${this.holder ?? ''}@${this.epoch}`;
    if (this.lastRole !== role) {
      this.lastRole = role;
      this.o.onPassive(this.holder, this.epoch);
    }
  }

  /**
   * One renewal: ok (ours still, or the store unreachable: `failed`) or not (another holder
   * wrote it). A request the network swallows (dropped, not refused) must not hold the role
   * past the renew deadline: it ends there as a failed renewal (client-go bounds its renew
   * attempts the same way), so the peers hear the fence when it happens; kept alone past
   * the deadline there is nothing to bound, and each attempt gets its answer.
   */
  private async renew(l: KubeObject<LeaseSpec> | undefined): Promise<{ ok: boolean; failed: boolean }> {
    let failed = false;
    const deadline = this.o.renewDeadlineMs;
    const attempt = this.acquire(l).catch((err: unknown) => {
      this.o.onError?.(err);
      failed = true;
      return true; // store unreachable: keep the role (until renewDeadlineMs, when set)
    });
    if (deadline === undefined || this.keptAlone) return { ok: await attempt, failed };
    let timer: NodeJS.Timeout | undefined;
    const swallowed = new Promise<boolean>((resolve) => {
      timer = setTimeout(
        () => {
          this.o.onError?.(new Error(`the lease renewal got no answer before the renew deadline (${deadline} ms)`));
          failed = true;
          resolve(true);
        },
        Math.max(0, this.confirmedAt + deadline - this.now()) + 1,
      );
    });
    const ok = await Promise.race([attempt, swallowed]);
    clearTimeout(timer);
    return { ok, failed };
  }

  private async loop(): Promise<void> {
    if (this.stopped || this.busy) return;
    this.busy = true;
    let next = this.o.renewMs;
    try {
      if (this.active) {
        // renew: a conflict means someone else wrote the lease
        const l = this.observed;
        const at = this.now();
        const deadline = this.o.renewDeadlineMs;
        const { ok, failed } = await this.renew(l);
        if (failed && deadline !== undefined) {
          const overdue = this.now() - this.confirmedAt;
          if (overdue > deadline && this.o.rivals && !this.o.rivals()) {
            if (!this.keptAlone) this.o.onKeptAlone?.(overdue);
            this.keptAlone = true;
          } else if (overdue > deadline) {
            this.active = false;
            this.stop();
            this.o.onLost(undefined, `no renewal succeeded within the renew deadline (${deadline} ms)`);
            return;
          }
        } else if (ok) {
          this.keptAlone = false;
          this.o.onRenewed?.(at);
        }
        if (!ok) {
          const now = await this.read().catch(() => undefined);
          if (now?.spec?.holderIdentity !== this.o.identity || !(await this.acquire(now).catch(() => true))) {
            this.active = false;
            this.stop();
            this.o.onLost(now?.spec?.holderIdentity);
            return;
          }
        }
      } else {
        const l = await this.read();
        const holder = l?.spec?.holderIdentity ?? '';
        const expired = l !== undefined && this.now() - this.observedAt >= this.o.leaseDurationMs;
        if (l) this.missingSince = undefined;
        else this.missingSince ??= this.now();
        const mayCreate = !l && this.now() - (this.missingSince ?? 0) >= (this.o.createDelayMs ?? 0);
        // missing (and ours to create), ours from a previous life of this process, free, or not renewed in time: take it
        if (mayCreate || (l && (holder === '' || holder === this.o.identity || expired))) {
          this.why = !l
            ? 'created'
            : holder === ''
              ? 'released'
              : holder === this.o.identity
                ? 'held by this node before a restart'
                : `expired: not renewed by ${holder} for ${Math.round(this.now() - this.observedAt)} ms`;
          if (!(await this.acquire(l))) this.becomePassive();
        } else {
          this.becomePassive();
        }
        // poll faster than the renewals, so expiry is seen within a poll of the deadline
        next = Math.max(25, Math.floor(this.o.renewMs / 2));
      }
    } catch (err) {
      this.o.onError?.(err);
    } finally {
      this.busy = false;
    }
    this.schedule(next);
  }
}
