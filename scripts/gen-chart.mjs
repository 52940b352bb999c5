#!/usr/bin/env node
// The Helm chart's templates (charts/strait/templates/) are generated from the kustomize base
// (deploy/): deploy/ is the one source of truth, so the two cannot drift.
//   node scripts/gen-chart.mjs          write charts/strait/templates/ and Chart.yaml
//   node scripts/gen-chart.mjs --check  exit 1 naming every generated file that is not up to date
//
// Why deploy/ is the source (and not the chart): deploy/ is plain Kubernetes YAML that
// every engineer edits, kubectl applies and the tests (test/integration/deploy-kubernetes.test.ts)
// read without any tool; the chart is deploy/ plus the values users change. The generator does
// what kustomize does to deploy/ (deploy/kustomization.yaml: the namespace for objects that name
// none, the part-of label, the image) and then swaps the values a user changes for template
// expressions (BINDINGS below: each anchor must match exactly once, so an edit to deploy/ that
// moves one makes this script fail instead of silently dropping the value). The CRDs are not
// copied: charts/strait/crds/crds.yaml is a symbolic link to deploy/crds.yaml (Helm's loader
// follows it). test/unit/helm-chart.test.ts runs --check, and with Helm renders the chart with
// its default values and compares every object with `kubectl kustomize deploy/`.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const deployDir = join(root, 'deploy');
const chartDir = join(root, 'charts', 'strait');
const templatesDir = join(chartDir, 'templates');
// hand-written files of templates/ (everything else there is generated and rewritten)
const HAND_WRITTEN = new Set(['_helpers.tpl', 'NOTES.txt', 'validate.yaml']);

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'PriorityClass',
  'StorageClass',
]);
const NS = 'strait-system';
const NS_TPL = '{{ .Release.Namespace }}';

/** `{{- toYaml EXPR | nindent N }}` replacing a YAML block `key:` plus its deeper-indented lines */
function block(key, expr) {
  const re = new RegExp(`^( *)${key}:\\n(?:\\1  .*\\n)+`, 'm');
  return { find: re, replace: (_m, ind) => `${ind}${key}:\n${ind}  {{- toYaml ${expr} | nindent ${ind.length + 2} }}\n` };
}
const resources = (expr) => block('resources', expr);

