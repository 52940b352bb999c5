// Two lanes for the multicluster controllers of one process. Foreground work is on the path
// to another cluster's DNS answer: an export's slice write to the broker and the imports it
// wakes up. Follow-up work (the exporting cluster's status, the aggregated ServiceImport,
// its import of its own slice) waits until no foreground work is left.
//
// Why it matters: with several clusters' stores in one process (the world's supervisor, the
// bench) every durable commit is an fsync that blocks the event loop; a follow-up commit
// that went first would sit on the path to the other clusters' answers. Agents in separate
// processes each have their own lanes and do not wait on each other.

/**
 * Loop turns with no foreground work before follow-up work starts: in the first poll phase
 * the DNS server reads a query for the name just imported and answers it; in the second a
 * client in the same process (the bench, a test) reads the answer. A follow-up commit blocks
 * the loop for an fsync, so it comes after both.
 */
const QUIET_TURNS = 2;

export class WorkLanes {
  private busy = 0;
  private waiters: (() => void)[] = [];
  private checking = false;

  /**
   * @param maxWaitMs follow-up work runs after this long even while foreground work keeps
   *   coming, so that a stream of imports cannot starve the statuses
   */
  constructor(private readonly maxWaitMs = 250) {}

  /** Foreground work starts: follow-up work waits until every begin() has had its end(). */
  begin(): void {
    this.busy++;
  }

  end(): void {
    if (this.busy > 0 && --this.busy === 0) this.check();
  }

  /** Whether foreground work is under way (tests). */
  get foreground(): number {
    return this.busy;
  }

  /**
   * Resolves once no foreground work is under way and QUIET_TURNS turns of the event loop
   * have passed without any (their poll phases serve the I/O that waited for the foreground
   * work), or after maxWaitMs at the latest.
   */
  afterForeground(): Promise<void> {
    return new Promise<void>((resolve) => {
      let done = false;
      const timer = setTimeout(() => go(), this.maxWaitMs);
      const go = (): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push(go);
      if (this.busy === 0) this.check();
    });
  }

  private check(): void {
    if (this.checking) return;
    this.checking = true;
    let quiet = 0;
    const step = (): void => {
      // foreground work came back: its end() checks again
      if (this.busy > 0) {
        this.checking = false;
        return;
      }
      if (++quiet < QUIET_TURNS) {
        setImmediate(step);
        return;
      }
      this.checking = false;
      for (const w of this.waiters.splice(0)) w();
    };
    setImmediate(step);
  }
}

/** The lanes every agent of this process shares unless it is given its own. */
export const processLanes = new WorkLanes();
