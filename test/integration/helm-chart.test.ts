// The Helm chart (charts/strait) against the kustomize base (deploy/), with the real Helm CLI
// (built from the Go module proxy by test/helm/build-helm.sh): the chart's templates are what
// scripts/gen-chart.mjs makes of deploy/ (no drift), `helm lint` passes, `helm template` with the
// default values renders exactly the objects of `kubectl kustomize deploy/`, the values users
// change land where the daemons read them (their own configuration parsers), and bad values are
// refused with a message. The version is package.json's in the chart and the kustomize image.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { parseGatewayConfig } from '../../src/multicluster/dataplane/gateway/index.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const chart = join(root, 'charts', 'strait');
const helmCache = execFileSync('bash', [join(root, 'test', 'helm', 'build-helm.sh'), '--print'], { encoding: 'utf8' }).trim();
const helmBin = join(helmCache, 'helm');
const kubectlBin = ((): string | undefined => {
  const cache = execFileSync('bash', [join(root, 'test', 'k8s', 'build-apiserver.sh'), '--print'], { encoding: 'utf8' }).trim();
  if (existsSync(join(cache, 'kubectl'))) return join(cache, 'kubectl');
  return spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0 ? 'kubectl' : undefined;
})();
// in CI (.ci/run builds Helm first) a missing helm is a failure, elsewhere a skip that says why
const missing = !existsSync(helmBin)
  ? `helm is not built (${helmBin}); run test/helm/build-helm.sh (slow the first time)`
  : !kubectlBin
    ? 'kubectl is missing (test/k8s/build-apiserver.sh --kubectl)'
    : undefined;
