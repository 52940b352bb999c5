// GitOps metrics: syncs by result, verifications by outcome, verification latency.
import { Counter, Histogram, Registry } from 'prom-client';

export interface GitOpsMetrics {
  syncs: Counter<'result'>;
  verifications: Counter<'outcome'>;
  verifySeconds: Histogram;
}

export function createGitOpsMetrics(registry: Registry = new Registry()): GitOpsMetrics {
  return {
    syncs: new Counter({
      name: 'strait_gitops_syncs_total',
      help: 'Application syncs by result (synced, refused, failed)',
      labelNames: ['result'],
      registers: [registry],
    }),
    verifications: new Counter({
      name: 'strait_gitops_signature_verifications_total',
      help: 'Signature verifications by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    verifySeconds: new Histogram({
      name: 'strait_gitops_signature_verification_seconds',
      help: 'Time to verify one commit or tag signature in process',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [registry],
    }),
  };
}