// The values users change, per deploy/ file: [anchor, replacement]. An anchor is a string or
// a RegExp and must match exactly once in its file.
const BINDINGS = {
  'config.yaml': [
    { find: 'clusterId: cluster-a', replace: 'clusterId: {{ .Values.clusterId }}' },
    { find: 'localSubnets: [10.1.0.0/16, 100.1.0.0/16]', replace: 'localSubnets: {{ list .Values.cidrs.cluster .Values.cidrs.service | toJson }}' },
    {
      find: /^( *)peers:\n\1 {2}- \{ clusterId: cluster-b, endpoint: 192\.0\.2\.2, port: 4500, subnets: \[10\.2\.0\.0\/16, 100\.2\.0\.0\/16\] \}\n/m,
      replace: (_m, ind) => `${ind}peers: {{ .Values.gateway.peers | toJson }}\n`,
    },
    { find: 'remoteSubnets: [10.2.0.0/16, 100.2.0.0/16]', replace: 'remoteSubnets: {{ include "strait.remoteSubnets" . }}' },
    {
      find: 'gateway: { address: 192.0.2.1, port: 4800 }',
      replace: 'gateway: { address: {{ .Values.gateway.address }}, port: 4800{{ with .Values.gateway.standby }}, standby: {{ toJson . }}{{ end }} }',
    },
    { find: /^( *)metricsListen: 0\.0\.0\.0:9103\n/m, replace: (m, ind) => `${m}{{- if not .Values.tls.enabled }}\n${ind}insecure: true\n{{- end }}\n` },
  ],
  'gateway.yaml': [block('nodeSelector', '(include "strait.gatewayNodeSelector" . | fromYaml)'), resources('.Values.gateway.resources')],
  'node-agent.yaml': [
    {
      find: /^( *)- \{ key: submariner\.io\/gateway, operator: NotIn, values: \["true"\] \}\n/m,
      replace: (_m, ind) =>
        `{{- range $k, $v := include "strait.gatewayNodeSelector" . | fromYaml }}\n${ind}- { key: {{ $k }}, operator: NotIn, values: [{{ $v | quote }}] }\n{{- end }}\n`,
    },
    resources('.Values.nodeAgent.resources'),
  ],
  'control.yaml': [resources('.Values.control.resources')],
  'githost.yaml': [
    // the claim's size first, on one line: the Deployment's resources stay the only block
    {
      find: /^( *)accessModes: \[ReadWriteOnce\]\n\1resources:\n\1 {2}requests:\n\1 {4}storage: 1Gi\n/m,
      replace: (_m, ind) =>
        `${ind}accessModes: [ReadWriteOnce]\n{{- with .Values.githost.persistence.storageClass }}\n${ind}storageClassName: {{ . }}\n{{- end }}\n${ind}resources: { requests: { storage: {{ .Values.githost.persistence.size }} } }\n`,
    },
    resources('.Values.githost.resources'),
    {
      find: /^( *)- name: data\n\1 {2}persistentVolumeClaim:\n\1 {4}claimName: strait-githost-data\n/m,
      replace: (_m, ind) =>
        `${ind}- name: data\n{{- if .Values.githost.persistence.enabled }}\n${ind}  persistentVolumeClaim:\n${ind}    claimName: strait-githost-data\n{{- else }}\n${ind}  emptyDir:\n${ind}    sizeLimit: {{ .Values.githost.persistence.size }}\n{{- end }}\n`,
    },
  ],
  'mesh-ingress.yaml': [resources('.Values.meshIngress.resources')],
};
// whole objects rendered only when a value says so: [file, kind, name] -> condition
const CONDITIONS = [
  { file: 'githost.yaml', cond: '.Values.githost.enabled' },
  { file: 'githost.yaml', kind: 'PersistentVolumeClaim', name: 'strait-githost-data', cond: '.Values.githost.persistence.enabled' },
  { file: 'rbac/githost.yaml', cond: '.Values.githost.enabled' },
  { file: 'mesh-ingress.yaml', cond: '.Values.meshIngress.enabled' },
  { file: 'rbac/mesh-ingress.yaml', cond: '.Values.meshIngress.enabled' },
  { file: 'namespace.yaml', kind: 'Namespace', name: NS, cond: '.Values.namespace.create' },
  { file: 'namespace.yaml', kind: 'Namespace', name: 'submariner-operator', cond: '.Values.operatorNamespace.create' },
];

function fail(msg) {
  console.error(`gen-chart: ${msg}`);
  process.exit(1);
}

function applyOnce(file, text, { find, replace }) {
  const count = typeof find === 'string' ? text.split(find).length - 1 : (text.match(new RegExp(find.source, find.flags + 'g')) ?? []).length;
  if (count !== 1) fail(`deploy/${file}: the anchor ${String(find)} matches ${count} times (want 1): update BINDINGS in scripts/gen-chart.mjs with deploy/`);
  return typeof find === 'string' ? text.replace(find, () => replace) : text.replace(find, replace);
}

/** kustomize's labels (metadata only) and namespace (unsetOnly) on one document's text */
function kustomizeDoc(docText, obj, labels) {
  const lines = docText.split('\n');
  const meta = lines.findIndex((l) => l === 'metadata:');
  if (meta < 0) fail(`an object without a top-level metadata: block: ${docText.slice(0, 80)}`);
  let end = meta + 1;
  while (end < lines.length && (lines[end].startsWith('  ') || lines[end].trim() === '')) end++;
  while (end > meta + 1 && lines[end - 1].trim() === '') end--;
  const metaLines = lines.slice(meta + 1, end);
  const labelsAt = metaLines.findIndex((l) => l === '  labels:');
  const labelLines = Object.entries(labels).map(([k, v]) => `    ${k}: ${v}`);
  if (labelsAt >= 0) metaLines.splice(labelsAt + 1, 0, ...labelLines);
  else metaLines.push('  labels:', ...labelLines);
  if (!CLUSTER_SCOPED.has(obj.kind) && !obj.metadata.namespace)
    metaLines.splice(metaLines.findIndex((l) => l.startsWith('  name:')) + 1, 0, `  namespace: ${NS}`);
  return [...lines.slice(0, meta + 1), ...metaLines, ...lines.slice(end)].join('\n');
}

