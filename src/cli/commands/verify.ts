// strait verify: what `subctl verify` does, with real pod traffic in the running world:
// connectivity (pod to pod and pod to service across the tunnel, in both directions, the
// echo must see the client pod's address) and service discovery (export a throw-away
// service, dig and curl its clusterset.local name from a pod, unexport, NXDOMAIN).
// With --dns, also the store-level check that the cluster's clusterset DNS answers what
// its imported EndpointSlices say (bare hosts, where there are no pods to exec into).
// With --kubeconfig/--context (Kubernetes mode) there are no pods of strait's to send traffic
// from: it checks what the records say (CRDs, join, broker, active gateway, connections
// with their RTT, export conditions; --dns as above) and lists the pod-traffic checks as
// SKIP, saying why.
import type { Command } from 'commander';
import { E, isStraitError } from '../../base/errors/index.js';
import { readJoin, verifyCluster, verifyRecords, type ResolveA } from '../../multicluster/control/clusterset/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { CLUSTER_KINDS, openClusterStore, openTarget, udpResolver, type TargetOptions } from '../../multicluster/cli/index.js';
import { VERIFY_KINDS, verifyTraffic, type VerifyKind } from '../verify-traffic.js';
import {
  addKubeOptions,
  formatJson,
  formatTable,
  isKubeMode,
  parseOutputFormat,
  refuseWorldOptions,
  resolveStateDir,
  takesGlobals,
} from '../../platform/cli-kit/index.js';
import { execInPod, readWorldRecord, runningWorld } from '../world-file.js';

interface Flags extends TargetOptions {
  tocluster?: string;
  only: string;
  dns?: string;
  output: string;
}

/** A row of the table: a traffic check of the world, a record check, or one skipped (SKIP, with why). */
interface VerifyRow {
  check: string;
  name: string;
  from: string;
  to: string;
  result: 'PASS' | 'FAIL' | 'SKIP';
  detail: string;
  /** how long it took; absent for checks that read records */
  ms?: number;
}

/** What Kubernetes mode cannot do, and why (the SKIP rows). */
const SKIPPED: Record<VerifyKind, { name: string; detail: string }> = {
  connectivity: {
    name: 'pod traffic',
    detail:
      "local world only: strait curls from its own client pod to the other cluster's echo pod and Service there; " +
      'it creates no pods in a Kubernetes cluster (curl across from a pod of yours with kubectl exec)',
  },
  'service-discovery': {
    name: 'export, dig and curl a test service',
    detail:
      'local world only: strait exports a throw-away Service and digs its clusterset.local name from its own pod there; ' +
      'in Kubernetes, --dns HOST:PORT compares the clusterset DNS answers with the imported EndpointSlices',
  },
};

async function dnsRows(store: ResourceStore, cluster: string, dns: { host: string; port: number }): Promise<VerifyRow[]> {
  const resolve: ResolveA = udpResolver(dns.host, dns.port);
  return (await verifyCluster(store, cluster, resolve)).map((c) => ({
    check: c.check === 'connection' ? 'connectivity' : 'service-discovery',
    name: c.check === 'connection' ? 'gateway connection' : `answer ${c.target}`,
    from: cluster,
    to: c.check === 'connection' ? c.target : dns.host,
    result: c.result === 'pass' ? 'PASS' : 'FAIL',
    detail: c.detail,
    ms: 0,
  }));
}

/** Kubernetes mode: the records' checks, the DNS check with --dns, and the pod-traffic checks as SKIP. */
async function verifyKubernetes(opts: Flags, only: VerifyKind[], dns: { host: string; port: number } | undefined): Promise<VerifyRow[]> {
  if (opts.tocluster !== undefined) {
    throw E.usage(
      '--tocluster names a cluster of the local world; in Kubernetes mode verify checks the cluster of --kubeconfig/--context against every cluster joined to its broker',
      { flag: 'tocluster' },
    );
  }
  const target = openTarget(opts);
  const kube = target.kube!;
  const rows: VerifyRow[] = [];
  try {
    try {
      await kube.requireKinds(CLUSTER_KINDS);
      rows.push({
        check: 'setup',
        name: 'crds',
        from: target.name,
        to: kube.server,
        result: 'PASS',
        detail: 'the API server serves the multicluster kinds (deploy/crds.yaml)',
      });
    } catch (err) {
      if (!isStraitError(err, 'STRAIT_ERR_KUBE_CRD_MISSING')) throw err;
      rows.push({ check: 'setup', name: 'crds', from: target.name, to: kube.server, result: 'FAIL', detail: err.message });
      return rows;
    }
    const { clusterId, checks } = await verifyRecords(kube, () => target.openBroker());
    const from = clusterId || target.name;
    for (const c of checks) {
      // the join and the broker are the ground both kinds of checks stand on
      if (c.name !== 'joined' && c.name !== 'broker' && !only.includes(c.check)) continue;
      rows.push({ check: c.check, name: c.name, from, to: c.target, result: c.result === 'pass' ? 'PASS' : 'FAIL', detail: c.detail });
    }
    if (dns && clusterId) rows.push(...(await dnsRows(kube, clusterId, dns)));
    for (const k of only) rows.push({ check: k, name: SKIPPED[k].name, from, to: '-', result: 'SKIP', detail: SKIPPED[k].detail });
  } finally {
    await target.close();
  }
  return rows;
}

