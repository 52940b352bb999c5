// strait diagnose: CIDR overlaps and what else blocks a join or the cluster set, in the local
// world or, with --kubeconfig/--context, in a Kubernetes cluster (then first: are strait's
// CRDs served there).
import type { Command } from 'commander';
import { E, isStraitError } from '../../base/errors/index.js';
import { diagnose, readJoin, type BrokerInfo, type DiagnoseCheck } from '../control/clusterset/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { CLUSTER_KINDS, openBrokerFromInfo, openTarget, type TargetOptions } from './stores.js';
import { addKubeOptions, formatJson, formatTable, parseOutputFormat, refuseWorldOptions, takesGlobals } from '../../platform/cli-kit/index.js';
import { discoverNetwork, readBrokerInfoFile } from './join.js';
import { diagnoseBrokerReach } from './diagnose-broker-reach.js';
import { diagnoseWorkloads } from './diagnose-workloads.js';

interface Flags extends TargetOptions {
  brokerInfo?: string;
  clusterid?: string;
  clustercidr?: string;
  servicecidr?: string;
  output: string;
}

function print(format: string, checks: DiagnoseCheck[]): void {
  if (format === 'json') process.stdout.write(formatJson({ checks }));
  else
    process.stdout.write(
      formatTable(
        ['CHECK', 'STATUS', 'MESSAGE'],
        checks.map((c) => [c.check, c.status, c.message]),
      ),
    );
}

export function registerDiagnoseCommand(program: Command): void {
  addKubeOptions(takesGlobals(program.command('diagnose'), 'cluster', 'stateDir'))
    .description(
      'check the cluster set: CIDR overlaps, broker info, endpoints, active gateway, connections, exports; with --clusterid, what blocks that join; ' +
        "with --kubeconfig/--context, of a Kubernetes cluster (and whether strait's CRDs are installed there and its pods run: an unbound volume claim, an unschedulable or crashing pod)",
    )
    .option('--broker-info <file>', 'broker-info.subm to check (default: the broker the cluster joined)')
    .option('--clusterid <id>', 'check a join of this cluster ID')
    .option('--clustercidr <cidrs>', 'cluster CIDRs of the candidate')
    .option('--servicecidr <cidrs>', 'service CIDRs of the candidate')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .addHelpText('after', '\nExit status 0 when no check fails, 1 (STRAIT_ERR_MC_DIAGNOSE_FAILED) when any does.\n')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<Flags>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      refuseWorldOptions(cmd, opts);
      const target = openTarget(opts, { existing: true });
      const local = target.store;
      const checks: DiagnoseCheck[] = [];
      let broker: ResourceStore | undefined;
      let info: BrokerInfo | undefined;
      try {
        if (target.kube) {
          try {
            await target.kube.requireKinds(CLUSTER_KINDS);
            checks.push({ check: 'crds', status: 'ok', message: `the API server ${target.kube.server} serves the multicluster kinds (deploy/crds.yaml)` });
            // strait's own pods: Pending (an unbound claim, unschedulable), crashing, restarted
            checks.push(...(await diagnoseWorkloads(target.kube)));
            // the cluster's own reach of its broker (the `broker` check below is from here)
            checks.push(...(await diagnoseBrokerReach(target.kube)));
          } catch (err) {
            if (!isStraitError(err, 'STRAIT_ERR_KUBE_CRD_MISSING')) throw err;
            checks.push({ check: 'crds', status: 'fail', message: err.message });
            print(format, checks);
            throw E.mcDiagnoseFailed([err.message]);
          }
        }
        if (opts.brokerInfo) {
          info = readBrokerInfoFile(opts.brokerInfo);
          broker = openBrokerFromInfo(info);
        } else {
          broker = await target.openBroker();
        }
        if (!broker) {
          const err = target.kube ? E.mcNotJoined(target.name) : E.mcBrokerNotDeployed(target.stateDir ?? '');
          // what was checked before (the CRDs, strait's pods) is still worth seeing
          if (checks.length > 0) print(format, [...checks, { check: 'join', status: 'fail', message: err.message }]);
          throw err;
        }
        const clusterId = target.kube ? ((await readJoin(local))?.clusterId ?? target.name) : opts.cluster;
        checks.push(
          ...(await diagnose({
            broker,
            local,
            localClusterId: clusterId,
            ...(opts.clusterid
              ? { candidate: { ...(info ? { info, source: opts.brokerInfo } : {}), network: discoverNetwork(target.stateDir, opts.clusterid, opts) } }
              : {}),
          })),
        );
        print(format, checks);
        const failed = checks.filter((c) => c.status === 'fail').map((c) => c.message);
        if (failed.length > 0) throw E.mcDiagnoseFailed(failed);
      } finally {
        await broker?.close();
        await target.close();
      }
    });
}
