// DNS counters: plain integers on the query path, read by prom-client at scrape time.
import { Counter, type Registry } from 'prom-client';

export const QTYPES = ['A', 'AAAA', 'SRV', 'SOA', 'PTR', 'TXT', 'ANY', 'other'] as const;
const QTYPE_INDEX: Record<number, number> = { 1: 0, 28: 1, 33: 2, 6: 3, 12: 4, 16: 5, 255: 6 };
export const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'] as const;

export class DnsCounters {
  /** [qtype index][rcode 0..5] */
  readonly queries: number[][] = QTYPES.map(() => RCODES.map(() => 0));
  malformed = 0;
  rateLimited = 0;
  forwarded = 0;
  forwardFailures = 0;
  /** upstream datagrams ignored: wrong source, not a response, unknown ID or another question */
  upstreamRejected = 0;

  count(qtype: number, rcode: number): void {
    const row = this.queries[QTYPE_INDEX[qtype] ?? 7]!;
    if (rcode < row.length) row[rcode]!++;
  }
}

/** Counters of one server, with the labels that tell it apart (e.g. `cluster` in the world). */
export interface LabelledCounters {
  labels: Record<string, string>;
  counters: DnsCounters;
}

/**
 * The DNS metrics of one server (the daemon), or of several read at scrape time (the
 * world: one server per cluster, labelled `cluster`).
 */
export function registerDnsMetrics(registry: Registry, source: DnsCounters | (() => LabelledCounters[])): void {
  const read = typeof source === 'function' ? source : () => [{ labels: {}, counters: source }];
  const extra = typeof source === 'function' ? ['cluster'] : [];
  new Counter({
    name: 'strait_dns_queries_total',
    help: 'clusterset.local DNS queries answered, by query type and response code',
    labelNames: ['qtype', 'rcode', ...extra],
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, counters } of read()) {
        counters.queries.forEach((row, i) =>
          row.forEach((n, r) => {
            if (n > 0) this.inc({ ...labels, qtype: QTYPES[i]!, rcode: RCODES[r]! }, n);
          }),
        );
      }
    },
  });
  const simple = (name: string, help: string, pick: (c: DnsCounters) => number) =>
    new Counter({
      name,
      help,
      labelNames: extra,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, counters } of read()) {
          const n = pick(counters);
          if (n > 0) this.inc(labels, n);
        }
      },
    });
  simple('strait_dns_malformed_total', 'DNS packets dropped or answered FORMERR because they did not parse', (c) => c.malformed);
  simple('strait_dns_rate_limited_total', 'DNS queries dropped by the per-source rate bound', (c) => c.rateLimited);
  simple('strait_dns_forwarded_total', 'DNS queries outside clusterset.local forwarded to the upstream', (c) => c.forwarded);
  simple(
    'strait_dns_upstream_rejected_total',
    'datagrams on the upstream socket ignored (another source, not a response, no pending query with that ID, or another question)',
    (c) => c.upstreamRejected,
  );
  simple('strait_dns_forward_failures_total', 'forwarded DNS queries answered SERVFAIL (upstream timeout or error)', (c) => c.forwardFailures);
}
