// Whether this cluster's agent reaches its broker, as the data of its own calls says: a read
// of this cluster's Cluster record on the broker one second after the last one ended (no
// answer within 3 s: unreachable), and the outcome of every other broker call. Any answer
// counts, a refusal too (the broker is there); only STRAIT_ERR_STORE_UNAVAILABLE (refused,
// reset, silent past the broker client's request timeout) counts as unreachable.
// docs/faults.md, "The cluster set's control plane": unreachable within 10 s of the cut.
import { type Clock, systemClock } from '../../../base/clock/index.js';
import { isStraitError } from '../../../base/errors/index.js';

/** a probe one second after the last one ended, given 3 s to answer: a cut broker is seen within 4 s */
export const BROKER_PROBE_MS = 1000;
export const BROKER_PROBE_TIMEOUT_MS = 3000;

export interface BrokerReachState {
  /** undefined before the first answer or failure */
  reachable: boolean | undefined;
  /** clock ms of the change to the current state */
  since: number;
  /** unreachable: the first failure of this outage */
  error: string;
}

export class BrokerReach {
  private state: BrokerReachState = { reachable: undefined, since: 0, error: '' };
  private timer: { cancel(): void } | undefined;
  private stopped = false;
  private readonly clock: Clock;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly onChange: (s: BrokerReachState) => void,
    private readonly o: { probeMs?: number; probeTimeoutMs?: number; clock?: Clock } = {},
  ) {
    this.clock = o.clock ?? systemClock;
  }

  get current(): BrokerReachState {
    return this.state;
  }

  /** false only while the broker is known to be cut off */
  get unreachable(): boolean {
    return this.state.reachable === false;
  }

  start(): void {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** the outcome of a broker call: an error other than unavailable is an answer */
  observe(err?: unknown): void {
    if (err !== undefined && isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE')) this.set(false, String(err.detail['reason'] ?? err.message));
    else this.set(true, '');
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const ms = this.o.probeTimeoutMs ?? BROKER_PROBE_TIMEOUT_MS;
    let timer: { cancel(): void } | undefined;
    const silent = new Promise<'silent'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('silent'), ms);
    });
    try {
      // the probe's own request runs on to the client's timeout; its answer no longer counts
      const r = await Promise.race([this.probe(), silent]);
      if (r === 'silent') this.set(false, `no answer within ${ms / 1000} s`);
      else this.observe();
    } catch (err) {
      this.observe(err);
    } finally {
      timer?.cancel();
    }
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.tick(), this.o.probeMs ?? BROKER_PROBE_MS);
  }

  private set(reachable: boolean, error: string): void {
    if (this.stopped || this.state.reachable === reachable) return;
    this.state = { reachable, since: this.clock.now(), error };
    this.onChange(this.state);
  }
}
