// A peer's health as the data path measures it: the endpoint sends a probe (an authenticated
// data packet, next header 1) every `probeMs`; the peer's answer (next header 2) echoes the
// probe's id and send time. Latency (last, min, avg, max, stddev, as Submariner's health
// checker keeps them) comes from answered probes, loss from the probes of the window that
// got no answer within `errorAfterMs`. Evidence of a different PSK at the peer (its
// handshakes fail mac1 or do not decrypt here, or ours go unanswered while the old session
// still answers) is kept with the time it was seen, so the status can name it.
// No timers and no I/O here: the endpoint calls in with its clock's monotonic time.

export interface HealthLimits {
  /** one probe every probeMs */
  probeMs: number;
  /** no answered probe for this long after the last one (or after the handshake): `error` */
  errorAfterMs: number;
  /** loss and latency over the last `window` probes */
  window: number;
  /** evidence of a PSK mismatch counts for this long after it was seen */
  mismatchHoldMs: number;
}

/**
 * Defaults: a probe every 200 ms; `error` 1.8 s after the last answered probe, which leaves
 * the records publisher's 500 ms poll and its write inside the 3 s bound of docs/faults.md;
 * 50 probes (10 s) of loss and latency. At 30 % random loss, 9 probes in a row are all lost
 * with probability 0.3^9 (2e-5): a degraded link stays `connected`.
 */
export const HEALTH_DEFAULTS: Readonly<HealthLimits> = Object.freeze({ probeMs: 200, errorAfterMs: 1800, window: 50, mismatchHoldMs: 10_000 });

export interface LatencyStats {
  lastMs: number;
  minMs: number;
  avgMs: number;
  maxMs: number;
  stddevMs: number;
  samples: number;
}

/** Why a connection is not `connected`, as every surface names it. */
export type HealthReason = 'psk-mismatch' | 'no-handshake-answer' | 'loss 100%' | 'peer fenced' | 'peer-dead';

export class PeerHealth {
  private readonly ids: Float64Array;
  private readonly sentAt: Float64Array;
  private readonly rtt: Float64Array;
  /** 0 sent, 1 answered */
  private readonly answered: Uint8Array;
  private sentCount = 0;
  private readonly samples: Float64Array;
  private sampleHead = 0;
  private sampleCount = 0;
  /** monotonic time of the last answered probe (-1: none since the last reset) */
  lastAnsweredAt = -1;
  /** monotonic time PSK-mismatch evidence was last seen, and what it was */
  mismatchAt = -Infinity;
  mismatchWhat = '';
  /** monotonic time the peer said it is fenced (HA: it lost its lease), -Infinity: never */
  fencedAt = -Infinity;

  constructor(readonly limits: HealthLimits = HEALTH_DEFAULTS) {
    const w = limits.window;
    this.ids = new Float64Array(w).fill(-1);
    this.sentAt = new Float64Array(w);
    this.rtt = new Float64Array(w);
    this.answered = new Uint8Array(w);
    this.samples = new Float64Array(w);
  }

  /** A new session or a new endpoint: what was measured before says nothing about it. */
  reset(): void {
    this.ids.fill(-1);
    this.answered.fill(0);
    this.sentCount = 0;
    this.sampleHead = 0;
    this.sampleCount = 0;
    this.lastAnsweredAt = -1;
  }

  probeSent(id: number, now: number): void {
    const i = id % this.limits.window;
    this.ids[i] = id;
    this.sentAt[i] = now;
    this.answered[i] = 0;
    this.sentCount++;
  }

  /** An authenticated probe reply; returns the RTT, or -1 when it answers no probe of the window (or a second time). */
  probeAnswered(id: number, now: number): number {
    if (!Number.isInteger(id) || id < 0) return -1;
    const i = id % this.limits.window;
    if (this.ids[i] !== id || this.answered[i] === 1) return -1;
    const rtt = now - (this.sentAt[i] as number);
    if (rtt < 0) return -1;
    this.answered[i] = 1;
    this.rtt[i] = rtt;
    this.lastAnsweredAt = now;
    this.samples[this.sampleHead] = rtt;
    this.sampleHead = (this.sampleHead + 1) % this.limits.window;
    if (this.sampleCount < this.limits.window) this.sampleCount++;
    return rtt;
  }

  /**
   * Loss over the probes of the window whose answer is due (sent at least errorAfterMs
   * ago): lost / due, or undefined before any is due. A late answer counts as lost.
   */
  loss(now: number): { lost: number; due: number } | undefined {
    let due = 0;
    let lost = 0;
    const cut = now - this.limits.errorAfterMs;
    for (let i = 0; i < this.limits.window; i++) {
      if ((this.ids[i] as number) < 0 || (this.sentAt[i] as number) > cut) continue;
      due++;
      if (this.answered[i] === 0 || (this.rtt[i] as number) > this.limits.errorAfterMs) lost++;
    }
    return due === 0 ? undefined : { lost, due };
  }

  stats(): LatencyStats | undefined {
    const n = this.sampleCount;
    if (n === 0) return undefined;
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const v = this.samples[i] as number;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const avg = sum / n;
    let sq = 0;
    for (let i = 0; i < n; i++) sq += ((this.samples[i] as number) - avg) ** 2;
    const last = this.samples[(this.sampleHead + this.limits.window - 1) % this.limits.window] as number;
    return { lastMs: last, minMs: min, avgMs: avg, maxMs: max, stddevMs: Math.sqrt(sq / n), samples: n };
  }

  pskMismatch(now: number, what: string): void {
    this.mismatchAt = now;
    this.mismatchWhat = what;
  }

  /** PSK-mismatch evidence seen within mismatchHoldMs */
  mismatchSeen(now: number): boolean {
    return now - this.mismatchAt < this.limits.mismatchHoldMs;
  }

  /** The peer said it is fenced (NEXT_FENCE_NOTICE). */
  peerFenced(now: number): void {
    this.fencedAt = now;
  }

  /**
   * The peer said it is fenced within mismatchHoldMs and no probe was answered since: the
   * gateway that takes the cluster over answers (or handshakes) and ends it; after the hold,
   * a still silent peer is a loss like any other.
   */
  fencedSeen(now: number): boolean {
    return now - this.fencedAt < this.limits.mismatchHoldMs && this.lastAnsweredAt <= this.fencedAt;
  }

  /** an answered probe within errorAfterMs */
  answering(now: number): boolean {
    return this.lastAnsweredAt >= 0 && now - this.lastAnsweredAt < this.limits.errorAfterMs;
  }
}

/** Loss as a percentage with at most one decimal: "0%", "12.5%", "100%". */
export function lossText(l: { lost: number; due: number } | undefined): string {
  if (l === undefined) return '';
  return `${Math.round((1000 * l.lost) / l.due) / 10}%`;
}
