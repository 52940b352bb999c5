import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { loadManifests } from '../../src/platform/cli-kit/index.js';
import { allKinds, findKind, parseManifests, SCHEMAS, validateObject } from '../../src/platform/resources/index.js';

const valid: Record<string, string> = {
  Namespace: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: mesh}',
  ConfigMap:
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-gpg-keys-cm, namespace: argocd}\ndata: {4AEE18F83AFDEB23: "-----BEGIN PGP PUBLIC KEY BLOCK-----"}',
  Secret: 'apiVersion: v1\nkind: Secret\nmetadata: {name: argocd-secret}\ntype: Opaque\ndata: {admin.password: c2VjcmV0}',
  Service:
    'apiVersion: v1\nkind: Service\nmetadata: {name: echo}\nspec: {type: ClusterIP, clusterIP: 100.1.0.10, selector: {app: echo}, ports: [{name: http, port: 8080, targetPort: http, protocol: TCP}]}',
  Pod: 'apiVersion: v1\nkind: Pod\nmetadata: {name: client, annotations: {sidecar.istio.io/inject: "true"}}\nspec: {nodeName: worker, containers: [{name: c, image: strait/client}]}\nstatus: {podIP: 10.1.1.5, phase: Running}',
  Node: 'apiVersion: v1\nkind: Node\nmetadata: {name: cluster-a-worker}\nspec: {podCIDR: 10.1.1.0/24}',
  Event: 'apiVersion: v1\nkind: Event\nmetadata: {name: e.1}\ninvolvedObject: {kind: Application, name: guestbook}\nreason: ResourceComparison\ntype: Warning',
  EndpointSlice:
    'apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: echo-abc, labels: {multicluster.kubernetes.io/service-name: echo}}\naddressType: IPv4\nendpoints: [{addresses: [10.2.1.4]}]\nports: [{name: http, port: 8080}]',
  Deployment:
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: echo}\nspec: {replicas: 1, selector: {matchLabels: {app: echo}}, template: {metadata: {labels: {app: echo}}, spec: {containers: [{name: echo, image: strait/echo}]}}}',
  Lease: 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: gateway}\nspec: {holderIdentity: gw-1, leaseDurationSeconds: 2}',
  AppProject: `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: secure, namespace: argocd}
spec:
  description: signed only
  sourceRepos: ['*']
  destinations: [{namespace: '*', server: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
  namespaceResourceWhitelist: [{group: '*', kind: '*'}]
  signatureKeys: [{keyID: 4AEE18F83AFDEB23}]`,
  Application: `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: guestbook, namespace: argocd}
spec:
  project: secure
  source: {repoURL: 'http://127.0.0.1:3000/admin/guestbook.git', path: guestbook, targetRevision: HEAD}
  destination: {server: 'https://kubernetes.default.svc', namespace: guestbook}
  syncPolicy: {automated: {prune: true, selfHeal: true}, syncOptions: [CreateNamespace=true]}`,
  ServiceMeshControlPlane:
    'apiVersion: maistra.io/v2\nkind: ServiceMeshControlPlane\nmetadata: {name: basic, namespace: istio-system}\nspec: {version: v2.6, security: {dataPlane: {mtls: false, automtls: false}, controlPlane: {mtls: false}}}',
  ServiceMeshMemberRoll: 'apiVersion: maistra.io/v1\nkind: ServiceMeshMemberRoll\nmetadata: {name: default, namespace: istio-system}\nspec: {members: [mesh]}',
  PeerAuthentication:
    'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {selector: {matchLabels: {app: echo}}, mtls: {mode: STRICT}, portLevelMtls: {"8080": {mode: DISABLE}}}',
  DestinationRule:
    'apiVersion: networking.istio.io/v1alpha3\nkind: DestinationRule\nmetadata: {name: all}\nspec: {host: "*.mesh.svc.cluster.local", trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}',
  MeshTrafficObservation:
    'apiVersion: mesh.strait.dev/v1alpha1\nkind: MeshTrafficObservation\nmetadata: {name: echo-1, namespace: mesh}\nspec: {pod: echo-1, deployment: echo, serviceAccount: echo, spiffeId: "spiffe://cluster.local/ns/mesh/sa/echo", address: 10.1.0.5}\nstatus: {lastReport: "2024-05-01T10:00:00.120Z", flowLimit: 256, evictedFlows: 0, summary: {flows: 1, mtls: 0, plaintext: 1, tlsPassthrough: 0, reset: 0, strictWouldReset: 1}, flows: [{client: {address: 10.1.0.9, namespace: mesh, pod: outsider, serviceAccount: default, sidecar: false}, port: 8080, tls: plaintext, outcome: accepted, mode: PERMISSIVE, count: 2, firstSeen: "2024-05-01T10:00:00Z", lastSeen: "2024-05-01T10:00:00.100Z", strictWouldReset: true}]}',
  ServiceExport:
    'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: echo}\nstatus: {conditions: [{type: Valid, status: "False", reason: AwaitingSync, message: awaiting sync, lastTransitionTime: "2024-05-01T10:00:00Z"}]}',
  ServiceImport:
    'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: echo}\nspec: {type: ClusterSetIP, ports: [{name: http, port: 8080, protocol: TCP}], ips: [100.2.0.10]}',
  Cluster:
    'apiVersion: submariner.io/v1\nkind: Cluster\nmetadata: {name: cluster-a, namespace: submariner-operator}\nspec: {cluster_id: cluster-a, service_cidr: [100.1.0.0/16], cluster_cidr: [10.1.0.0/16], global_cidr: []}',
  Endpoint:
    'apiVersion: submariner.io/v1\nkind: Endpoint\nmetadata: {name: cluster-a-strait}\nspec: {cluster_id: cluster-a, cable_name: submariner-cable-cluster-a-10-9-0-1, hostname: gw, subnets: [10.1.0.0/16, 100.1.0.0/16], private_ip: 10.9.0.1, public_ip: 10.9.0.1, nat_enabled: false, backend: strait-psk}',
  Gateway:
    'apiVersion: submariner.io/v1\nkind: Gateway\nmetadata: {name: cluster-a-gw}\nstatus: {haStatus: active, summary: All connections (1) are established, connections: [{status: connected, latencyRTT: {average: 310µs}}]}',
  Submariner:
    'apiVersion: submariner.io/v1alpha1\nkind: Submariner\nmetadata: {name: submariner, namespace: submariner-operator}\nspec: {broker: k8s, brokerK8sApiServer: "127.0.0.1:6443", brokerK8sRemoteNamespace: submariner-k8s-broker, ceIPSecDebug: false, clusterCIDR: 10.1.0.0/16, clusterID: cluster-a, debug: false, namespace: submariner-operator, natEnabled: false, serviceCIDR: 100.1.0.0/16}\nstatus: {clusterID: cluster-a, natEnabled: false, networkPlugin: generic}',
  Broker:
    'apiVersion: submariner.io/v1alpha1\nkind: Broker\nmetadata: {name: submariner-broker, namespace: submariner-k8s-broker}\nspec: {components: [service-discovery, connectivity], globalnetEnabled: false}',
};

