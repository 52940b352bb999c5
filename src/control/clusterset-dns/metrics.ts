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

  count(qtype: number, rcode: number): void {
    const row = this.queries[QTYPE_INDEX[qtype] ?? 7]!;
    if (rcode < row.length) row[rcode]!++;
  }
}

export function registerDnsMetrics(registry: Registry, counters: DnsCounters): void {
  new Counter({
    name: 'strait_dns_queries_total',
    help: 'clusterset.local DNS queries answered, by query type and response code',
    labelNames: ['qtype', 'rcode'],
    registers: [registry],
    collect() {
      this.reset();
      counters.queries.forEach((row, i) => row.forEach((n, r) => { if (n > 0) this.inc({ qtype: QTYPES[i]!, rcode: RCODES[r]! }, n); }));
    },
  });
  const simple = (name: string, help: string, read: () => number) => new Counter({
    name, help, registers: [registry],
    collect() { this.reset(); const n = read(); if (n > 0) this.inc(n); },
  });
  simple('strait_dns_malformed_total', 'DNS packets dropped or answered FORMERR because they did not parse', () => counters.malformed);
  simple('strait_dns_rate_limited_total', 'DNS queries dropped by the per-source rate bound', () => counters.rateLimited);
  simple('strait_dns_forwarded_total', 'DNS queries outside clusterset.local forwarded to the upstream', () => counters.forwarded);
  simple('strait_dns_forward_failures_total', 'forwarded DNS queries answered SERVFAIL (upstream timeout or error)', () => counters.forwardFailures);
}
