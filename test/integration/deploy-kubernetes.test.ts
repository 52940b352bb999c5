// deploy/ against a real kube-apiserver: the kustomization passes server-side dry-run,
// then really applies; each component's ServiceAccount can do what it needs and no more
// (kubectl auth can-i through the RBAC authorizer); the DaemonSets carry only the
// capabilities they need; deploy/crds.yaml is what `strait crds` prints.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { serveSidecarInjector } from '../../src/mesh/control/sidecar-injector/index.js';
import { parseGithostSettings } from '../../src/githost/server/index.js';
import { parseGatewayConfig } from '../../src/multicluster/dataplane/gateway/index.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import { makeServingCert, startTestCluster, type TestCluster } from '../k8s/cluster.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const deployDir = join(root, 'deploy');
let cluster: TestCluster | undefined;
let skip: string | undefined;

before(
  async () => {
    const r = await startTestCluster();
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
  },
  { timeout: 3_600_000 },
); // the first build of kube-apiserver takes minutes (cached after)

after(async () => {
  await cluster?.stop();
});

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

function rendered(c: TestCluster): Obj[] {
  const r = c.kubectl(['kustomize', deployDir]);
  assert.equal(r.status, 0, r.stderr);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJSON() as Obj)
    .filter(Boolean);
}

interface Container {
  name: string;
  securityContext?: { privileged?: boolean; capabilities?: { add?: string[]; drop?: string[] }; allowPrivilegeEscalation?: boolean };
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string; hostPath?: { path: string; type?: string } }[];
  nodeSelector?: Record<string, string>;
  hostNetwork?: boolean;
  automountServiceAccountToken?: boolean;
}
const podSpec = (o: Obj): PodSpec => (o.spec as { template: { spec: PodSpec } }).template.spec;

