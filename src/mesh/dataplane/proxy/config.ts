// The configuration a sidecar proxy runs with: plain objects pushed to it by the
// control plane (or the node agent) and swapped at runtime without a restart.
import { E, formatVersionOf } from '../../../base/errors/index.js';
import { trustDomainOf, type ProxyIdentity } from './identity.js';

export type InboundMode = 'STRICT' | 'PERMISSIVE' | 'DISABLE';
export type OutboundTlsMode = 'ISTIO_MUTUAL' | 'DISABLE';

export const INBOUND_MODES: readonly InboundMode[] = ['STRICT', 'PERMISSIVE', 'DISABLE'];
export const OUTBOUND_MODES: readonly OutboundTlsMode[] = ['ISTIO_MUTUAL', 'DISABLE'];

export type { ProxyIdentity } from './identity.js';

export interface OutboundPolicy {
  mode: OutboundTlsMode;
  /** SPIFFE IDs the server may present; empty or missing = any certificate of the mesh CA */
  sans?: string[];
}

export interface SidecarConfig {
  /** without an identity the proxy cannot terminate or originate mTLS */
  identity?: ProxyIdentity;
  inbound: {
    defaultMode: InboundMode;
    /** per application (workload) port, as portLevelMtls resolves it; keys are port numbers */
    ports?: Record<string, InboundMode>;
  };
  outbound: {
    /** what to do toward a destination not listed below */
    default: OutboundPolicy;
    /** keys "ip:port" (the original destination of the connection) */
    destinations?: Record<string, OutboundPolicy>;
  };
}

function checkInbound(path: string, v: unknown): InboundMode {
  if (!INBOUND_MODES.includes(v as InboundMode)) throw E.meshConfigInvalid(path, v, `must be one of ${INBOUND_MODES.join(', ')}`);
  return v as InboundMode;
}

function checkOutbound(path: string, v: unknown): OutboundPolicy {
  if (typeof v !== 'object' || v === null) throw E.meshConfigInvalid(path, v, 'must be an object {mode, sans?}');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'mode' && k !== 'sans') throw E.meshConfigInvalid(`${path}.${k}`, o[k], 'is not a known key (mode, sans)');
  if (!OUTBOUND_MODES.includes(o['mode'] as OutboundTlsMode))
    throw E.meshConfigInvalid(`${path}.mode`, o['mode'], `must be one of ${OUTBOUND_MODES.join(', ')}`);
  const sans = o['sans'];
  if (sans !== undefined && (!Array.isArray(sans) || sans.some((s) => typeof s !== 'string')))
    throw E.meshConfigInvalid(`${path}.sans`, sans, 'must be a list of SPIFFE IDs');
  return { mode: o['mode'] as OutboundTlsMode, ...(sans ? { sans: [...(sans as string[])] } : {}) };
}

/** The sidecar configuration format versions this proxy reads (absent: 1). */
export const SIDECAR_CONFIG_VERSIONS = [1];

/** Validate a configuration received from outside; returns a frozen copy. */
export function validateSidecarConfig(raw: unknown): Readonly<SidecarConfig> {
  if (typeof raw !== 'object' || raw === null) throw E.meshConfigInvalid('(top level)', raw, 'must be an object');
  const c = raw as Record<string, unknown>;
  // the format's version first: a newer control module's configuration is refused as such, never
  // read as this format (or refused for a key this version does not know). No version: version 1,
  // what every control module sends today (docs/upgrades.md, "Version skew")
  formatVersionOf('the sidecar configuration', c, SIDECAR_CONFIG_VERSIONS);
  for (const k of Object.keys(c))
    if (!['version', 'identity', 'inbound', 'outbound'].includes(k))
      throw E.meshConfigInvalid(k, c[k], 'is not a known key (version, identity, inbound, outbound)');
  let identity: ProxyIdentity | undefined;
  if (c['identity'] !== undefined) {
    const id = c['identity'] as Record<string, unknown>;
    for (const k of ['certPem', 'keyPem', 'rootPem']) {
      if (typeof id?.[k] !== 'string' || !(id[k] as string).includes('-----BEGIN'))
        throw E.meshConfigInvalid(`identity.${k}`, typeof id?.[k], 'must be a PEM string');
    }
    identity = { certPem: id['certPem'] as string, keyPem: id['keyPem'] as string, rootPem: id['rootPem'] as string };
    // the mesh's trust domain comes from this certificate: without a SPIFFE ID no peer could be checked
    const td = trustDomainOf(identity.certPem);
    if (typeof td !== 'string') throw E.meshConfigInvalid('identity.certPem', 'certificate', `must carry the workload's SPIFFE ID: ${td.reason}`);
  }
  const inb = c['inbound'] as Record<string, unknown> | undefined;
  if (typeof inb !== 'object' || inb === null) throw E.meshConfigInvalid('inbound', inb, 'must be an object {defaultMode, ports?}');
  const ports: Record<string, InboundMode> = {};
  for (const [p, m] of Object.entries((inb['ports'] as Record<string, unknown> | undefined) ?? {})) {
    if (!/^\d{1,5}$/.test(p) || Number(p) > 65535) throw E.meshConfigInvalid(`inbound.ports`, p, 'keys must be port numbers');
    ports[p] = checkInbound(`inbound.ports.${p}`, m);
  }
  const out = c['outbound'] as Record<string, unknown> | undefined;
  if (typeof out !== 'object' || out === null) throw E.meshConfigInvalid('outbound', out, 'must be an object {default, destinations?}');
  const destinations: Record<string, OutboundPolicy> = {};
  for (const [d, pol] of Object.entries((out['destinations'] as Record<string, unknown> | undefined) ?? {})) {
    if (!/^[0-9a-fA-F.:[\]]+:\d{1,5}$/.test(d)) throw E.meshConfigInvalid('outbound.destinations', d, 'keys must be "ip:port"');
    destinations[d] = checkOutbound(`outbound.destinations.${d}`, pol);
  }
  const cfg: SidecarConfig = {
    ...(identity ? { identity } : {}),
    inbound: { defaultMode: checkInbound('inbound.defaultMode', inb['defaultMode']), ports },
    outbound: { default: checkOutbound('outbound.default', out['default']), destinations },
  };
  return Object.freeze(cfg);
}
