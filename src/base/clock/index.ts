// Time as a dependency, so controllers and tunnels can be tested without sleeping.
export interface Clock {
  /** milliseconds since the epoch */
  now(): number;
  /** monotonic milliseconds */
  monotonic(): number;
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  private t: number;
  private timers: { at: number; fn: () => void; live: boolean }[] = [];
  constructor(start = 0) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  monotonic(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const timer = { at: this.t + ms, fn, live: true };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.live = false;
      },
    };
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.live && x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.t = due.at;
      due.live = false;
      due.fn();
    }
    this.timers = this.timers.filter((x) => x.live);
    this.t = end;
  }
}
