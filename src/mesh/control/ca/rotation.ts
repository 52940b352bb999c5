// Rotation of a workload certificate before it expires. As istio-agent does, a new
// certificate is issued when less than `graceRatio` of the lifetime remains (default
// half). The new certificate is handed to `onRotate` (the sidecar swaps its TLS
// contexts; connections already open keep the certificate they were made with).
import { systemClock, type Clock } from '../../../base/clock/index.js';
import type { IssueOptions, MeshCa, WorkloadCert } from './mesh-ca.js';

export interface RotatorOptions {
  ca: MeshCa;
  namespace: string;
  serviceAccount: string;
  issue?: IssueOptions;
  /** rotate when remaining/lifetime drops below this; default 0.5 */
  graceRatio?: number;
  clock?: Clock;
  onRotate: (cert: WorkloadCert) => void;
  /** told when a scheduled rotation failed (it is retried a minute later) */
  onError?: (err: unknown) => void;
}

export class CertRotator {
  private cert: WorkloadCert | undefined;
  private timer: { cancel(): void } | undefined;
  private stopped = false;
  rotations = 0;

  constructor(private readonly opts: RotatorOptions) {}

  /** Issue the first certificate, hand it over and schedule its rotation. */
  start(): Promise<WorkloadCert> {
    return this.rotateNow();
  }

  current(): WorkloadCert | undefined {
    return this.cert;
  }

  /** Milliseconds from issue until rotation for a certificate. */
  static rotateAfterMs(cert: WorkloadCert, graceRatio: number, now: number): number {
    const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
    const at = cert.notAfter.getTime() - lifetime * graceRatio;
    return Math.max(0, at - now);
  }

  /** Issue now (the key is made off the event loop), hand the certificate over, schedule the next. */
  async rotateNow(): Promise<WorkloadCert> {
    const clock = this.opts.clock ?? systemClock;
    const issue = this.opts.issue ?? {};
    const cert = await this.opts.ca.issue(
      this.opts.namespace,
      this.opts.serviceAccount,
      this.opts.clock ? { ...issue, notBefore: new Date(clock.now()) } : issue,
    );
    if (this.stopped && this.cert) return this.cert; // stopped while issuing: keep what was handed over
    this.cert = cert;
    this.rotations++;
    this.opts.onRotate(cert);
    this.schedule(cert);
    return cert;
  }

  private schedule(cert: WorkloadCert): void {
    this.timer?.cancel();
    if (this.stopped) return;
    const clock = this.opts.clock ?? systemClock;
    const wait = CertRotator.rotateAfterMs(cert, this.opts.graceRatio ?? 0.5, clock.now());
    // setTimeout takes at most 2^31-1 ms; re-check then
    const capped = Math.min(wait, 0x7fffffff);
    this.timer = clock.setTimeout(() => {
      if (capped < wait) this.schedule(cert);
      else this.rotateNow().catch((err: unknown) => this.retry(err));
    }, capped);
  }

  /** An issue that failed (it should not: the CA is local) is tried again in a minute. */
  private retry(err: unknown): void {
    this.opts.onError?.(err);
    if (this.stopped) return;
    const clock = this.opts.clock ?? systemClock;
    this.timer = clock.setTimeout(() => {
      this.rotateNow().catch((e: unknown) => this.retry(e));
    }, 60_000);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }
}
