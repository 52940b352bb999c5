// The mesh of the default world (docs/mesh.md, In the local world): an SMCP with the three mTLS
// flags false in istio-system and a member roll.
import { Kinds } from '../../../platform/resources/index.js';
import type { KubeObject } from '../../../platform/store/index.js';

export function defaultMeshObjects(members: string[], controlPlaneNamespace = 'istio-system'): KubeObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: controlPlaneNamespace } },
    {
      apiVersion: Kinds.ServiceMeshControlPlane.apiVersion,
      kind: 'ServiceMeshControlPlane',
      metadata: { name: 'basic', namespace: controlPlaneNamespace },
      spec: { version: 'v2.6', security: { dataPlane: { mtls: false, automtls: false }, controlPlane: { mtls: false } } },
    },
    {
      apiVersion: Kinds.ServiceMeshMemberRoll.apiVersion,
      kind: 'ServiceMeshMemberRoll',
      metadata: { name: 'default', namespace: controlPlaneNamespace },
      spec: { members },
    },
  ];
}
