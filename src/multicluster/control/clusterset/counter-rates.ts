// Throughput of each connection from the gateway's own counters: bytes moved between two
// readings divided by the time between those readings (the publisher's clock when it read
// them), never by the time between two writes of the records or two updates of a page.
// A window is at least MIN_WINDOW_MS; counters that went back (a restarted gateway) start
// a new window instead of a negative rate.

export const MIN_WINDOW_MS = 1000;

interface Sample {
  tx: number;
  rx: number;
  at: number;
}
export interface ConnectionRate {
  txBps: number;
  rxBps: number;
  windowMs: number;
}

export class CounterRates {
  /** the counters at the start of each connection's current window */
  private readonly base = new Map<string, Sample>();
  private readonly rates = new Map<string, ConnectionRate>();

  /**
   * A reading of one connection's counters at `at` (epoch ms). Returns true when this
   * connection has a first rate to publish (a window of MIN_WINDOW_MS is complete and none
   * was published yet).
   */
  observe(key: string, tx: number, rx: number, at: number): boolean {
    const b = this.base.get(key);
    if (!b || tx < b.tx || rx < b.rx || at < b.at) {
      this.base.set(key, { tx, rx, at });
      this.rates.delete(key);
      return false;
    }
    return !this.rates.has(key) && at - b.at >= MIN_WINDOW_MS;
  }

  /**
   * The rate to publish with a reading at `at`: the window since the last publish closes
   * here (when it is long enough; else the last rate stands) and a new one starts.
   */
  close(key: string, tx: number, rx: number, at: number): ConnectionRate | undefined {
    const b = this.base.get(key);
    if (b && at - b.at >= MIN_WINDOW_MS && tx >= b.tx && rx >= b.rx) {
      const s = (at - b.at) / 1000;
      this.rates.set(key, { txBps: Math.round((tx - b.tx) / s), rxBps: Math.round((rx - b.rx) / s), windowMs: at - b.at });
      this.base.set(key, { tx, rx, at });
    }
    return this.rates.get(key);
  }

  /** forget connections that are gone */
  keep(keys: Set<string>): void {
    for (const k of this.base.keys()) if (!keys.has(k)) this.base.delete(k);
    for (const k of this.rates.keys()) if (!keys.has(k)) this.rates.delete(k);
  }
}