function generate() {
  const kust = parse(readFileSync(join(deployDir, 'kustomization.yaml'), 'utf8'));
  const labels = Object.assign({}, ...(kust.labels ?? []).map((l) => l.pairs));
  const image = (kust.images ?? []).find((i) => i.name === 'strait');
  if (!image) fail('deploy/kustomization.yaml has no images: entry for strait');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const out = new Map();
  for (const file of kust.resources) {
    if (file === 'crds.yaml') continue; // charts/strait/crds/crds.yaml -> deploy/crds.yaml
    let text = readFileSync(join(deployDir, file), 'utf8');
    if (text.includes('{{')) fail(`deploy/${file} contains "{{", which Helm would read as a template`);
    const objs = text.split(/^---\n/m).map((d) => parseAllDocuments(d)[0]?.toJS());
    for (const b of BINDINGS[file] ?? []) text = applyOnce(file, text, b);
    const docs = text.split(/^---\n/m);
    if (docs.length !== objs.length) fail(`deploy/${file}: a binding changed the number of documents`);
    const rendered = docs.map((docText, i) => {
      const obj = objs[i];
      if (!obj?.kind) fail(`deploy/${file}: a document without a kind`);
      let t = kustomizeDoc(docText.replace(/\n*$/, '\n'), obj, labels);
      // the namespace, everywhere outside comments
      t = t
        .split('\n')
        .map((l) => (l.trimStart().startsWith('#') ? l : l.replaceAll(NS, NS_TPL)))
        .join('\n');
      // the image (kustomize: images: name strait)
      t = t.replace(
        /^( *)image: strait$/gm,
        (_m, ind) => `${ind}image: {{ include "strait.image" . }}\n{{- with .Values.image.pullPolicy }}\n${ind}imagePullPolicy: {{ . }}\n{{- end }}`,
      );
      for (const c of CONDITIONS) {
        if (c.file === file && (!c.kind || (c.kind === obj.kind && c.name === obj.metadata.name))) t = `{{- if ${c.cond} }}\n${t}{{- end }}\n`;
      }
      return t;
    });
    const header = `# Generated by scripts/gen-chart.mjs from deploy/${file}: edit that file, then run\n# node scripts/gen-chart.mjs (test/unit/helm-chart.test.ts checks it is up to date).\n`;
    out.set(join(templatesDir, file), header + rendered.join('---\n'));
  }
  if (image.newTag !== pkg.version) fail(`deploy/kustomization.yaml images: strait newTag ${image.newTag} is not package.json's version ${pkg.version}`);
  out.set(
    join(chartDir, 'Chart.yaml'),
    `# Generated by scripts/gen-chart.mjs: version and appVersion are package.json's version.
apiVersion: v2
name: strait
description: ${JSON.stringify(pkg.description)}
type: application
version: ${pkg.version}
appVersion: "${pkg.version}"
`,
  );
  return out;
}

const check = process.argv.includes('--check');
const files = generate();
const existing = existsSync(templatesDir)
  ? readdirSync(templatesDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.yaml') && !HAND_WRITTEN.has(f))
      .map((f) => join(templatesDir, f))
  : [];
const stale = [];
for (const [path, text] of files) {
  const have = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (have === text) continue;
  stale.push(path);
  if (!check) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
}
for (const path of existing) {
  if (files.has(path)) continue;
  stale.push(path);
  if (!check) rmSync(path);
}
if (check && stale.length) fail(`not up to date with deploy/ (run node scripts/gen-chart.mjs): ${stale.map((p) => p.slice(root.length + 1)).join(', ')}`);
if (!check) console.log(stale.length ? `gen-chart: wrote ${stale.map((p) => p.slice(root.length + 1)).join(', ')}` : 'gen-chart: up to date');
