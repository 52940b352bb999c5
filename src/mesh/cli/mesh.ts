// strait mesh describe CLUSTER/NS/POD|DEPLOYMENT   effective inbound mode per port (and the policies
//                                       behind it), outbound TLS per destination
// strait mesh check [--cluster C]       configurations that will break traffic
// strait mesh flows [--cluster C] [-n NS] [--workload W] [--strict-would-reset]
//                                       inbound flows the sidecars saw, and which STRICT would reset
// Resources come from the running world's store, or from manifests with --from-file
// (validated like `strait apply`).
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import {
  buildMeshView,
  checkMesh,
  describeWorkload,
  findWorkload,
  flowRows,
  listMeshObjects,
  OBSERVATION_KIND,
  type FlowRow,
  type Finding,
  type MeshTrafficObservation,
  type PolicySource,
  type WorkloadDescription,
} from '../control/index.js';
import type { KubeObject } from '../../platform/store/index.js';
import { formatAge, formatJson, formatTable, formatYaml, loadManifests, parseOutputFormat, takesGlobals, withStore } from '../../platform/cli-kit/index.js';

/** The mesh's resources (and, with `observations`, the MeshTrafficObservations) from the world or from manifests. */
async function resources(opts: SourceOpts, cluster: string, observations = false): Promise<KubeObject[]> {
  if (opts.fromFile && opts.fromFile.length > 0) return opts.fromFile.flatMap((f) => loadManifests(f).map((m) => m.object));
  return withStore({ cluster, ...(opts.stateDir ? { stateDir: opts.stateDir } : {}) }, async (store) => [
    ...(await listMeshObjects(store)).objects,
    ...(observations ? (await store.list(OBSERVATION_KIND)).items : []),
  ]);
}

const observationsIn = (objects: readonly KubeObject[]): MeshTrafficObservation[] =>
  objects.filter((o) => o.apiVersion === OBSERVATION_KIND.apiVersion && o.kind === OBSERVATION_KIND.kind) as MeshTrafficObservation[];

interface SourceOpts {
  fromFile?: string[];
  stateDir?: string;
  output?: string;
}

const srcText = (s: PolicySource): string =>
  `${s.kind === 'PeerAuthentication' ? 'PA' : 'DR'} ${s.namespace}/${s.name}${s.port !== undefined ? `:${s.port}` : ''} (${s.scope}${s.generated ? ', generated' : ''})`;

export function formatDescription(d: WorkloadDescription, cluster: string): string {
  const lines = [
    `Pod:             ${cluster ? `${cluster}/` : ''}${d.namespace}/${d.name}${d.deployment ? ` (Deployment ${d.deployment})` : ''}`,
    `Identity:        ${d.spiffeId}`,
    `Sidecar:         ${d.sidecar ? 'yes' : 'no'} (${d.injection})`,
    `Control plane:   ${d.controlPlane ? `ServiceMeshControlPlane ${d.controlPlane.namespace}/${d.controlPlane.name} (dataPlane.mtls ${d.controlPlane.dataPlaneMtls}, controlPlane.mtls ${d.controlPlane.controlPlaneMtls})` : 'none (Istio defaults)'}`,
    `Root namespace:  ${d.rootNamespace}`,
    `Auto mTLS:       ${d.autoMtls ? 'on' : 'off'}`,
    '',
    'Inbound (effective PeerAuthentication mode per port):',
  ];
  if (!d.inbound) {
    lines.push('  no sidecar: nothing is enforced; every client reaches the application in plaintext');
  } else {
    const rows = d.inbound.ports.map((p) => [
      p.port,
      p.mode,
      p.sources.length ? srcText(p.sources[p.sources.length - 1] as PolicySource) : 'nothing applies: PERMISSIVE',
      p.sources.map(srcText).join(' → ') || '-',
    ]);
    rows.push([
      '*',
      d.inbound.mode,
      d.inbound.sources.length ? srcText(d.inbound.sources[d.inbound.sources.length - 1] as PolicySource) : 'nothing applies: PERMISSIVE',
      d.inbound.sources.map(srcText).join(' → ') || '-',
    ]);
    lines.push(formatTable(['PORT', 'MODE', 'DECIDED BY', 'POLICIES (outermost first)'], rows).trimEnd().replace(/^/gm, '  '));
    for (const s of d.inbound.shadowed) lines.push(`  ignored: ${srcText(s)}: an older policy of the same scope wins`);
  }
  lines.push('', 'Outbound (TLS per destination):');
  if (d.outbound.length === 0) lines.push('  no services');
  else {
    lines.push(
      formatTable(
        ['DESTINATION', 'PORT', 'TLS', 'REASON', 'RULE'],
        d.outbound.map((o) => [`${o.service}.${o.namespace}`, o.port, o.mode, o.reason, o.rule ? srcText(o.rule) : '-']),
      )
        .trimEnd()
        .replace(/^/gm, '  '),
    );
  }
  return lines.join('\n') + '\n';
}

