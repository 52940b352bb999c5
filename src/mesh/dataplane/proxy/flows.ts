// The inbound flows a proxy saw: one entry per (client, port, TLS kind, outcome), where the
// client is the SPIFFE ID it proved (mTLS) or else its address. Bounded: at most `limit`
// entries, the one seen longest ago evicted for a new one (and counted); the entries form a
// list by last use, so the eviction takes its head. Recording a connection of a known flow
// finds the entry through a Map keyed by strings the connection already has (the peer
// identity or address), bumps integers and moves the entry to the list's tail: no
// allocation (bench/mesh-flows.ts checks). Reports
// carry the change since the previous report (count deltas), so that a reader can add them
// up across restarts of the proxy.
import { E } from '../../../base/errors/index.js';

export type FlowTls = 'mtls' | 'plaintext' | 'tls-passthrough' | 'tls';
export type FlowOutcome = 'accepted' | 'reset';
export type FlowMode = 'STRICT' | 'PERMISSIVE' | 'DISABLE';

/** default bound of the entries one proxy keeps */
export const DEFAULT_FLOW_LIMIT = 256;
/** the largest bound (a MeshTrafficObservation holds at most this many: MAX_OBSERVED_FLOWS) */
export const MAX_FLOW_LIMIT = 1024;

/** One flow as reported: `count` is the number of connections since the previous report. */
export interface FlowReportEntry {
  address: string;
  /** the client's SPIFFE ID (tls: mtls) */
  identity?: string;
  port: number;
  tls: FlowTls;
  outcome: FlowOutcome;
  /** why it was reset */
  reason?: string;
  /** the mode enforced at the last connection */
  mode: FlowMode;
  count: number;
  /** ms since the epoch (to the second: the tables' clock) */
  firstSeen: number;
  lastSeen: number;
}

/**
 * The flow report's format versions its readers take (docs/upgrades.md, "Version skew"):
 * the proxy sends no `version` (version 1) until every control module of the previous
 * release reads the next one.
 */
export const FLOW_REPORT_VERSIONS = [1];

export interface FlowReport {
  /** the format (absent: 1; FLOW_REPORT_VERSIONS) */
  version?: number;
  limit: number;
  /** entries dropped for the bound since the previous report */
  evicted: number;
  flows: FlowReportEntry[];
}

class FlowEntry {
  /** the next entry of the same client (a short chain: ports × kinds × outcomes) */
  next: FlowEntry | undefined = undefined;
  /** neighbours in the table's list by last use (older, newer) */
  older: FlowEntry | undefined = undefined;
  newer: FlowEntry | undefined = undefined;
  count = 0;
  /** connections since the last report */
  delta = 0;
  /** ticks of the tables' clock (clockTicks) */
  lastSeen: number;
  reason = '';
  constructor(
    readonly client: string,
    public address: string,
    readonly identity: string | undefined,
    readonly port: number,
    readonly tls: FlowTls,
    readonly outcome: FlowOutcome,
    public mode: FlowMode,
    /** ticks of the tables' clock */
    readonly firstSeen: number,
  ) {
    this.lastSeen = firstSeen;
  }
}

/**
 * The clock of the flow tables: whole seconds since CLOCK_EPOCH, a small integer that a 1 s
 * timer (unref'd, one per process, started with the first table) keeps current. The
 * connection path reads it; it never calls Date.now(), which allocates a heap number for
 * each result.
 */
const TICK_MS = 1000;
const CLOCK_EPOCH = Date.now();
let clockTicks = 0;
let clockTimer: NodeJS.Timeout | undefined;

function tickClock(): void {
  clockTicks = Math.floor((Date.now() - CLOCK_EPOCH) / TICK_MS);
}

function startClock(): void {
  if (clockTimer) return;
  tickClock();
  clockTimer = setInterval(tickClock, TICK_MS);
  clockTimer.unref();
}

export class FlowTable {
  private readonly byClient = new Map<string, FlowEntry>();
  /** the entry used longest ago, and the one used last */
  private oldest: FlowEntry | undefined;
  private newest: FlowEntry | undefined;
  /** entries held */
  size = 0;
  /** entries dropped for the bound since the last report, and in total */
  private evictedSinceReport = 0;
  evictedTotal = 0;
  /** something changed since the last report */
  dirty = false;

