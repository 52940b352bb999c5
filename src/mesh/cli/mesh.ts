// strait mesh describe CLUSTER/NS/POD|DEPLOYMENT   effective inbound mode per port (and the policies
//                                       behind it), outbound TLS per destination
// strait mesh check [--cluster C]       configurations that will break traffic
// Resources come from the running world's store, or from manifests with --from-file
// (validated like `strait apply`).
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { buildMeshView, checkMesh, describeWorkload, findWorkload, listMeshObjects, type Finding, type PolicySource, type WorkloadDescription } from '../control/index.js';
import type { KubeObject } from '../../platform/store/index.js';
import { formatJson, formatTable, formatYaml, loadManifests, parseOutputFormat, takesGlobals, withStore } from '../../platform/cli-kit/index.js';


async function resources(opts: SourceOpts, cluster: string): Promise<KubeObject[]> {
  if (opts.fromFile && opts.fromFile.length > 0) return opts.fromFile.flatMap((f) => loadManifests(f).map((m) => m.object));
  return withStore({ cluster, ...(opts.stateDir ? { stateDir: opts.stateDir } : {}) }, async (store) => (await listMeshObjects(store)).objects);
}

interface SourceOpts { fromFile?: string[]; stateDir?: string; output?: string }

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
    const rows = d.inbound.ports.map((p) => [p.port, p.mode, p.sources.length ? srcText(p.sources[p.sources.length - 1] as PolicySource) : 'nothing applies: PERMISSIVE',
      p.sources.map(srcText).join(' → ') || '-']);
    rows.push(['*', d.inbound.mode, d.inbound.sources.length ? srcText(d.inbound.sources[d.inbound.sources.length - 1] as PolicySource) : 'nothing applies: PERMISSIVE',
      d.inbound.sources.map(srcText).join(' → ') || '-']);
    lines.push(formatTable(['PORT', 'MODE', 'DECIDED BY', 'POLICIES (outermost first)'], rows).trimEnd().replace(/^/gm, '  '));
    for (const s of d.inbound.shadowed) lines.push(`  ignored: ${srcText(s)}: an older policy of the same scope wins`);
  }
  lines.push('', 'Outbound (TLS per destination):');
  if (d.outbound.length === 0) lines.push('  no services');
  else {
    lines.push(formatTable(['DESTINATION', 'PORT', 'TLS', 'REASON', 'RULE'],
      d.outbound.map((o) => [`${o.service}.${o.namespace}`, o.port, o.mode, o.reason, o.rule ? srcText(o.rule) : '-'])).trimEnd().replace(/^/gm, '  '));
  }
  return lines.join('\n') + '\n';
}

export function formatFindings(findings: Finding[]): string {
  if (findings.length === 0) return 'no problems found\n';
  return formatTable(['SEVERITY', 'RULE', 'MESSAGE'], findings.map((f) => [f.severity, f.rule, f.message]));
}

export function registerMeshCommand(program: Command): void {
  const mesh = program.command('mesh').description('mesh transport security: explain and check mTLS policy');
  const common = (c: Command, ...globals: ('cluster' | 'stateDir')[]): Command => takesGlobals(c, 'stateDir', ...globals)
    .option('-f, --from-file <file...>', 'read resources from these YAML/JSON manifests instead of the running world')
    .option('-o, --output <format>', 'text, json or yaml', 'text');

  common(mesh.command('describe')
    .argument('<pod>', 'CLUSTER/NAMESPACE/POD or CLUSTER/NAMESPACE/DEPLOYMENT (a pod of it); with --from-file the cluster part may be omitted')
    .description('effective inbound mode per port, the policies that produced it, and the outbound TLS mode per destination'))
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<SourceOpts>();
      const format = parseOutputFormat(opts.output, ['text', 'json', 'yaml']);
      const parts = ref.split('/');
      if (parts.length !== 3 && !(parts.length === 2 && opts.fromFile)) throw E.usage(`pod ${JSON.stringify(ref)} must be CLUSTER/NAMESPACE/POD`, { ref });
      const [cluster, ns, name] = parts.length === 3 ? parts as [string, string, string] : ['', parts[0] as string, parts[1] as string];
      const view = buildMeshView(await resources(opts, cluster));
      const w = findWorkload(view, ns, name);
      if (!w) throw E.meshWorkloadNotFound(ref, view.workloads.map((x) => `${x.namespace}/${x.name}`));
      const d = describeWorkload(view, w);
      process.stdout.write(format === 'json' ? formatJson(d) : format === 'yaml' ? formatYaml(d) : formatDescription(d, cluster));
    });

  common(mesh.command('check')
    .description('flag configurations that will break traffic (exit 1 when an error is found)'), 'cluster')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<SourceOpts & { cluster: string }>();
      const format = parseOutputFormat(opts.output, ['text', 'json', 'yaml']);
      const findings = checkMesh(buildMeshView(await resources(opts, opts.cluster)));
      process.stdout.write(format === 'json' ? formatJson(findings) : format === 'yaml' ? formatYaml(findings) : formatFindings(findings));
      const errors = findings.filter((f) => f.severity === 'error').length;
      if (errors > 0) throw E.meshCheckFailed(errors);
    });
}
