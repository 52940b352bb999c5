// Multicluster metrics: exports by condition and whether the broker answers (read from the
// controllers at scrape time), and broker sync latency.
import { Gauge, Histogram, type Registry } from 'prom-client';

export interface ExportStates {
  /** condition type -> status -> count, over this cluster's ServiceExports */
  exportConditions(): Map<string, Map<string, number>>;
  /** whether the agent's broker answers; undefined before its first probe */
  brokerReachable(): boolean | undefined;
}

export class MulticlusterMetrics {
  readonly syncLatency: Histogram<'direction'>;
  private sources = new Set<ExportStates>();

  constructor(registry: Registry) {
    const sources = this.sources;
    this.syncLatency = new Histogram({
      name: 'strait_mc_broker_sync_duration_seconds',
      help: 'Time from noticing a change to having it written: export (cluster -> broker) and import (broker -> cluster)',
      labelNames: ['direction'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    new Gauge({
      name: 'strait_mc_service_exports',
      help: 'ServiceExports of this cluster by condition type and status',
      labelNames: ['condition', 'status'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of sources) {
          for (const [type, byStatus] of s.exportConditions()) {
            for (const [status, n] of byStatus) this.inc({ condition: type, status }, n);
          }
        }
      },
    });
    new Gauge({
      name: 'strait_mc_broker_reachable',
      help: "1 while this cluster's multicluster agent reaches its broker (a probe every 2 s and every broker call), 0 while it is cut off",
      registers: [registry],
      collect() {
        this.reset();
        const known = [...sources].map((s) => s.brokerReachable()).filter((r): r is boolean => r !== undefined);
        if (known.length > 0) this.set(known.every(Boolean) ? 1 : 0);
      },
    });
  }

  addSource(s: ExportStates): void {
    this.sources.add(s);
  }
  removeSource(s: ExportStates): void {
    this.sources.delete(s);
  }
}