const skip = missing && process.env['CI'] !== 'true' ? missing : false;
const work = mkdtempSync(join(tmpdir(), 'strait-helm-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

function tool(bin: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  // HOME-independent: Helm keeps no cache or repository config between tests
  const env = { ...process.env, HELM_CACHE_HOME: join(work, 'cache'), HELM_CONFIG_HOME: join(work, 'config'), HELM_DATA_HOME: join(work, 'data') };
  return spawnSync(bin, args, { encoding: 'utf8', env, maxBuffer: 64 << 20 });
}
function helm(...args: string[]): string {
  assert.ok(!missing, missing);
  const r = tool(helmBin, args);
  assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o);
const key = (o: Obj): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const template = (...args: string[]): Obj[] => objects(helm('template', 'strait', chart, '--namespace', 'strait-system', ...args));
const config = (objs: Obj[]): Record<string, string> => objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'strait-config')!.data!;

test('charts/strait/templates and Chart.yaml are what scripts/gen-chart.mjs makes of deploy/ (no drift); the CRDs are deploy/crds.yaml itself', () => {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'gen-chart.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(join(chart, 'crds', 'crds.yaml'), 'utf8'), readFileSync(join(root, 'deploy', 'crds.yaml'), 'utf8'));
});

test("one version: package.json's is the chart's version and appVersion and the kustomize base's image tag", () => {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const meta = parse(readFileSync(join(chart, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
  assert.equal(meta.version, version);
  assert.equal(meta.appVersion, version);
  const kust = parse(readFileSync(join(root, 'deploy', 'kustomization.yaml'), 'utf8')) as { images: { name: string; newTag: string }[] };
  assert.equal(kust.images.find((i) => i.name === 'strait')?.newTag, version);
});

test('every CRD has exactly one storage version, and every served version one structural schema (no conversion needed: docs/upgrades.md)', () => {
  const crds = objects(readFileSync(join(root, 'deploy', 'crds.yaml'), 'utf8')).filter((o) => o.kind === 'CustomResourceDefinition');
  assert.ok(crds.length > 0);
  for (const crd of crds) {
    const versions = (crd.spec as { versions: { name: string; served: boolean; storage: boolean; schema: unknown }[] }).versions;
    assert.equal(versions.filter((v) => v.storage).length, 1, `${crd.metadata.name}: one storage version`);
    assert.ok(versions.find((v) => v.storage)!.served, `${crd.metadata.name}: the storage version is served`);
    const conversion = (crd.spec as { conversion?: { strategy: string } }).conversion?.strategy ?? 'None';
    if (conversion === 'None') {
      for (const v of versions)
        assert.ok(isDeepStrictEqual(v.schema, versions[0]!.schema), `${crd.metadata.name} ${v.name}: the schema of ${versions[0]!.name} (conversion None)`);
    }
  }
});

test('helm lint passes; helm template with the default values renders exactly the objects of kubectl kustomize deploy/', { skip }, () => {
  const lint = helm('lint', '--strict', chart);
  assert.match(lint, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  const fromHelm = template('--include-crds');
  const k = tool(kubectlBin ?? 'kubectl', ['kustomize', join(root, 'deploy')]);
  assert.equal(k.status, 0, k.stderr);
  const fromKustomize = objects(k.stdout);
  const norm = (o: Obj): Obj => {
    const c = structuredClone(o);
    // the CRDs come unchanged from deploy/crds.yaml (Helm never templates crds/): kustomize's label only
    if (c.kind === 'CustomResourceDefinition') delete c.metadata.labels?.['app.kubernetes.io/part-of'];
    if (c.metadata.labels && Object.keys(c.metadata.labels).length === 0) delete c.metadata.labels;
    // configuration files compared as the YAML the daemons parse (Helm writes JSON flow lists)
    if (c.kind === 'ConfigMap' && c.data) for (const [f, v] of Object.entries(c.data)) if (f.endsWith('.yaml')) c.data[f] = parse(v) as string;
    return c;
  };
  const a = new Map(fromHelm.map((o) => [key(o), norm(o)]));
  const b = new Map(fromKustomize.map((o) => [key(o), norm(o)]));
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort(), 'the same objects');
  for (const [k2, o] of b) assert.ok(isDeepStrictEqual(a.get(k2), o), `${k2} differs:\nhelm: ${JSON.stringify(a.get(k2))}\nkustomize: ${JSON.stringify(o)}`);
  console.log(`helm template == kubectl kustomize deploy/: ${a.size} objects (${fromHelm.filter((o) => o.kind === 'CustomResourceDefinition').length} CRDs)`);
});

test("the values users change reach the daemons' configuration (their own parsers), the workloads and the objects rendered", { skip }, () => {
  const values = join(work, 'values.yaml');
  writeFileSync(
    values,
    JSON.stringify({
      clusterId: 'cluster-x',
      cidrs: { cluster: '10.20.0.0/16', service: '10.21.0.0/16' },
      gateway: {
        nodeSelector: { 'example.com/edge': 'yes' },
        address: '172.30.9.2',
        standby: ['172.30.9.3'],
        peers: [
          { clusterId: 'cluster-y', endpoint: '172.30.8.2', port: 4500, subnets: ['10.30.0.0/16', '10.31.0.0/16'] },
          { clusterId: 'cluster-z', endpoint: '172.30.7.2', port: 4501, subnets: ['10.40.0.0/16'] },
        ],
        resources: { requests: { cpu: '300m' } },
      },
      githost: { persistence: { enabled: true, size: '5Gi', storageClass: 'fast' } },
      meshIngress: { enabled: false },
      image: { repository: 'registry.example/strait', tag: '9.9.9', pullPolicy: 'IfNotPresent' },
      tls: { enabled: false },
    }),
  );
  const objs = template('-f', values);
  const cm = config(objs);
  const gw = parseGatewayConfig(parse(cm['gateway.yaml']!), 'chart gateway.yaml');
  assert.equal(gw.clusterId, 'cluster-x');
  assert.deepEqual(gw.localSubnets, ['10.20.0.0/16', '10.21.0.0/16']);
  assert.deepEqual(
    gw.peers.map((p) => [p.clusterId, p.endpoint, p.port, p.subnets]),
    [
      ['cluster-y', '172.30.8.2', 4500, ['10.30.0.0/16', '10.31.0.0/16']],
      ['cluster-z', '172.30.7.2', 4501, ['10.40.0.0/16']],
    ],
  );
  const agent = parseNodeAgentConfig(parse(cm['node-agent.yaml']!), 'chart node-agent.yaml');
  assert.deepEqual(agent.remoteSubnets, ['10.30.0.0/16', '10.31.0.0/16', '10.40.0.0/16'], "every peer's subnets routed to the gateway");
  assert.equal(agent.gateway.address, '172.30.9.2');
  assert.deepEqual(agent.gateway.standby, ['172.30.9.3']);
  assert.equal((parse(cm['control.yaml']!) as { insecure?: boolean }).insecure, true, 'tls.enabled=false: plain HTTP');
  const spec = (
    name: string,
  ): {
    nodeSelector?: Record<string, string>;
    affinity?: unknown;
    containers: { image: string; imagePullPolicy?: string; resources: unknown }[];
    volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[];
  } => (objs.find((o) => ['DaemonSet', 'Deployment'].includes(o.kind) && o.metadata.name === name)!.spec as { template: { spec: never } }).template.spec;
  assert.deepEqual(spec('strait-gateway').nodeSelector, { 'example.com/edge': 'yes' }, 'the given selector replaces the default one');
  assert.deepEqual(
    spec('strait-gateway').containers[0]!.resources,
    { requests: { cpu: '300m', memory: '128Mi' }, limits: { memory: '512Mi' } },
    'merged with the defaults',
  );
  assert.match(
    JSON.stringify(spec('strait-node-agent').affinity),
    /"key":"example.com\/edge","operator":"NotIn","values":\["yes"\]/,
    'no node agent on the gateway nodes',
  );
  for (const w of ['strait-gateway', 'strait-node-agent', 'strait-control', 'strait-githost']) {
    assert.equal(spec(w).containers[0]!.image, 'registry.example/strait:9.9.9', w);
    assert.equal(spec(w).containers[0]!.imagePullPolicy, 'IfNotPresent', w);
  }
  assert.equal(spec('strait-githost').volumes.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName, 'strait-githost-data');
  const pvc = objs.find((o) => o.kind === 'PersistentVolumeClaim')!;
  assert.deepEqual(pvc.spec, { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } });
  assert.ok(!objs.some((o) => o.metadata.name === 'strait-mesh-ingress'), 'meshIngress.enabled=false: no ingress objects');
  // repositories that live only as long as the pod: an emptyDir of the size, no claim
  const ephemeral = template('--set', 'githost.persistence.enabled=false', '--set', 'githost.persistence.size=2Gi');
  const ephemeralGithost = ephemeral.find((o) => o.kind === 'Deployment' && o.metadata.name === 'strait-githost') as unknown as {
    spec: { template: { spec: { volumes: { name: string; emptyDir?: { sizeLimit: string } }[] } } };
  };
  assert.deepEqual(ephemeralGithost.spec.template.spec.volumes.find((v) => v.name === 'data')?.emptyDir, { sizeLimit: '2Gi' });
  assert.ok(!ephemeral.some((o) => o.kind === 'PersistentVolumeClaim'), 'githost.persistence.enabled=false: no claim');
  const noGithost = template('--set', 'githost.enabled=false');
  assert.deepEqual(noGithost.filter((o) => o.metadata.name.startsWith('strait-githost')).map(key), []);
  // another release namespace: every reference follows it
  const other = objects(helm('template', 'strait', chart, '--namespace', 'net-x'));
  assert.doesNotMatch(JSON.stringify(other), /strait-system/);
  const hook = other.find((o) => o.kind === 'MutatingWebhookConfiguration') as unknown as { webhooks: { clientConfig: { service: { namespace: string } } }[] };
  assert.equal(hook.webhooks[0]!.clientConfig.service.namespace, 'net-x');
});

test('bad values are refused before anything is applied, with a message naming the value', { skip }, () => {
  const cases: [string[], RegExp][] = [
    [['--set', 'mesh.dataplane=node'], /mesh\.dataplane "node": Kubernetes mode has the sidecar data plane only/],
    [['--set', 'clusterId='], /clusterId is empty/],
    [['--set-json', 'gateway.peers=[{"clusterId":"cluster-y"}]'], /gateway\.peers: \{"clusterId":"cluster-y"\} needs clusterId, endpoint and subnets/],
  ];
  for (const [args, want] of cases) {
    const r = tool(helmBin, ['template', 'strait', chart, ...args]);
    assert.notEqual(r.status, 0, args.join(' '));
    assert.match(r.stderr, want, args.join(' '));
  }
});