describe('deploy/ against a real kube-apiserver', () => {
  test('deploy/crds.yaml is what `strait crds` prints (regenerate: node bin/strait.js crds > deploy/crds.yaml)', () => {
    const r = spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'crds'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(deployDir, 'crds.yaml'), 'utf8'), r.stdout);
  });

  test('the daemons accept the configuration files of deploy/config.yaml, and the DaemonSets are scraped and probed on their metrics ports (declared as no hostPort: maxSurge)', () => {
    const cm = parse(readFileSync(join(deployDir, 'config.yaml'), 'utf8')) as { data: Record<string, string> };
    const gw = parseGatewayConfig(parse(cm.data['gateway.yaml']!), 'deploy/config.yaml gateway.yaml');
    const agent = parseNodeAgentConfig(parse(cm.data['node-agent.yaml']!), 'deploy/config.yaml node-agent.yaml');
    const table: [string, number, string][] = [
      ['gateway.yaml', gw.metrics.port, 'strait-gateway'],
      ['node-agent.yaml', agent.metrics.port, 'strait-node-agent'],
    ];
    for (const [file, port, ds] of table) {
      const text = readFileSync(join(deployDir, `${ds.replace('strait-', '')}.yaml`), 'utf8');
      assert.match(text, new RegExp(`prometheus.io/port: "${port}"`), `${ds} is scraped on ${port}`);
      assert.match(text, new RegExp(`path: /metrics\\n +port: ${port}\\n`), `${ds}'s liveness probe on ${file}'s metrics port ${port}`);
      // hostNetwork: a declared port is a hostPort, and a surge pod beside the old one would be unschedulable
      assert.doesNotMatch(text, /^\s*ports:/m, `${ds} declares no ports (maxSurge)`);
      assert.match(text, /maxSurge: 1\n\s+maxUnavailable: 0/, `${ds} rolls with the new pod beside the old one`);
    }
    assert.equal(gw.metrics.listen, '0.0.0.0', 'Prometheus scrapes from outside the pod');
    const githost = parseGithostSettings(parse(cm.data['githost.yaml']!), 'deploy/config.yaml githost.yaml');
    assert.equal(githost.host, '0.0.0.0', 'the githost Service reaches it from outside the pod');
    assert.match(readFileSync(join(deployDir, 'githost.yaml'), 'utf8'), new RegExp(`containerPort: ${githost.port}\\b`));
  });

  test('kubectl apply --dry-run=server -k deploy/ passes', (t) => {
    if (!cluster) return t.skip(skip);
    // server-side dry-run does not create the namespaces the other objects go into
    assert.equal(cluster.kubectl(['create', 'namespace', 'strait-system']).status, 0);
    assert.equal(cluster.kubectl(['create', 'namespace', 'submariner-operator']).status, 0);
    const r = cluster.kubectl(['apply', '--dry-run=server', '-k', deployDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /daemonset\.apps\/strait-node-agent (created|configured|unchanged) \(server dry run\)/);
    assert.match(r.stdout, /daemonset\.apps\/strait-gateway (created|configured|unchanged) \(server dry run\)/);
    assert.match(r.stdout, /customresourcedefinition\.apiextensions\.k8s\.io\/serviceexports\.multicluster\.x-k8s\.io .*\(server dry run\)/);
    // nothing was stored
    assert.notEqual(cluster.kubectl(['get', 'daemonset', '-n', 'strait-system', 'strait-gateway']).status, 0);
  });

  test('the dry run is a real check: a DaemonSet the API server rejects fails it', (t) => {
    if (!cluster) return t.skip(skip);
    const ds = rendered(cluster).find((o) => o.kind === 'DaemonSet' && o.metadata.name === 'strait-gateway')!;
    podSpec(ds).containers[0]!.name = 'Not_A_DNS_Label';
    const r = cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(ds));
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Invalid value: "Not_A_DNS_Label"/);
  });

  test('agent and gateway get only NET_ADMIN and the TUN device', (t) => {
    if (!cluster) return t.skip(skip);
    const objs = rendered(cluster);
    const table: [string, string[], Record<string, string> | undefined][] = [
      ['strait-node-agent', ['NET_ADMIN'], undefined],
      ['strait-gateway', ['NET_ADMIN'], { 'submariner.io/gateway': 'true' }],
    ];
    for (const [name, caps, selector] of table) {
      const ds = objs.find((o) => o.kind === 'DaemonSet' && o.metadata.name === name);
      assert.ok(ds, `${name} DaemonSet`);
      const spec = podSpec(ds);
      assert.deepEqual(spec.nodeSelector, selector, `${name} nodeSelector`);
      for (const c of spec.containers) {
        assert.deepEqual(c.securityContext?.capabilities, { drop: ['ALL'], add: caps }, `${name}/${c.name} capabilities`);
        assert.notEqual(c.securityContext?.privileged, true);
        assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
      }
      assert.deepEqual(
        spec.volumes?.filter((v) => v.hostPath).map((v) => v.hostPath),
        [{ path: '/dev/net/tun', type: 'CharDevice' }],
        `${name} hostPaths`,
      );
    }
    for (const name of ['strait-control', 'strait-githost']) {
      const d = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
      assert.ok(d, `${name} Deployment`);
      const spec = podSpec(d);
      assert.equal(
        spec.volumes?.some((v) => v.hostPath),
        false,
        `${name} has no hostPath`,
      );
      for (const c of spec.containers) assert.deepEqual(c.securityContext?.capabilities, { drop: ['ALL'] });
    }
  });

  test('applied for real, each ServiceAccount can do what its component needs and no more', (t) => {
    if (!cluster) return t.skip(skip);
    cluster.kubectl(['create', 'namespace', 'strait-system']);
    const r = cluster.kubectl(['apply', '-k', deployDir]);
    assert.equal(r.status, 0, r.stderr);
    const sa = (n: string): string => `system:serviceaccount:strait-system:strait-${n}`;
    const table: [who: string, verb: string, resource: string, ns: string | undefined, want: 'yes' | 'no'][] = [
      ['node-agent', 'watch', 'endpoints.submariner.io', undefined, 'yes'],
      ['node-agent', 'list', 'pods', undefined, 'yes'],
      ['node-agent', 'watch', 'peerauthentications.security.istio.io', undefined, 'yes'],
      ['node-agent', 'create', 'endpoints.submariner.io', 'strait-system', 'no'],
      ['node-agent', 'get', 'secrets', 'strait-system', 'no'],
      ['node-agent', 'delete', 'pods', 'default', 'no'],
      // the records: in Submariner's operator namespace, where its tools read them, and nowhere else
      ['gateway', 'create', 'endpoints.submariner.io', 'submariner-operator', 'yes'],
      ['gateway', 'update', 'gateways.submariner.io', 'submariner-operator', 'yes'],
      ['gateway', 'update', 'gateways.submariner.io/status', 'submariner-operator', 'yes'],
      ['gateway', 'create', 'endpoints.submariner.io', 'strait-system', 'no'],
      ['gateway', 'create', 'endpoints.submariner.io', 'default', 'no'],
      ['gateway', 'update', 'submariners.submariner.io/submariner/status', 'submariner-operator', 'yes'],
      ['gateway', 'update', 'submariners.submariner.io/other/status', 'submariner-operator', 'no'],
      ['gateway', 'update', 'submariners.submariner.io', 'submariner-operator', 'no'],
      ['gateway', 'get', 'secrets/strait-broker-connection', 'submariner-operator', 'yes'],
      ['gateway', 'get', 'secrets/submariner-ipsec-psk', 'submariner-operator', 'no'],
      ['gateway', 'list', 'serviceimports.multicluster.x-k8s.io', undefined, 'yes'],
      ['gateway', 'get', 'secrets/strait-psk', 'strait-system', 'yes'],
      ['gateway', 'get', 'secrets/other', 'strait-system', 'no'],
      ['gateway', 'list', 'secrets', 'strait-system', 'no'],
      ['gateway', 'update', 'applications.argoproj.io', 'default', 'no'],
      // gateway HA (docs/gateway-and-agent.md): its Lease only, in its namespace: create, get, update (resourceVersion-guarded PUT)
      ['gateway', 'create', 'leases.coordination.k8s.io', 'strait-system', 'yes'],
      ['gateway', 'get', 'leases.coordination.k8s.io/strait-gateway', 'strait-system', 'yes'],
      ['gateway', 'update', 'leases.coordination.k8s.io/strait-gateway', 'strait-system', 'yes'],
      ['gateway', 'patch', 'leases.coordination.k8s.io/strait-gateway', 'strait-system', 'no'],
      ['gateway', 'delete', 'leases.coordination.k8s.io/strait-gateway', 'strait-system', 'no'],
      ['gateway', 'get', 'leases.coordination.k8s.io/other', 'strait-system', 'no'],
      ['gateway', 'update', 'leases.coordination.k8s.io/strait-gateway', 'default', 'no'],
      ['gateway', 'create', 'leases.coordination.k8s.io', 'default', 'no'],
      ['control', 'update', 'applications.argoproj.io/status', 'default', 'yes'],
      ['control', 'update', 'applications.argoproj.io', 'default', 'no'],
      ['control', 'update', 'serviceexports.multicluster.x-k8s.io/status', 'default', 'yes'],
      ['control', 'create', 'serviceimports.multicluster.x-k8s.io', 'default', 'yes'],
      ['control', 'create', 'configmaps', 'strait-system', 'yes'],
      // the mesh root goes to every member namespace (as istiod's); only that ConfigMap may change
      ['control', 'create', 'configmaps', 'default', 'yes'],
      ['control', 'patch', 'configmaps/istio-ca-root-cert', 'default', 'yes'],
      ['control', 'patch', 'configmaps/other', 'default', 'no'],
      ['control', 'get', 'configmaps/other', 'default', 'no'],
      ['control', 'delete', 'configmaps/istio-ca-root-cert', 'default', 'no'],
      ['control', 'get', 'secrets', 'kube-system', 'no'],
      ['control', 'patch', 'mutatingwebhookconfigurations/strait-sidecar-injector', undefined, 'yes'],
      ['control', 'patch', 'mutatingwebhookconfigurations/other', undefined, 'no'],
      ['control', 'create', 'clusterrolebindings', undefined, 'no'],
      ['control', 'watch', 'deployments.apps', undefined, 'yes'],
      ['control', 'create', 'deployments.apps', 'default', 'no'],
      ['control', 'get', 'secrets/strait-broker-connection', 'submariner-operator', 'no'],
      // the mesh configuration service checks the proxies' tokens (audience strait)
      ['control', 'create', 'tokenreviews.authentication.k8s.io', undefined, 'yes'],
      ['control', 'create', 'tokenrequests.authentication.k8s.io', undefined, 'no'],
      // observed traffic (the proxies' reports through the mesh configuration service)
      ['control', 'patch', 'meshtrafficobservations.mesh.strait.dev', 'default', 'yes'],
      ['control', 'update', 'meshtrafficobservations.mesh.strait.dev/status', 'default', 'yes'],
      ['control', 'delete', 'meshtrafficobservations.mesh.strait.dev', 'default', 'yes'],
      ['node-agent', 'patch', 'meshtrafficobservations.mesh.strait.dev', 'default', 'no'],
      ['githost', 'list', 'configmaps', 'strait-system', 'no'],
      ['githost', 'get', 'pods', 'strait-system', 'no'],
      // the mesh ingress gateway: its ServiceAccount is an identity only
      ['mesh-ingress', 'get', 'configmaps/strait-mesh-ca', 'strait-system', 'no'],
      ['mesh-ingress', 'create', 'tokenreviews.authentication.k8s.io', undefined, 'no'],
      ['mesh-ingress', 'list', 'pods', 'strait-system', 'no'],
    ];
    const wrong: string[] = [];
    for (const [who, verb, resource, ns, want] of table) {
      // "x/status" is the status subresource; "x/name" a named object
      const sub = resource.endsWith('/status') ? ['--subresource', 'status'] : [];
      const res = sub.length > 0 ? resource.slice(0, -'/status'.length) : resource;
      const args = ['auth', 'can-i', verb, res, ...sub, '--as', sa(who), ...(ns ? ['-n', ns] : [])];
      const got = cluster.kubectl(args).stdout.trim();
      if (got !== want) wrong.push(`${who} ${verb} ${resource}${ns ? ` -n ${ns}` : ''}: want ${want}, got ${JSON.stringify(got)}`);
    }
    assert.deepEqual(wrong, []);
  });

  test('a pod created with sidecar.istio.io/inject: "true" is stored with the sidecar the webhook added', { timeout: 120_000 }, async (t) => {
    if (!cluster) return t.skip(skip);
    const tls = makeServingCert(cluster.dir, 'webhook', 'IP:127.0.0.1');
    const seen: string[] = [];
    const inj = await serveSidecarInjector({
      cert: readFileSync(tls.certPath),
      key: readFileSync(tls.keyPath),
      image: 'strait:0.1.0',
      onReview: (o) => seen.push(o),
    });
    t.after(() => inj.close());
    // deploy/sidecar-injector.yaml, pointed at this process instead of the strait-control Service
    const hook = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'strait-sidecar-injector-test' },
      webhooks: [
        {
          name: 'sidecar-injector.strait.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { url: `https://127.0.0.1:${inj.port}/inject`, caBundle: Buffer.from(tls.caPem).toString('base64') },
          objectSelector: { matchLabels: { 'sidecar.istio.io/inject': 'true' } },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }],
        },
      ],
    };
    const h = await cluster.kubectlAsync(['apply', '-f', '-'], JSON.stringify(hook));
    assert.equal(h.status, 0, h.stderr);
    const podYaml = (name: string, labels: Record<string, string>): string =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default', labels },
        spec: { containers: [{ name: 'web', image: 'nginx' }] },
      });
    // the webhook configuration takes effect within a second or two
    let created = { status: 1, stdout: '', stderr: '' };
    for (let i = 0; i < 40; i++) {
      created = await cluster.kubectlAsync(['create', '-f', '-', '-o', 'json'], podYaml(`injected-${i}`, { app: 'web', 'sidecar.istio.io/inject': 'true' }));
      assert.equal(created.status, 0, created.stderr);
      const names = (JSON.parse(created.stdout) as { spec: { containers: { name: string }[] } }).spec.containers.map((c) => c.name);
      if (names.includes('strait-proxy')) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const name = (JSON.parse(created.stdout) as { metadata: { name: string } }).metadata.name;
    // read back what the API server stored
    const got = JSON.parse((await cluster.kubectlAsync(['get', 'pod', name, '-n', 'default', '-o', 'json'])).stdout) as {
      metadata: { annotations?: Record<string, string> };
      spec: { containers: { name: string; image: string }[]; initContainers?: { name: string }[] };
    };
    assert.deepEqual(
      got.spec.containers.map((c) => c.name),
      ['web', 'strait-proxy'],
    );
    assert.deepEqual(
      got.spec.initContainers?.map((c) => c.name),
      ['strait-init'],
    );
    assert.equal(got.spec.containers[1]?.image, 'strait:0.1.0');
    assert.ok(got.metadata.annotations?.['sidecar.istio.io/status']);
    assert.ok(seen.includes('injected'));
    // a pod that does not ask keeps its containers
    const plain = await cluster.kubectlAsync(['create', '-f', '-', '-o', 'json'], podYaml('plain', { app: 'web' }));
    assert.equal(plain.status, 0, plain.stderr);
    assert.deepEqual(
      (JSON.parse(plain.stdout) as { spec: { containers: { name: string }[] } }).spec.containers.map((c) => c.name),
      ['web'],
    );
  });
});
