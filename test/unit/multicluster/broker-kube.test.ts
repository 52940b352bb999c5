// The Kubernetes-broker path without an API server: which broker URLs open what, the
// kubeconfig handed to the store, and the Role a joined cluster gets (docs/kubernetes.md). The real
// API server runs in test/integration/control-kubernetes.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import { isStraitError } from '../../../src/base/errors/index.js';
import { brokerClientRules, brokerKubeconfig, BROKER_CLIENT, openBrokerByUrl } from '../../../src/multicluster/control/clusterset/index.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test('broker URLs: https:// needs the CA; unknown schemes are refused with the accepted ones named', () => {
  const table: [string, string | undefined, RegExp][] = [
    ['https://127.0.0.1:6443', undefined, /needs the API server CA/],
    ['https://127.0.0.1:6443', 'not a pem', /needs the API server CA/],
    ['http://127.0.0.1:6443', CA, /unix:\/\/.*file:\/\/.*https:\/\//],
    ['ftp://x', CA, /must be unix/],
  ];
  for (const [url, ca, want] of table) {
    assert.throws(
      () => openBrokerByUrl(url, 'token-0123456789abcdef', ca),
      (e: unknown) => isStraitError(e) && e.code === 'STRAIT_ERR_MC_BROKER_URL' && want.test(e.message),
      url,
    );
  }
});

test('an https:// broker is a Kubernetes store on that server: a refused connection names it', async () => {
  const s = openBrokerByUrl('https://127.0.0.1:1', 'token-0123456789abcdef', CA);
  try {
    await assert.rejects(
      s.get({ apiVersion: 'v1', kind: 'Namespace' }, 'submariner-k8s-broker'),
      (e: unknown) => isStraitError(e) && e.code === 'STRAIT_ERR_STORE_UNAVAILABLE' && e.message.includes('https://127.0.0.1:1'),
    );
  } finally {
    await s.close();
  }
});

test('the broker kubeconfig: the server, its CA, the token, the broker namespace', () => {
  const kc = parse(brokerKubeconfig('https://10.0.0.1:6443', CA, 'tok')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { name: string; user: { token: string } }[];
    contexts: { context: { namespace: string } }[];
    'current-context': string;
  };
  assert.equal(kc.clusters[0]?.cluster.server, 'https://10.0.0.1:6443');
  assert.equal(Buffer.from(kc.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(), CA);
  assert.deepEqual(kc.users[0], { name: BROKER_CLIENT, user: { token: 'tok' } });
  assert.equal(kc.contexts[0]?.context.namespace, 'submariner-k8s-broker');
  assert.equal(kc['current-context'], 'broker');
});

test('joined clusters may read exactly two named objects among Secrets and ConfigMaps, and nothing cluster-wide', () => {
  const rules = brokerClientRules() as { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
  const core = rules.filter((r) => r.apiGroups.includes(''));
  assert.deepEqual(
    core.map((r) => [r.resources, r.resourceNames, r.verbs]),
    [
      [['secrets'], ['strait-broker-fingerprints'], ['get']],
      [['configmaps'], ['strait-broker'], ['get']],
    ],
  );
  assert.equal(
    rules.some((r) => r.verbs.includes('*') || r.resources.includes('*')),
    false,
  );
});
