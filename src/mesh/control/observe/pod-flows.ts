// The flows of one pod as the agent keeps them: the sidecar's reports (count deltas) added
// up, across restarts of the sidecar and of the agent (seeded from the stored object).
// Bounded like the sidecar's table: the flow seen longest ago is evicted for a new one.
import { formatVersionOf } from '../../../base/errors/index.js';
import { FLOW_REPORT_VERSIONS, type FlowMode, type FlowOutcome, type FlowReport, type FlowReportEntry, type FlowTls } from '../../dataplane/proxy/index.js';
import type { ObservedFlow } from './types.js';

/** A flow the agent holds: what the proxy reports, its count added up. */
export type HeldFlow = FlowReportEntry;

const TLS = new Set<string>(['mtls', 'plaintext', 'tls-passthrough', 'tls']);
const OUTCOMES = new Set<string>(['accepted', 'reset']);
const MODES = new Set<string>(['STRICT', 'PERMISSIVE', 'DISABLE']);
const MAX_TEXT = 512;

const text = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_TEXT;
const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
// times a Date can print (toISOString throws past 8.64e15 ms): a report is network input in Kubernetes mode
const MAX_TIME = 8.64e15;
const time = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_TIME;
/** a running sum that stays a safe integer (and an int64 for the CRD) */
const addCapped = (a: number, b: number): number => Math.min(Number.MAX_SAFE_INTEGER, a + b);

/** One entry of a sidecar's report, checked field by field; undefined when it is not one. */
export function readReportEntry(v: unknown): FlowReportEntry | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const e = v as Record<string, unknown>;
  if (!text(e['address']) || (e['identity'] !== undefined && !text(e['identity']))) return undefined;
  if (typeof e['port'] !== 'number' || !Number.isInteger(e['port']) || e['port'] < 1 || e['port'] > 65535) return undefined;
  if (!TLS.has(e['tls'] as string) || !OUTCOMES.has(e['outcome'] as string) || !MODES.has(e['mode'] as string)) return undefined;
  if ((e['reason'] !== undefined && !text(e['reason'])) || !count(e['count']) || !time(e['firstSeen']) || !time(e['lastSeen'])) return undefined;
  return {
    address: e['address'],
    ...(e['identity'] !== undefined ? { identity: e['identity'] as string } : {}),
    port: e['port'],
    tls: e['tls'] as FlowTls,
    outcome: e['outcome'] as FlowOutcome,
    ...(e['reason'] ? { reason: e['reason'] as string } : {}),
    mode: e['mode'] as FlowMode,
    count: e['count'],
    firstSeen: e['firstSeen'],
    lastSeen: e['lastSeen'],
  };
}

const keyOf = (f: { identity?: string; address: string; port: number; tls: string; outcome: string }): string =>
  `${f.identity ?? f.address}\n${f.port}\n${f.tls}\n${f.outcome}`;

export class PodFlows {
  readonly flows = new Map<string, HeldFlow>();
  evicted = 0;
  /** ms since the epoch of the last report merged (0: none yet) */
  lastReport = 0;

  constructor(readonly limit: number) {}

  /**
   * Add a sidecar's report; malformed entries are skipped (and counted in the result). A
   * report of a format this strait does not read (a newer proxy's) is refused whole:
   * STRAIT_ERR_VERSION_UNSUPPORTED, nothing merged.
   */
  merge(report: FlowReport | unknown, now = Date.now(), what = 'the flow report'): { merged: number; skipped: number } {
    const r = (report && typeof report === 'object' ? report : {}) as { version?: unknown; evicted?: unknown; flows?: unknown };
    formatVersionOf(what, r, FLOW_REPORT_VERSIONS);
    if (count(r.evicted)) this.evicted = addCapped(this.evicted, r.evicted);
    const list = Array.isArray(r.flows) ? r.flows : [];
    let merged = 0;
    let skipped = 0;
    for (const raw of list) {
      const e = readReportEntry(raw);
      if (!e) {
        skipped++;
        continue;
      }
      this.add(e);
      merged++;
    }
    this.lastReport = now;
    return { merged, skipped };
  }

  /** Add one flow (a report entry, or one read back from the stored object). */
  add(e: HeldFlow): void {
    const key = keyOf(e);
    const have = this.flows.get(key);
    if (have) {
      have.count = addCapped(have.count, e.count);
      have.firstSeen = Math.min(have.firstSeen, e.firstSeen);
      if (e.lastSeen >= have.lastSeen) {
        have.lastSeen = e.lastSeen;
        have.mode = e.mode;
        have.address = e.address;
        if (e.reason) have.reason = e.reason;
        else delete have.reason;
      }
      return;
    }
    if (this.flows.size >= this.limit) this.evictOldest();
    this.flows.set(key, { ...e });
  }

  private evictOldest(): void {
    let oldest: [string, HeldFlow] | undefined;
    for (const kv of this.flows) if (!oldest || kv[1].lastSeen < oldest[1].lastSeen) oldest = kv;
    if (!oldest) return;
    this.flows.delete(oldest[0]);
    this.evicted = addCapped(this.evicted, 1);
  }

  /** Seed from the flows of a stored object (the agent restarted). */
  seed(flows: readonly ObservedFlow[], evicted: number, lastReport: string | undefined): void {
    for (const f of flows) {
      const firstSeen = Date.parse(f.firstSeen ?? f.lastSeen);
      const lastSeen = Date.parse(f.lastSeen);
      const e = readReportEntry({
        address: f.client?.address,
        ...(f.client?.identity !== undefined ? { identity: f.client.identity } : {}),
        port: f.port,
        tls: f.tls,
        outcome: f.outcome,
        ...(f.reason ? { reason: f.reason } : {}),
        mode: f.mode,
        count: f.count,
        firstSeen,
        lastSeen,
      });
      if (e) this.add(e);
    }
    if (count(evicted)) this.evicted = addCapped(this.evicted, evicted);
    const t = Date.parse(lastReport ?? '');
    if (!Number.isNaN(t)) this.lastReport = Math.max(this.lastReport, t);
  }
}
