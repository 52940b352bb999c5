// Mesh policy objects as the resolvers may read them. Whatever the store holds is checked
// here once more, field by field, because policy must fail closed:
//   - a PeerAuthentication that does not parse is replaced by a STRICT one of the same
//     scope (its selector when that parses, else its whole namespace): an unreadable
//     policy can only make enforcement stricter, never weaker;
//   - a DestinationRule that does not parse is left out (traffic falls back to auto
//     mTLS, which never sends plaintext to a sidecar that requires mTLS);
// and each is reported (MeshView.invalid; the controller records a Warning Event).
import type { DestinationRule, MtlsMode, PeerAuthentication, TlsMode } from './types.js';

export interface InvalidPolicy {
  kind: string;
  namespace: string;
  name: string;
  reason: string;
  /** what the mesh does instead */
  action: string;
}

const MTLS: readonly string[] = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'];
const TLS: readonly string[] = ['DISABLE', 'SIMPLE', 'MUTUAL', 'ISTIO_MUTUAL'];

const rec = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const optRec = (v: unknown): boolean => v === undefined || rec(v) !== undefined;

function stringMap(v: unknown): Record<string, string> | undefined {
  const r = rec(v);
  if (!r) return undefined;
  for (const x of Object.values(r)) if (typeof x !== 'string') return undefined;
  return r as Record<string, string>;
}

function modeProblem(m: unknown, path: string): string | undefined {
  if (m === undefined) return undefined;
  const r = rec(m);
  if (!r) return `${path} must be an object`;
  if (r['mode'] !== undefined && (typeof r['mode'] !== 'string' || !MTLS.includes(r['mode'])))
    return `${path}.mode ${JSON.stringify(r['mode'])} is not one of ${MTLS.join(', ')}`;
  return undefined;
}

function peerAuthenticationProblem(pa: PeerAuthentication): string | undefined {
  const spec = pa.spec as unknown;
  if (spec === undefined) return undefined;
  const s = rec(spec);
  if (!s) return 'spec must be an object';
  if (!optRec(s['selector'])) return 'spec.selector must be an object';
  const ml = rec(s['selector'])?.['matchLabels'];
  if (ml !== undefined && !stringMap(ml)) return 'spec.selector.matchLabels must map strings to strings';
  const m = modeProblem(s['mtls'], 'spec.mtls');
  if (m) return m;
  if (s['portLevelMtls'] !== undefined) {
    const pl = rec(s['portLevelMtls']);
    if (!pl) return 'spec.portLevelMtls must be an object';
    for (const [k, v] of Object.entries(pl)) {
      if (!/^\d{1,5}$/.test(k) || Number(k) < 1 || Number(k) > 65535) return `spec.portLevelMtls key ${JSON.stringify(k)} is not a port from 1 to 65535`;
      const p = modeProblem(v, `spec.portLevelMtls[${k}]`);
      if (p) return p;
    }
  }
  return undefined;
}

/** The PeerAuthentication to resolve with: itself when it parses, else a STRICT stand-in of the same (or a wider) scope. */
export function readPeerAuthentication(pa: PeerAuthentication): { pa: PeerAuthentication; invalid?: InvalidPolicy } {
  const reason = peerAuthenticationProblem(pa);
  if (!reason) return { pa };
  const labels = stringMap(rec(rec(pa.spec)?.['selector'])?.['matchLabels']);
  const strict: PeerAuthentication = {
    apiVersion: pa.apiVersion,
    kind: pa.kind,
    metadata: pa.metadata,
    spec: { ...(labels && Object.keys(labels).length > 0 ? { selector: { matchLabels: labels } } : {}), mtls: { mode: 'STRICT' as MtlsMode } },
  };
  const scope = labels && Object.keys(labels).length > 0 ? 'the workloads it selects' : 'its whole namespace';
  return {
    pa: strict,
    invalid: {
      kind: 'PeerAuthentication',
      namespace: pa.metadata.namespace ?? '',
      name: pa.metadata.name,
      reason,
      action: `enforced as STRICT for ${scope} until it is fixed`,
    },
  };
}

function tlsProblem(t: unknown, path: string): string | undefined {
  if (t === undefined) return undefined;
  const r = rec(t);
  if (!r) return `${path} must be an object`;
  if (r['mode'] !== undefined && (typeof r['mode'] !== 'string' || !TLS.includes(r['mode'] as TlsMode)))
    return `${path}.mode ${JSON.stringify(r['mode'])} is not one of ${TLS.join(', ')}`;
  if (r['sni'] !== undefined && typeof r['sni'] !== 'string') return `${path}.sni must be a string`;
  if (r['subjectAltNames'] !== undefined && !(Array.isArray(r['subjectAltNames']) && r['subjectAltNames'].every((x) => typeof x === 'string')))
    return `${path}.subjectAltNames must be a list of strings`;
  return undefined;
}

function destinationRuleProblem(dr: DestinationRule): string | undefined {
  const s = rec(dr.spec);
  if (!s) return 'spec must be an object';
  if (typeof s['host'] !== 'string' || s['host'] === '') return `spec.host must be a non-empty string (got ${JSON.stringify(s['host'])})`;
  if (s['exportTo'] !== undefined && !(Array.isArray(s['exportTo']) && s['exportTo'].every((x) => typeof x === 'string')))
    return 'spec.exportTo must be a list of strings';
  const tp = s['trafficPolicy'];
  if (tp === undefined) return undefined;
  const t = rec(tp);
  if (!t) return 'spec.trafficPolicy must be an object';
  const top = tlsProblem(t['tls'], 'spec.trafficPolicy.tls');
  if (top) return top;
  if (t['portLevelSettings'] !== undefined) {
    if (!Array.isArray(t['portLevelSettings'])) return 'spec.trafficPolicy.portLevelSettings must be a list';
    for (const [i, x] of (t['portLevelSettings'] as unknown[]).entries()) {
      const pl = rec(x);
      if (!pl) return `spec.trafficPolicy.portLevelSettings[${i}] must be an object`;
      const n = rec(pl['port'])?.['number'];
      if (pl['port'] !== undefined && (!optRec(pl['port']) || (n !== undefined && !(Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535)))) {
        return `spec.trafficPolicy.portLevelSettings[${i}].port.number must be a port from 1 to 65535`;
      }
      const p = tlsProblem(pl['tls'], `spec.trafficPolicy.portLevelSettings[${i}].tls`);
      if (p) return p;
    }
  }
  return undefined;
}

/** The DestinationRule when it parses; undefined (left out) and the report otherwise. */
export function readDestinationRule(dr: DestinationRule): { dr?: DestinationRule; invalid?: InvalidPolicy } {
  const reason = destinationRuleProblem(dr);
  if (!reason) return { dr };
  return {
    invalid: {
      kind: 'DestinationRule',
      namespace: dr.metadata.namespace ?? '',
      name: dr.metadata.name,
      reason,
      action: 'ignored (auto mTLS decides) until it is fixed',
    },
  };
}
