// The mesh root kept in the store (Kubernetes mode): Secret <name> in the control module's
// namespace (ca.crt, ca.key, trustDomain), made on first start and loaded afterwards, so
// that a restarted or rescheduled control module keeps the same root. The public root also
// goes to ConfigMap <name> (ca.crt) there, which the node agents may read.
import type { ResourceStore } from '../../../platform/store/index.js';
import { MeshCa } from './mesh-ca.js';

export const MESH_CA_NAME = 'strait-mesh-ca';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: unknown): string => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

export async function loadOrCreateCaInStore(store: ResourceStore, namespace: string, name = MESH_CA_NAME, trustDomain = 'cluster.local'): Promise<MeshCa> {
  const secret = { apiVersion: 'v1', kind: 'Secret' };
  const have = await store.get(secret, name, namespace);
  const data = (have?.['data'] ?? {}) as Record<string, string>;
  let ca: MeshCa;
  if (data['ca.crt'] && data['ca.key']) {
    ca = MeshCa.load(unb64(data['trustDomain']) || trustDomain, { certPem: unb64(data['ca.crt']), keyPem: unb64(data['ca.key']) });
  } else {
    ca = MeshCa.create({ trustDomain });
    const m = ca.material();
    await store.apply(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace },
        type: 'Opaque',
        data: { 'ca.crt': b64(m.certPem), 'ca.key': b64(m.keyPem), trustDomain: b64(trustDomain) },
      },
      { fieldManager: 'strait-mesh-ca' },
    );
  }
  const cm = await store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, name, namespace);
  if ((cm?.['data'] as Record<string, string> | undefined)?.['ca.crt'] !== ca.rootPem) {
    await store.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { 'ca.crt': ca.rootPem } },
      { fieldManager: 'strait-mesh-ca' },
    );
  }
  return ca;
}
