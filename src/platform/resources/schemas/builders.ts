// Small builders for OpenAPI-v3 structural schemas (the subset Kubernetes CRDs accept:
// type, properties, required, items, enum, pattern, minimum/maximum, additionalProperties,
// anyOf with x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields). No $ref,
// so a CRD's openAPIV3Schema can be generated from these objects as they are.
export type Schema = Record<string, unknown>;

export const DNS1123_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const DNS1123_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const IPV4 = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}';

export const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
export const bool: Schema = { type: 'boolean' };
export const int = (minimum?: number, maximum?: number): Schema => ({
  type: 'integer',
  ...(minimum === undefined ? {} : { minimum }),
  ...(maximum === undefined ? {} : { maximum }),
});
export const arr = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
export const enumOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
/** a string map, as labels and ConfigMap data */
export const map = (values: Schema = { type: 'string' }): Schema => ({ type: 'object', additionalProperties: values });
/** an object with known properties; unknown ones are kept, as Kubernetes does with preserve-unknown-fields */
export const obj = (properties: Record<string, Schema>, required: string[] = [], preserve = true): Schema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  ...(preserve ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
});
export const anyObject: Schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
export const intOrString: Schema = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
export const port: Schema = { ...int(1, 65535), description: 'a port number from 1 to 65535' };
export const timestamp: Schema = str({
  pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)$',
  description: 'an RFC 3339 timestamp such as 2024-01-02T03:04:05Z',
});
export const ipv4: Schema = str({ pattern: `^${IPV4}$`, description: 'an IPv4 address such as 10.1.0.5' });
export const ipv4Cidr: Schema = str({ pattern: `^${IPV4}/(3[0-2]|[12]?[0-9])$`, description: 'an IPv4 CIDR such as 10.1.0.0/16' });
export const protocol: Schema = enumOf('TCP', 'UDP', 'SCTP');

export const labelSelector: Schema = obj({
  matchLabels: map(),
  matchExpressions: arr(obj({ key: str(), operator: enumOf('In', 'NotIn', 'Exists', 'DoesNotExist'), values: arr(str()) }, ['key', 'operator'])),
});

/** metav1.Condition, as ServiceExport and most controllers use it */
export const condition: Schema = obj(
  {
    type: str(),
    status: enumOf('True', 'False', 'Unknown'),
    reason: str(),
    message: str(),
    lastTransitionTime: timestamp,
    observedGeneration: int(0),
  },
  ['type', 'status'],
);

export function metadata(nameRule: 'subdomain' | 'label'): Schema {
  const name =
    nameRule === 'label'
      ? str({
          pattern: DNS1123_LABEL,
          maxLength: 63,
          description: "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)",
        })
      : str({
          pattern: DNS1123_SUBDOMAIN,
          maxLength: 253,
          description: "a DNS-1123 name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)",
        });
  return obj(
    {
      name,
      generateName: str(),
      namespace: str({ pattern: DNS1123_LABEL, maxLength: 63, description: "a DNS-1123 label (lowercase letters, digits and '-', at most 63 characters)" }),
      labels: map(),
      annotations: map(),
      uid: str(),
      resourceVersion: str(),
      generation: int(0),
      creationTimestamp: timestamp,
      deletionTimestamp: timestamp,
      ownerReferences: arr(obj({ apiVersion: str(), kind: str(), name: str(), uid: str(), controller: bool }, ['apiVersion', 'kind', 'name', 'uid'])),
      finalizers: arr(str()),
    },
    ['name'],
  );
}

/** A whole object: apiVersion, kind, metadata and the kind's own top-level fields. */
export function kindSchema(fields: Record<string, Schema>, opts: { required?: string[]; nameRule?: 'subdomain' | 'label' } = {}): Schema {
  return obj(
    {
      apiVersion: str(),
      kind: str(),
      metadata: metadata(opts.nameRule ?? 'subdomain'),
      ...fields,
    },
    ['apiVersion', 'kind', 'metadata', ...(opts.required ?? [])],
  );
}