/** Who the client is, in one cell: its SPIFFE ID (mTLS), else its pod, else its address. */
export function clientText(r: Pick<FlowRow, 'client'>): string {
  if (r.client.identity) return r.client.identity;
  if (r.client.pod) return `${r.client.namespace}/${r.client.pod}${r.client.sidecar === false ? ' (no sidecar)' : ''}`;
  return r.client.address;
}
const outcomeText = (r: FlowRow): string => (r.outcome === 'reset' ? `reset (${r.reason ?? 'unknown'})` : 'accepted');
const strictText = (r: FlowRow): string => (r.strictWouldReset ? 'would reset' : '-');

/** `strait mesh flows`: one line per flow; `wide` adds the pod, address, client pod, reason and first seen. */
export function formatFlows(rows: readonly FlowRow[], wide: boolean, now = Date.now()): string {
  if (rows.length === 0) return 'no flows observed (the sidecars report every 2 s once they saw a connection)\n';
  const headers = ['NAMESPACE', 'WORKLOAD', 'PORT', 'CLIENT', 'TLS', 'OUTCOME', 'MODE', 'COUNT', 'LAST SEEN', 'STRICT'];
  const cells = (r: FlowRow): (string | number)[] => [
    r.namespace,
    r.workload,
    r.port,
    clientText(r),
    r.tls,
    outcomeText(r),
    r.mode,
    r.count,
    formatAge(r.lastSeen, now),
    strictText(r),
  ];
  if (!wide) return formatTable(headers, rows.map(cells));
  return formatTable(
    [...headers, 'POD', 'ADDRESS', 'CLIENT POD', 'FIRST SEEN'],
    rows.map((r) => [...cells(r), r.pod, r.client.address, r.client.pod ? `${r.client.namespace}/${r.client.pod}` : '-', formatAge(r.firstSeen, now)]),
  );
}

/** The "Observed clients" section of `strait mesh describe`. */
export function formatObserved(d: WorkloadDescription, observed: DescribeObserved | undefined, now = Date.now()): string {
  const lines = ['', 'Observed clients (inbound flows the sidecar saw):'];
  if (!d.sidecar) lines.push('  no sidecar: nothing is observed');
  else if (!observed) lines.push('  no MeshTrafficObservation for this pod yet (the mesh agent writes one when its sidecar starts)');
  else {
    if (observed.flows.length === 0) lines.push('  no connections yet');
    else {
      lines.push(
        formatTable(
          ['PORT', 'CLIENT', 'ADDRESS', 'TLS', 'OUTCOME', 'MODE', 'COUNT', 'LAST SEEN', 'STRICT'],
          observed.flows.map((r) => [
            r.port,
            clientText(r),
            r.client.address,
            r.tls,
            outcomeText(r),
            r.mode,
            r.count,
            formatAge(r.lastSeen, now),
            strictText(r),
          ]),
        )
          .trimEnd()
          .replace(/^/gm, '  '),
      );
    }
    const would = observed.flows.filter((r) => r.strictWouldReset);
    lines.push(
      would.length === 0
        ? '  STRICT would reset no observed client'
        : `  STRICT would reset ${would.length === 1 ? '1 client' : `${would.length} clients`}: ${would.map((r) => `${clientText(r)} (${r.client.address}) on ${r.port}`).join(', ')}`,
    );
    if (observed.evictedFlows > 0) lines.push(`  ${observed.evictedFlows} older flows evicted (at most ${observed.flowLimit} are kept)`);
  }
  return lines.join('\n') + '\n';
}

interface DescribeObserved {
  flows: FlowRow[];
  lastReport?: string;
  flowLimit: number;
  evictedFlows: number;
}

export function formatFindings(findings: Finding[]): string {
  if (findings.length === 0) return 'no problems found\n';
  return formatTable(
    ['SEVERITY', 'RULE', 'MESSAGE'],
    findings.map((f) => [f.severity, f.rule, f.message]),
  );
}

