// Addresses that exist only inside a local world (its internet segment 198.18.0.0/15, its
// cluster, service and node CIDRs). From the host they are not reachable: a request to one
// leaves through the host's default route. A command refuses that and names the host URL
// `strait up` published (world.json: githost, control) instead.
import { readFileSync, readlinkSync } from 'node:fs';
import { cidrContains, ipv4ToInt, parseCidr, type Cidr } from '../../base/config/index.js';
import { E } from '../../base/errors/index.js';
import { resolveStateDir } from './state-dir.js';
import { readWorldRecord, type WorldRecord } from './world-record.js';

/** the shared segment of every world's gateways and servers (RFC 2544 benchmarking range) */
export const WORLD_INTERNET = '198.18.0.0/15';

function worldRanges(w: WorldRecord | undefined): Cidr[] {
  const texts = [WORLD_INTERNET, ...(w?.clusters ?? []).flatMap((c) => [c.clusterCIDR, c.serviceCIDR, c.nodeCIDR])];
  const out: Cidr[] = [];
  for (const t of texts) {
    if (!t) continue;
    try {
      out.push(parseCidr(t));
    } catch {
      /* not a CIDR: skip */
    }
  }
  return out;
}

/** /proc/net/route of this network namespace: [destination, mask, gateway] as integers */
function routes(): { dest: number; mask: number; gateway: number }[] {
  let text: string;
  try {
    text = readFileSync('/proc/net/route', 'utf8');
  } catch {
    return [];
  }
  // little-endian hex words
  const word = (h: string | undefined): number => {
    const n = parseInt(h ?? '0', 16) >>> 0;
    return (((n & 0xff) << 24) | ((n & 0xff00) << 8) | ((n >>> 8) & 0xff00) | (n >>> 24)) >>> 0;
  };
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .map((f) => ({ dest: word(f[1]), gateway: word(f[2]), mask: word(f[7]) }));
}

/**
 * Whether this process runs on the host rather than inside a world: the host's network
 * namespace is pid 1's (when it can be read); otherwise judge by the routes: inside a world
 * a world address is routed, or the default gateway is itself a world address.
 */
function onHost(ip: number, ranges: Cidr[]): boolean {
  try {
    if (readlinkSync('/proc/self/ns/net') !== readlinkSync('/proc/1/ns/net')) return false;
  } catch {
    /* not readable (no privilege): judge by the routes */
  }
  const rs = routes();
  if (rs.some((r) => r.mask !== 0 && (ip & r.mask) >>> 0 === r.dest)) return false;
  return !rs.some((r) => r.mask === 0 && r.gateway !== 0 && ranges.some((c) => cidrContains(c, r.gateway)));
}

/**
 * Refuse a URL or host:port that names an address inside a local world when this process
 * runs on the host (STRAIT_ERR_WORLD_ADDRESS, naming the host URL of that server when the
 * running world of the state dir published one). Anything else passes.
 */
export function refuseWorldAddressFromHost(target: string, stateDir?: string): void {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? target : `http://${target}`);
  } catch {
    return;
  }
  const ip = ipv4ToInt(url.hostname);
  if (ip === undefined) return;
  const w = readWorldRecord(resolveStateDir(stateDir));
  const ranges = worldRanges(w);
  if (!ranges.some((c) => cidrContains(c, ip)) || !onHost(ip, ranges)) return;
  const hostOf = (u: string | undefined): string | undefined => {
    try {
      return u ? new URL(u).host : undefined;
    } catch {
      return undefined;
    }
  };
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const same = (u: string | undefined): boolean => hostOf(u) === `${url.hostname}:${port}`;
  const hostURL = same(w?.inWorld?.control) ? w?.control : same(w?.inWorld?.githost) ? w?.githost : undefined;
  throw E.worldAddress(url.host, hostURL);
}

/**
 * Where the running local world of the state dir (default: $STRAIT_STATE_DIR or the default
 * one) publishes a server on the host now (world.json), e.g. "http://127.0.0.1:8081"; undefined
 * when no world record names it.
 */
export function worldHostURL(service: 'control' | 'githost', stateDir?: string): string | undefined {
  return readWorldRecord(stateDir ?? resolveStateDir())?.[service];
}