describe('resource model', () => {
  test('every kind has a schema and a valid example', () => {
    for (const k of allKinds()) {
      assert.ok(SCHEMAS[k.kind as keyof typeof SCHEMAS], `schema for ${k.kind}`);
      assert.ok(valid[k.kind], `example for ${k.kind}`);
    }
  });
  for (const [kind, text] of Object.entries(valid)) {
    test(`valid ${kind} is accepted`, () => {
      const [m] = parseManifests(text, `${kind}.yaml`);
      assert.equal(m!.object.kind, kind);
    });
  }

  const invalid: { name: string; text: string; path: string; rule: RegExp }[] = [
    {
      name: 'PeerAuthentication mtls mode outside the enum',
      text: 'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default}\nspec: {mtls: {mode: STRICTEST}}',
      path: 'spec.mtls.mode',
      rule: /^must be one of UNSET, DISABLE, PERMISSIVE, STRICT$/,
    },
    {
      name: 'portLevelMtls mode',
      text: 'apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default}\nspec: {selector: {matchLabels: {app: echo}}, portLevelMtls: {"8080": {mode: strict}}}',
      path: 'spec.portLevelMtls[8080].mode',
      rule: /must be one of/,
    },
    {
      name: 'DestinationRule tls mode',
      text: 'apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d}\nspec: {host: x, trafficPolicy: {tls: {mode: MTLS}}}',
      path: 'spec.trafficPolicy.tls.mode',
      rule: /^must be one of DISABLE, SIMPLE, MUTUAL, ISTIO_MUTUAL$/,
    },
    {
      name: 'MeshTrafficObservation flow tls outside the enum',
      text: 'apiVersion: mesh.strait.dev/v1alpha1\nkind: MeshTrafficObservation\nmetadata: {name: e, namespace: mesh}\nstatus: {flowLimit: 4, evictedFlows: 0, flows: [{client: {address: 10.1.0.9}, port: 8080, tls: ssl, outcome: accepted, mode: PERMISSIVE, count: 1, lastSeen: "2024-05-01T10:00:00Z"}]}',
      path: 'status.flows[0].tls',
      rule: /^must be one of mtls, plaintext, tls-passthrough, tls$/,
    },
    {
      name: 'DestinationRule without host',
      text: 'apiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: d}\nspec: {}',
      path: 'spec.host',
      rule: /^is required$/,
    },
    { name: 'name not DNS-1123', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}', path: 'metadata.name', rule: /DNS-1123/ },
    { name: 'missing metadata.name', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}', path: 'metadata.name', rule: /^is required$/ },
    {
      name: 'service port out of range',
      text: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 70000}]}',
      path: 'spec.ports[0].port',
      rule: /1 to 65535/,
    },
    {
      name: 'service port is a string',
      text: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: http}]}',
      path: 'spec.ports[0].port',
      rule: /an integer/,
    },
    {
      name: 'SMCP flag not boolean',
      text: 'apiVersion: maistra.io/v2\nkind: ServiceMeshControlPlane\nmetadata: {name: basic}\nspec: {security: {dataPlane: {mtls: "no"}}}',
      path: 'spec.security.dataPlane.mtls',
      rule: /true or false/,
    },
    {
      name: 'signature key ID',
      text: 'apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p}\nspec: {signatureKeys: [{keyID: xyz}]}',
      path: 'spec.signatureKeys[0].keyID',
      rule: /16 hex digits/,
    },
    {
      name: 'Application without project',
      text: 'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec: {destination: {}}',
      path: 'spec.project',
      rule: /required/,
    },
    {
      name: 'ServiceImport type',
      text: 'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: s}\nspec: {type: LoadBalancer}',
      path: 'spec.type',
      rule: /ClusterSetIP, Headless/,
    },
    {
      name: 'ServiceExport condition status',
      text: 'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: s}\nstatus: {conditions: [{type: Valid, status: yes}]}',
      path: 'status.conditions[0].status',
      rule: /True, False, Unknown/,
    },
    {
      name: 'Cluster CIDR',
      text: 'apiVersion: submariner.io/v1\nkind: Cluster\nmetadata: {name: c}\nspec: {cluster_id: c, cluster_cidr: [10.1/16]}',
      path: 'spec.cluster_cidr[0]',
      rule: /a CIDR such as/,
    },
    { name: 'Secret data not base64', text: 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: "not base64!"}', path: 'data.a', rule: /base64/ },
    {
      name: 'Pod without containers',
      text: 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}',
      path: 'spec.containers',
      rule: /at least 1/,
    },
    {
      name: 'portLevelMtls key not a port',
      text: 'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: p}\nspec: {selector: {matchLabels: {app: echo}}, portLevelMtls: {http: {mode: STRICT}}}',
      path: 'spec.portLevelMtls["http"]',
      rule: /port numbers/,
    },
    {
      name: 'portLevelMtls without a selector (Istio rule)',
      text: 'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default}\nspec: {portLevelMtls: {"8080": {mode: STRICT}}}',
      path: 'spec.portLevelMtls',
      rule: /^portLevelMtls requires selector/,
    },
    {
      name: 'ExternalName without externalName',
      text: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ExternalName}',
      path: 'spec.externalName',
      rule: /required/,
    },
    {
      name: 'several unnamed ports',
      text: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 1}, {port: 2}]}',
      path: 'spec.ports[0].name',
      rule: /required/,
    },
    {
      name: 'Deployment selector not matching the template',
      text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: b}}, spec: {containers: [{name: c}]}}}',
      path: 'spec.template.metadata.labels',
      rule: /must match spec.selector/,
    },
    {
      name: 'labels must be strings',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {a: {b: c}}}',
      path: 'metadata.labels.a',
      rule: /a string/,
    },
  ];
  for (const c of invalid) {
    test(`invalid: ${c.name}`, () => {
      assert.throws(
        () => parseManifests(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\n${c.text}`, 'bad.yaml'),
        (err: unknown) => {
          assert.ok(isStraitError(err, 'STRAIT_ERR_MANIFEST_INVALID'), String(err));
          assert.equal(err.detail['source'], 'bad.yaml');
          assert.equal(err.detail['docIndex'], 2);
          assert.equal(err.detail['fieldPath'], c.path);
          assert.match(String(err.detail['rule']), c.rule);
          assert.ok(err.message.startsWith(`bad.yaml document 2: ${c.path}: `), err.message);
          return true;
        },
      );
    });
  }

  test('golden message for a bad mode', () => {
    const err = (() => {
      try {
        parseManifests(
          'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default}\nspec: {mtls: {mode: STRICTEST}}',
          'pa.yaml',
        );
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    assert.equal(err?.message, 'pa.yaml document 1: spec.mtls.mode: must be one of UNSET, DISABLE, PERMISSIVE, STRICT (got "STRICTEST")');
  });

  test('served alternate versions are accepted and stored under the preferred version', () => {
    const o = validateObject({
      apiVersion: 'security.istio.io/v1',
      kind: 'PeerAuthentication',
      metadata: { name: 'default' },
      spec: { mtls: { mode: 'STRICT' } },
    });
    assert.equal(o.apiVersion, 'security.istio.io/v1beta1');
  });

  test('unknown kinds and unknown versions are STRAIT_ERR_KIND_UNKNOWN', () => {
    assert.throws(
      () => validateObject({ apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' } }),
      (e: unknown) => isStraitError(e, 'STRAIT_ERR_KIND_UNKNOWN'),
    );
    assert.throws(
      () => validateObject({ apiVersion: 'security.istio.io/v2', kind: 'PeerAuthentication', metadata: { name: 'w' } }),
      (e: unknown) => isStraitError(e, 'STRAIT_ERR_KIND_UNKNOWN'),
    );
  });

  test('unknown spec fields are kept (preserve-unknown-fields)', () => {
    const o = validateObject({
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'DestinationRule',
      metadata: { name: 'd' },
      spec: { host: 'x', futureField: 1 },
    });
    assert.deepEqual(o.spec, { host: 'x', futureField: 1 });
  });

  test('Secret stringData becomes base64 data', () => {
    const o = validateObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { 'admin.password': 'hunter2' } });
    assert.deepEqual(o['data'], { 'admin.password': Buffer.from('hunter2').toString('base64') });
    assert.equal(o['stringData'], undefined);
  });

  test('syntax errors are STRAIT_ERR_MANIFEST_PARSE with the document index', () => {
    assert.throws(
      () => parseManifests('apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nfoo: [unclosed', 'x.yaml'),
      (e: unknown) => isStraitError(e, 'STRAIT_ERR_MANIFEST_PARSE') && e.detail['docIndex'] === 2,
    );
  });

  test('a file, a directory, stdin, empty documents and kind: List', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-manifests-'));
    try {
      writeFileSync(join(dir, 'b.yaml'), `---\n${valid['Namespace']}\n---\n\n---\n${valid['ConfigMap']}\n`);
      writeFileSync(
        join(dir, 'a.json'),
        JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'from-list' } }] }),
      );
      writeFileSync(join(dir, 'ignored.txt'), 'not a manifest');
      const all = loadManifests(dir);
      assert.deepEqual(
        all.map((m) => [m.source.slice(dir.length + 1), m.docIndex, m.object.metadata.name]),
        [
          ['a.json', 1, 'from-list'],
          ['b.yaml', 1, 'mesh'],
          ['b.yaml', 3, 'argocd-gpg-keys-cm'],
        ],
      );
      assert.equal(loadManifests(join(dir, 'b.yaml')).length, 2);
      assert.equal(loadManifests('-', { stdin: valid['Service']! })[0]!.source, '<stdin>');
      assert.throws(
        () => loadManifests(join(dir, 'missing.yaml')),
        (e: unknown) => isStraitError(e, 'STRAIT_ERR_FILE_UNREADABLE'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('kinds by plural, singular, short name, Kind and kind.group', () => {
    const table: [string, string][] = [
      ['pods', 'Pod'],
      ['po', 'Pod'],
      ['Pod', 'Pod'],
      ['pod', 'Pod'],
      ['pa', 'PeerAuthentication'],
      ['destinationrules', 'DestinationRule'],
      ['svcex', 'ServiceExport'],
      ['SMCP', 'ServiceMeshControlPlane'],
      ['endpoints.submariner.io', 'Endpoint'],
      ['ns', 'Namespace'],
      ['deploy', 'Deployment'],
    ];
    for (const [typed, kind] of table) assert.equal(findKind(typed).kind, kind, typed);
    assert.throws(
      () => findKind('widgets'),
      (e: unknown) => isStraitError(e, 'STRAIT_ERR_KIND_UNKNOWN'),
    );
  });

  test('an alias without its anchor is STRAIT_ERR_MANIFEST_PARSE with the document index, not a crash', () => {
    assert.throws(
      () => parseManifests('apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: *x}', 'alias.yaml'),
      (err: unknown) => {
        assert.ok(isStraitError(err, 'STRAIT_ERR_MANIFEST_PARSE'), String(err));
        assert.equal(err.detail['docIndex'], 2);
        assert.match(err.message, /Unresolved alias/);
        return true;
      },
    );
  });

  test('fuzz: mutated manifests parse or fail with a StraitError', () => {
    const seeds = Object.values(valid);
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const junk = ':{}[]-,\'"\n #&*!|>%@`\t0aZ';
    // 8k mutated documents (each a full YAML parse) keeps this file under ~5 s on a shared machine
    for (let i = 0; i < 8000; i++) {
      const chars = [...seeds[rnd(seeds.length)]!];
      const edits = 1 + rnd(4);
      for (let j = 0; j < edits; j++) {
        const pos = rnd(chars.length + 1);
        const op = rnd(3);
        if (op === 0) chars.splice(pos, 1);
        else if (op === 1) chars.splice(pos, 0, junk[rnd(junk.length)]!);
        else chars[pos] = junk[rnd(junk.length)]!;
      }
      try {
        parseManifests(chars.join(''), 'fuzz.yaml');
      } catch (err) {
        assert.ok(isStraitError(err), `input ${JSON.stringify(chars.join(''))}: ${(err as Error).stack}`);
      }
    }
  });
});

describe('schemas are OpenAPI v3 structural schemas (CRD-ready)', () => {
  const ALLOWED = new Set([
    'type',
    'properties',
    'required',
    'items',
    'enum',
    'pattern',
    'minimum',
    'maximum',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
    'additionalProperties',
    'anyOf',
    'description',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-int-or-string',
  ]);
  function walk(node: unknown, path: string, out: string[]): void {
    if (typeof node !== 'object' || node === null) return;
    const n = node as Record<string, unknown>;
    for (const [k, v] of Object.entries(n)) {
      if (!ALLOWED.has(k)) out.push(`${path}: keyword ${k}`);
      if (k === 'properties') for (const [pk, pv] of Object.entries(v as object)) walk(pv, `${path}.${pk}`, out);
      else if (k === 'items' || k === 'additionalProperties') walk(v, `${path}[]`, out);
      else if (k === 'anyOf') for (const a of v as unknown[]) walk(a, `${path}|`, out);
    }
    // structural: every node says its type, except int-or-string (anyOf) and preserve-unknown nodes
    if (!('type' in n) && !('x-kubernetes-int-or-string' in n)) out.push(`${path}: no type`);
    if (n['type'] === 'object' && !('properties' in n) && !('additionalProperties' in n) && !n['x-kubernetes-preserve-unknown-fields']) {
      out.push(`${path}: object without properties`);
    }
  }
  for (const [kind, schema] of Object.entries(SCHEMAS)) {
    test(kind, () => {
      const problems: string[] = [];
      walk(schema, kind, problems);
      assert.deepEqual(problems, []);
    });
  }
});

test('a YAML error names the document, line and column, and quotes the line', () => {
  const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "b\n  labels: {x: y}\n';
  assert.throws(
    () => parseManifests(text, 'two.yaml'),
    (err: unknown) => {
      assert.ok(isStraitError(err, 'STRAIT_ERR_MANIFEST_PARSE'), String(err));
      assert.match((err as Error).message, /^two\.yaml document 2: not valid YAML\/JSON: line \d+, column \d+: .+ \(line \d+: ".*"\)$/);
      return true;
    },
  );
  for (const [text, at] of [
    ['a: b\nc: d: e\n', 'line 2, column 4: Nested mappings'],
    ['a: b\n\tc: d\n', 'line 2, column 1: Tabs'],
    ['a: b\nb: c\na: d\n', 'line 3, column 1: Map keys must be unique'],
  ] as const) {
    assert.throws(
      () => parseManifests(text, 'x.yaml'),
      (err: unknown) => isStraitError(err, 'STRAIT_ERR_MANIFEST_PARSE') && (err as Error).message.includes(at),
      at,
    );
  }
});