/** `strait mesh describe POD`: the workload's effective policy and, when reported, the flows its sidecar observed. */
async function describeAction(ref: string, opts: SourceOpts): Promise<void> {
  const format = parseOutputFormat(opts.output, ['text', 'json', 'yaml']);
  const parts = ref.split('/');
  if (parts.length !== 3 && !(parts.length === 2 && opts.fromFile)) throw E.usage(`pod ${JSON.stringify(ref)} must be CLUSTER/NAMESPACE/POD`, { ref });
  const [cluster, ns, name] = parts.length === 3 ? (parts as [string, string, string]) : ['', parts[0] as string, parts[1] as string];
  const objects = await resources(opts, cluster, true);
  const view = buildMeshView(objects);
  const w = findWorkload(view, ns, name);
  if (!w)
    throw E.meshWorkloadNotFound(
      ref,
      view.workloads.map((x) => `${x.namespace}/${x.name}`),
    );
  const d = describeWorkload(view, w);
  const obs = observationsIn(objects).find((o) => o.metadata.namespace === w.namespace && o.metadata.name === w.name);
  const observed: DescribeObserved | undefined = obs
    ? {
        flows: flowRows([obs], view),
        flowLimit: obs.status?.flowLimit ?? 0,
        evictedFlows: obs.status?.evictedFlows ?? 0,
        ...(obs.status?.lastReport ? { lastReport: obs.status.lastReport } : {}),
      }
    : undefined;
  const out = { ...d, ...(observed ? { observed } : {}) };
  process.stdout.write(format === 'json' ? formatJson(out) : format === 'yaml' ? formatYaml(out) : formatDescription(d, cluster) + formatObserved(d, observed));
}

export function registerMeshCommand(program: Command): void {
  const mesh = program.command('mesh').description('mesh transport security: explain and check mTLS policy, and the traffic the sidecars observed');
  const common = (c: Command, globals: ('cluster' | 'stateDir')[] = [], formats = 'text, json or yaml'): Command =>
    takesGlobals(c, 'stateDir', ...globals)
      .option('-f, --from-file <file...>', 'read resources from these YAML/JSON manifests instead of the running world')
      .option('-o, --output <format>', formats, 'text');

  common(
    mesh
      .command('describe')
      .argument('<pod>', 'CLUSTER/NAMESPACE/POD or CLUSTER/NAMESPACE/DEPLOYMENT (a pod of it); with --from-file the cluster part may be omitted')
      .description(
        'effective inbound mode per port, the policies that produced it, the outbound TLS mode per destination, and the clients its sidecar observed (and which STRICT would reset)',
      ),
  ).action((ref: string, _opts: unknown, cmd: Command) => describeAction(ref, cmd.optsWithGlobals<SourceOpts>()));

  common(
    mesh
      .command('flows')
      .description('inbound flows the sidecars saw (client, mTLS or plaintext, peer identity, accepted or reset) and which ones STRICT would reset'),
    ['cluster'],
    'text, wide, json or yaml',
  )
    .option('-n, --namespace <ns>', 'only this namespace (default: all)')
    .option('--workload <name>', 'only this pod, or the pods of this Deployment')
    .option('--strict-would-reset', 'only the flows a STRICT policy would reset (plaintext clients accepted now)')
    .addHelpText(
      'after',
      '\nOutput (-o): text (default), wide (adds POD, ADDRESS, CLIENT POD, FIRST SEEN), json or yaml (the rows, as the\nMeshTrafficObservation flows with namespace/workload/pod). Data: MeshTrafficObservation (docs/mesh.md, Observed traffic).\n',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<SourceOpts & { cluster: string; namespace?: string; workload?: string; strictWouldReset?: boolean }>();
      const format = parseOutputFormat(opts.output, ['text', 'wide', 'json', 'yaml']);
      const objects = await resources(opts, opts.cluster, true);
      const rows = flowRows(observationsIn(objects), buildMeshView(objects), {
        ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
        ...(opts.workload !== undefined ? { workload: opts.workload } : {}),
        ...(opts.strictWouldReset ? { strictWouldReset: true } : {}),
      });
      process.stdout.write(format === 'json' ? formatJson(rows) : format === 'yaml' ? formatYaml(rows) : formatFlows(rows, format === 'wide'));
    });

  common(mesh.command('check').description('flag configurations that will break traffic (exit 1 when an error is found)'), ['cluster']).action(
    async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<SourceOpts & { cluster: string }>();
      const format = parseOutputFormat(opts.output, ['text', 'json', 'yaml']);
      const findings = checkMesh(buildMeshView(await resources(opts, opts.cluster)));
      process.stdout.write(format === 'json' ? formatJson(findings) : format === 'yaml' ? formatYaml(findings) : formatFindings(findings));
      const errors = findings.filter((f) => f.severity === 'error').length;
      if (errors > 0) throw E.meshCheckFailed(errors);
    },
  );
}