  constructor(readonly limit = DEFAULT_FLOW_LIMIT) {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_FLOW_LIMIT)
      throw E.configInvalid('flowLimit', String(limit), `must be an integer from 1 to ${MAX_FLOW_LIMIT}`);
    startClock();
  }

  /**
   * Count one inbound connection. `identity` (a proven SPIFFE ID) names the client when given,
   * else `address`. `reason` is '' for an accepted connection.
   */
  record(address: string, identity: string | undefined, port: number, tls: FlowTls, outcome: FlowOutcome, reason: string, mode: FlowMode): void {
    const now = clockTicks;
    const client = identity ?? address;
    const head = this.byClient.get(client);
    for (let e = head; e !== undefined; e = e.next) {
      if (e.port === port && e.tls === tls && e.outcome === outcome) {
        e.count++;
        e.delta++;
        e.lastSeen = now;
        e.mode = mode;
        e.reason = reason;
        e.address = address;
        this.dirty = true;
        if (e !== this.newest) {
          this.unlink(e);
          this.append(e);
        }
        return;
      }
    }
    if (this.size >= this.limit) this.evictOldest();
    const e = new FlowEntry(client, address, identity, port, tls, outcome, mode, now);
    e.count = 1;
    e.delta = 1;
    e.reason = reason;
    e.next = this.byClient.get(client); // the eviction may have emptied this client's chain
    this.byClient.set(client, e);
    this.append(e);
    this.size++;
    this.dirty = true;
  }

  private append(e: FlowEntry): void {
    e.older = this.newest;
    e.newer = undefined;
    if (this.newest) this.newest.newer = e;
    else this.oldest = e;
    this.newest = e;
  }

  private unlink(e: FlowEntry): void {
    if (e.older) e.older.newer = e.newer;
    else this.oldest = e.newer;
    if (e.newer) e.newer.older = e.older;
    else this.newest = e.older;
    e.older = undefined;
    e.newer = undefined;
  }

  private evictOldest(): void {
    const oldest = this.oldest;
    if (oldest === undefined) return;
    this.unlink(oldest);
    const head = this.byClient.get(oldest.client) as FlowEntry;
    if (head === oldest) {
      if (oldest.next) this.byClient.set(oldest.client, oldest.next);
      else this.byClient.delete(oldest.client);
    } else {
      let prev = head;
      while (prev.next !== oldest) prev = prev.next as FlowEntry;
      prev.next = oldest.next;
    }
    this.size--;
    this.evictedSinceReport++;
    this.evictedTotal++;
  }

  /** Every entry, with its total count (GET /flows of the sidecar's admin API). */
  snapshot(): FlowReportEntry[] {
    const out: FlowReportEntry[] = [];
    for (const head of this.byClient.values()) for (let e: FlowEntry | undefined = head; e; e = e.next) out.push(entryOf(e, e.count));
    return out;
  }

  /** What changed since the previous report (entries with new connections), or undefined when nothing did. */
  report(): FlowReport | undefined {
    if (!this.dirty && this.evictedSinceReport === 0) return undefined;
    const flows: FlowReportEntry[] = [];
    for (const head of this.byClient.values()) {
      for (let e: FlowEntry | undefined = head; e; e = e.next) {
        if (e.delta === 0) continue;
        flows.push(entryOf(e, e.delta));
        e.delta = 0;
      }
    }
    const r = { limit: this.limit, evicted: this.evictedSinceReport, flows };
    this.evictedSinceReport = 0;
    this.dirty = false;
    return r;
  }
}

function entryOf(e: FlowEntry, count: number): FlowReportEntry {
  return {
    address: e.address,
    ...(e.identity !== undefined ? { identity: e.identity } : {}),
    port: e.port,
    tls: e.tls,
    outcome: e.outcome,
    ...(e.reason ? { reason: e.reason } : {}),
    mode: e.mode,
    count,
    firstSeen: CLOCK_EPOCH + e.firstSeen * TICK_MS,
    lastSeen: CLOCK_EPOCH + e.lastSeen * TICK_MS,
  };
}
