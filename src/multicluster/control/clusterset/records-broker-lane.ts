// The broker's part of publishing a gateway's records (this cluster's Endpoint on the broker,
// the other clusters' Endpoints copied in), run beside the records publisher's polls, one
// run at a time: a broker that does not answer holds back neither the cluster's own records
// nor their Events (docs/faults.md, "The cluster set's control plane"). Records that come
// while a run is in flight wait for it; only the latest waits.
export class BrokerLane<R> {
  /** the broker's Endpoints changed (its watch), or the last run failed: run again */
  dirty = true;
  private running: Promise<void> | undefined;
  private pending: { recs: R; key: string } | undefined;
  /** the steady key of the records the last good run wrote */
  private doneKey: string | undefined;
  private stopped = false;

  constructor(
    private readonly run: (recs: R) => Promise<void>,
    private readonly onDone: (recs: R) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** whether records with this steady key need a run */
  wants(key: string): boolean {
    return this.dirty || key !== this.doneKey;
  }

  /** whether the broker has what records with this key say, and nothing runs */
  current(key: string): boolean {
    return !this.running && !this.dirty && this.doneKey === key;
  }

  push(recs: R, key: string): void {
    this.dirty = false;
    if (this.running) {
      this.pending = { recs, key };
      return;
    }
    this.running = this.run(recs)
      .then(
        () => {
          this.doneKey = key;
          this.onDone(recs);
        },
        (err: unknown) => {
          this.dirty = true;
          this.doneKey = undefined;
          this.onError(err);
        },
      )
      .finally(() => {
        this.running = undefined;
        const next = this.pending;
        this.pending = undefined;
        if (next && !this.stopped) this.push(next.recs, next.key);
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
