// Tunnel throughput in the console from the gateways' own counters (src/console/web/live.ts
// feeds it every Gateway record it receives). test/unit/units.test.ts runs its table.

/** bytes per second of one tunnel, and when the counters it comes from were read */
export interface Rate {
  txBps: number;
  rxBps: number;
  at: number;
}

/** one connection of a Gateway's status, as far as its counters go */
export interface CounterReading {
  cluster?: string;
  txBytes?: number;
  rxBytes?: number;
  countersAt?: string;
  txBps?: number;
  rxBps?: number;
}

/**
 * The rate a reading gives: the publisher's (over the counters' own times), else the delta
 * from the previous reading over their countersAt (at least 1 s apart; counters that went
 * back, a restarted gateway, give none).
 */
export function rateOf(c: CounterReading, prev: { tx: number; rx: number; at: number } | undefined): Rate | undefined {
  const at = c.countersAt ? Date.parse(c.countersAt) : NaN;
  if (Number.isNaN(at)) return undefined;
  if (typeof c.txBps === 'number' && typeof c.rxBps === 'number') return { txBps: c.txBps, rxBps: c.rxBps, at };
  if (!prev || typeof c.txBytes !== 'number' || typeof c.rxBytes !== 'number') return undefined;
  const s = (at - prev.at) / 1000;
  if (s < 1 || c.txBytes < prev.tx || c.rxBytes < prev.rx) return undefined;
  return { txBps: (c.txBytes - prev.tx) / s, rxBps: (c.rxBytes - prev.rx) / s, at };
}