export function registerVerifyCommand(program: Command): void {
  addKubeOptions(takesGlobals(program.command('verify'), 'cluster', 'stateDir'))
    .description(
      'verify the cluster set with real pod traffic (like subctl verify): connectivity and service discovery between two clusters; ' +
        'with --kubeconfig/--context, what the records of a Kubernetes cluster say (pod-traffic checks are listed as SKIP there)',
    )
    .option('--tocluster <name>', 'the other cluster (default: the first other cluster of the world; local world only)')
    .option('--only <checks>', `comma-separated: ${VERIFY_KINDS.join(',')}`, VERIFY_KINDS.join(','))
    .option('--dns <host:port>', "also compare this clusterset DNS server's answers with the cluster's imported EndpointSlices")
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .addHelpText(
      'after',
      '\nExit status 0 when every check passes (SKIP is not a failure), 1 (STRAIT_ERR_MC_VERIFY_FAILED) when any fails.\n' +
        "In Kubernetes mode the checks are: CRDs served, cluster joined, broker reachable with the join's token, exactly one active\n" +
        'gateway, a connected connection (with RTT) to every other joined cluster, every ServiceExport Valid=True, and with --dns\n' +
        "the clusterset DNS answers; the pod-traffic checks need the local world's pods and are listed as SKIP.\n",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<Flags>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const only = opts.only
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const k of only)
        if (!VERIFY_KINDS.includes(k as VerifyKind)) throw E.usage(`--only ${JSON.stringify(k)} is not one of ${VERIFY_KINDS.join(', ')}`, { value: k });
      let dns: { host: string; port: number } | undefined;
      if (opts.dns) {
        const m = /^(.+):(\d+)$/.exec(opts.dns);
        if (!m) throw E.usage(`--dns ${JSON.stringify(opts.dns)} must be HOST:PORT, e.g. 127.0.0.1:5353`, { value: opts.dns });
        dns = { host: m[1]!, port: Number(m[2]) };
      }
      refuseWorldOptions(cmd, opts);
      const checks: VerifyRow[] = isKubeMode(opts)
        ? await verifyKubernetes(opts, only as VerifyKind[], dns)
        : await verifyWorld(opts, only as VerifyKind[], dns);
      const failed = checks.filter((c) => c.result === 'FAIL');
      const passed = checks.filter((c) => c.result === 'PASS').length;
      const skipped = checks.length - failed.length - passed;
      if (format === 'json') process.stdout.write(formatJson({ passed: failed.length === 0, checks }));
      else {
        process.stdout.write(
          formatTable(
            ['CHECK', 'NAME', 'FROM', 'TO', 'RESULT', 'TIME', 'DETAIL'],
            checks.map((c) => [c.check, c.name, c.from, c.to, c.result, c.ms === undefined ? '-' : `${c.ms} ms`, c.detail]),
          ),
        );
        process.stdout.write(`\n${passed} of ${checks.length - skipped} checks passed${skipped ? `, ${skipped} skipped` : ''}\n`);
      }
      if (failed.length > 0) throw E.mcVerifyFailed(failed.map((c) => `${c.check} ${c.name} (${c.from} -> ${c.to}): ${c.detail}`));
    });
}

/** The local world: real pod traffic between --cluster and --tocluster; --dns alone works without a world. */
async function verifyWorld(opts: Flags, only: VerifyKind[], dns: { host: string; port: number } | undefined): Promise<VerifyRow[]> {
  const stateDir = resolveStateDir(opts.stateDir);
  // pod traffic needs the running world; --dns alone works without one
  const rec = dns && !readWorldRecord(stateDir) ? undefined : runningWorld(stateDir);
  const stores = new Map<string, ResourceStore>();
  const store = (cluster: string): ResourceStore => {
    let s = stores.get(cluster);
    if (!s) stores.set(cluster, (s = openClusterStore(stateDir, cluster, { existing: true }).store));
    return s;
  };
  const checks: VerifyRow[] = [];
  try {
    if (rec) {
      const to = opts.tocluster ?? rec.clusters.find((c) => c.name !== opts.cluster)?.name;
      if (!to || to === opts.cluster) throw E.usage(`--tocluster must name a cluster other than "${opts.cluster}"`, { value: opts.tocluster });
      for (const c of [opts.cluster, to]) if (!(await readJoin(store(c)))) throw E.mcNotJoined(c);
      checks.push(
        ...(await verifyTraffic({
          rec,
          from: opts.cluster,
          to,
          only,
          store,
          exec: (netns, command, timeoutMs) => execInPod(rec, netns, command, timeoutMs),
        })),
      );
    }
    if (dns) checks.push(...(await dnsRows(store(opts.cluster), opts.cluster, dns)));
  } finally {
    for (const s of stores.values()) await s.close().catch(() => undefined);
  }
  return checks;
}
