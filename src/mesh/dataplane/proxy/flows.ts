// The inbound flows a proxy saw: one entry per (client, port, TLS kind, outcome), where the
// client is the SPIFFE ID it proved (mTLS) or else its address. Bounded: at most `limit`
// entries, the one seen longest ago evicted for a new one (and counted). Recording a
// connection of a known flow finds the entry through a Map keyed by strings the connection
// already has (the peer identity or address) and bumps integers: no allocation. Reports
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
  /** ms since the epoch */
  firstSeen: number;
  lastSeen: number;
}

export interface FlowReport {
  limit: number;
  /** entries dropped for the bound since the previous report */
  evicted: number;
  flows: FlowReportEntry[];
}

class FlowEntry {
  /** the next entry of the same client (a short chain: ports × kinds × outcomes) */
  next: FlowEntry | undefined = undefined;
  count = 0;
  /** connections since the last report */
  delta = 0;
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
    readonly firstSeen: number,
  ) {
    this.lastSeen = firstSeen;
  }
}

export class FlowTable {
  private readonly byClient = new Map<string, FlowEntry>();
  /** entries held */
  size = 0;
  /** entries dropped for the bound since the last report, and in total */
  private evictedSinceReport = 0;
  evictedTotal = 0;
  /** something changed since the last report */
  dirty = false;

  constructor(readonly limit = DEFAULT_FLOW_LIMIT) {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_FLOW_LIMIT) throw E.configInvalid('flowLimit', String(limit), `must be an integer from 1 to ${MAX_FLOW_LIMIT}`);
  }

  /**
   * Count one inbound connection. `identity` (a proven SPIFFE ID) names the client when given,
   * else `address`. `reason` is '' for an accepted connection.
   */
  record(address: string, identity: string | undefined, port: number, tls: FlowTls, outcome: FlowOutcome, reason: string, mode: FlowMode, now: number): void {
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
    this.size++;
    this.dirty = true;
  }

  private evictOldest(): void {
    let oldest: FlowEntry | undefined;
    for (const head of this.byClient.values()) {
      for (let e: FlowEntry | undefined = head; e !== undefined; e = e.next) if (oldest === undefined || e.lastSeen < oldest.lastSeen) oldest = e;
    }
    if (oldest === undefined) return;
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
    address: e.address, ...(e.identity !== undefined ? { identity: e.identity } : {}), port: e.port, tls: e.tls, outcome: e.outcome,
    ...(e.reason ? { reason: e.reason } : {}), mode: e.mode, count, firstSeen: e.firstSeen, lastSeen: e.lastSeen,
  };
}
