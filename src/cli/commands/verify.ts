// strait verify: what `subctl verify` does, with real pod traffic in the running world:
// connectivity (pod to pod and pod to service across the tunnel, in both directions, the
// echo must see the client pod's address) and service discovery (export a throw-away
// service, dig and curl its clusterset.local name from a pod, unexport, NXDOMAIN).
// With --dns, also the store-level check that the cluster's clusterset DNS answers what
// its imported EndpointSlices say (bare hosts, where there are no pods to exec into).
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { readJoin, verifyCluster } from '../../multicluster/control/clusterset/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { openClusterStore, udpResolver } from '../../multicluster/cli/index.js';
import { VERIFY_KINDS, verifyTraffic, type TrafficCheck, type VerifyKind } from '../verify-traffic.js';
import { formatJson, formatTable, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';
import { execInPod, readWorldRecord, runningWorld } from '../world-file.js';

interface Flags { cluster: string; tocluster?: string; only: string; dns?: string; stateDir?: string; output: string }

export function registerVerifyCommand(program: Command): void {
  takesGlobals(program
    .command('verify'), 'cluster', 'stateDir')
    .description('verify the cluster set with real pod traffic (like subctl verify): connectivity and service discovery between two clusters')
    .option('--tocluster <name>', 'the other cluster (default: the first other cluster of the world)')
    .option('--only <checks>', `comma-separated: ${VERIFY_KINDS.join(',')}`, VERIFY_KINDS.join(','))
    .option('--dns <host:port>', 'also compare this clusterset DNS server\'s answers with the cluster\'s imported EndpointSlices')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .addHelpText('after', '\nExit status 0 when every check passes, 1 (STRAIT_ERR_MC_VERIFY_FAILED) when any fails.\n')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<Flags>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const only = opts.only.split(',').map((s) => s.trim()).filter(Boolean);
      for (const k of only) if (!VERIFY_KINDS.includes(k as VerifyKind)) throw E.usage(`--only ${JSON.stringify(k)} is not one of ${VERIFY_KINDS.join(', ')}`, { value: k });
      let dns: { host: string; port: number } | undefined;
      if (opts.dns) {
        const m = /^(.+):(\d+)$/.exec(opts.dns);
        if (!m) throw E.usage(`--dns ${JSON.stringify(opts.dns)} must be HOST:PORT, e.g. 127.0.0.1:5353`, { value: opts.dns });
        dns = { host: m[1]!, port: Number(m[2]) };
      }
      const stateDir = resolveStateDir(opts.stateDir);
      // pod traffic needs the running world; --dns alone works without one
      const rec = dns && !readWorldRecord(stateDir) ? undefined : runningWorld(stateDir);
      const stores = new Map<string, ResourceStore>();
      const store = (cluster: string): ResourceStore => {
        let s = stores.get(cluster);
        if (!s) stores.set(cluster, (s = openClusterStore(stateDir, cluster, { existing: true }).store));
        return s;
      };
      const checks: TrafficCheck[] = [];
      try {
        if (rec) {
          const to = opts.tocluster ?? rec.clusters.find((c) => c.name !== opts.cluster)?.name;
          if (!to || to === opts.cluster) throw E.usage(`--tocluster must name a cluster other than "${opts.cluster}"`, { value: opts.tocluster });
          for (const c of [opts.cluster, to]) if (!(await readJoin(store(c)))) throw E.mcNotJoined(c);
          checks.push(...await verifyTraffic({
            rec, from: opts.cluster, to, only: only as VerifyKind[], store,
            exec: (netns, command, timeoutMs) => execInPod(rec, netns, command, timeoutMs),
          }));
        }
        if (dns) {
          for (const c of await verifyCluster(store(opts.cluster), opts.cluster, udpResolver(dns.host, dns.port))) {
            checks.push({ check: c.check === 'connection' ? 'connectivity' : 'service-discovery', name: c.check === 'connection' ? 'gateway connection' : `answer ${c.target}`,
              from: opts.cluster, to: c.check === 'connection' ? c.target : dns.host, result: c.result === 'pass' ? 'PASS' : 'FAIL', detail: c.detail, ms: 0 });
          }
        }
      } finally {
        for (const s of stores.values()) await s.close().catch(() => undefined);
      }
      const failed = checks.filter((c) => c.result === 'FAIL');
      if (format === 'json') process.stdout.write(formatJson({ passed: failed.length === 0, checks }));
      else {
        process.stdout.write(formatTable(['CHECK', 'NAME', 'FROM', 'TO', 'RESULT', 'TIME', 'DETAIL'],
          checks.map((c) => [c.check, c.name, c.from, c.to, c.result, `${c.ms} ms`, c.detail])));
        process.stdout.write(`\n${checks.length - failed.length} of ${checks.length} checks passed\n`);
      }
      if (failed.length > 0) throw E.mcVerifyFailed(failed.map((c) => `${c.check} ${c.name} (${c.from} -> ${c.to}): ${c.detail}`));
    });
}
