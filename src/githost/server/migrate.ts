// Repository migration: check the source address (no local paths, file: URLs or
// hosts on loopback/private networks unless the settings allow them; local paths for
// site admins only and never inside githost's own data directory), pin the
// resolved addresses for git so a second DNS answer cannot point elsewhere, refuse
// redirects, and clone with the real git into a temp dir.
import { lookup } from 'node:dns/promises';
import { realpathSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute, relative, resolve } from 'node:path';
import { E } from '../../base/errors/index.js';
import { isPublicAddress } from '../../base/special-addresses/index.js';
import { runGit } from './git-exec.js';

export interface CloneSource {
  /** the URL or path handed to git (credentials removed) */
  target: string;
  local: boolean;
  /** libcurl resolve pins: "host:port:addr" */
  pins: string[];
  username: string;
  password: string;
}

/**
 * True for every address a migration must not reach: loopback, private, link-local,
 * CGNAT, multicast, documentation, reserved and the other special-purpose ranges, IPv4
 * carried in IPv6 judged by its IPv4 (src/base/special-addresses holds the registry).
 */
export function isNonPublicAddress(addr: string): boolean {
  return !isPublicAddress(addr);
}

const refusedHost = (addr: string) => E.githostImportRefused(addr, 'You can not import from disallowed hosts.');
const refusedLocal = (addr: string) => E.githostImportRefused(addr, 'You are not allowed to import local repositories.');

/** Who asks for a migration, and what a local path must stay out of. */
export interface CloneRequester {
  /** local paths are for site admins only (Gitea: ImportLocalPaths and the doer can import local) */
  isAdmin: boolean;
  /** githost's own data directory: never a source, whatever the path spelling (symlinks, "..") */
  dataDir: string;
}

/** The path with every symlink and ".." resolved, or undefined when it does not exist. */
function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function localSource(addr: string, hasScheme: boolean, requester: CloneRequester): CloneSource {
  let path: string;
  try {
    path = hasScheme ? decodeURIComponent(new URL(addr).pathname) : addr;
  } catch {
    throw E.githostImportRefused(addr, 'Invalid local path, it does not exist or not a directory.');
  }
  const real = isAbsolute(path) ? realPath(path) : undefined;
  let isDir: boolean;
  try {
    isDir = real !== undefined && statSync(real).isDirectory();
  } catch {
    isDir = false;
  }
  if (!real || !isDir) throw E.githostImportRefused(addr, 'Invalid local path, it does not exist or not a directory.');
  const data = realPath(requester.dataDir) ?? resolve(requester.dataDir);
  const rel = relative(data, real);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
    throw E.githostImportRefused(addr, "You can not import from the server's own data directory: its repositories are served with their own permissions.");
  }
  // git gets the resolved path: a symlink swapped after this check does not move the clone
  return { target: real, local: true, pins: [], username: '', password: '' };
}

export async function checkCloneAddr(
  addr: string,
  auth: { username: string; password: string },
  settings: { allowLocalNetworks: boolean; allowImportLocal: boolean },
  requester: CloneRequester,
): Promise<CloneSource> {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(addr)) throw E.githostImportRefused(addr, 'Invalid url: the clone address has control characters');
  const hasScheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(addr) && !/^[a-zA-Z]:[\\/]/.test(addr);
  if (!hasScheme || addr.toLowerCase().startsWith('file:')) {
    if (!settings.allowImportLocal || !requester.isAdmin) throw refusedLocal(addr);
    return localSource(addr, hasScheme, requester);
  }
  let url: URL;
  try {
    url = new URL(addr);
  } catch {
    throw E.githostImportRefused(addr, `Invalid url: ${JSON.stringify(addr.slice(0, 200))} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw E.githostImportRefused(addr, `Invalid url: protocol ${JSON.stringify(url.protocol)} is not allowed; use http or https`);
  }
  const username = auth.username || decodeURIComponent(url.username);
  const password = auth.password || decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      throw E.githostImportRefused(addr, `Invalid url: host ${JSON.stringify(host)} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  if (addresses.length === 0) throw E.githostImportRefused(addr, `Invalid url: host ${JSON.stringify(host)} has no address`);
  if (!settings.allowLocalNetworks && addresses.some(isNonPublicAddress)) throw refusedHost(addr);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const pins = isIP(host) ? [] : [`${host}:${port}:${addresses.map((a) => (isIP(a) === 6 ? `[${a}]` : a)).join(',')}`];
  return { target: url.toString(), local: false, pins, username, password };
}

/** Clone `src` into `dest` (bare or mirror). Throws STRAIT_ERR_GITHOST_MIGRATE_FAILED. */
export async function cloneInto(src: CloneSource, dest: string, mirror: boolean, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<void> {
  const config: [string, string][] = [
    ['http.followRedirects', 'false'],
    ['credential.helper', ''],
    ['core.askPass', '/bin/false'],
    ['protocol.allow', 'never'],
    ['protocol.http.allow', 'always'],
    ['protocol.https.allow', 'always'],
  ];
  if (src.local) config.push(['protocol.file.allow', 'always']);
  for (const pin of src.pins) config.push(['http.curloptResolve', pin]);
  if (src.username || src.password) {
    const basic = Buffer.from(`${src.username || 'oauth2'}:${src.password}`).toString('base64');
    config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
  }
  // configuration through the environment, so credentials never show in the process list
  const cfgEnv: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
  config.forEach(([k, v], i) => {
    cfgEnv[`GIT_CONFIG_KEY_${i}`] = k;
    cfgEnv[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  const args = ['clone', mirror ? '--mirror' : '--bare', '--quiet'];
  if (src.local) args.push('--no-local', '--no-hardlinks');
  args.push('--', src.target, dest);
  const r = await runGit(args, { env: { ...env, ...cfgEnv }, timeoutMs });
  if (r.code !== 0) {
    const stderr = r.stderr.replace(/Authorization: Basic \S+/g, 'Authorization: Basic ***');
    if (/Authentication failed|401/.test(stderr)) throw E.githostMigrateFailed(src.target, `Authentication failed: ${stderr}`);
    if (/\b30[1278]\b|redirect/i.test(stderr))
      throw E.githostMigrateFailed(src.target, `the source answered with a redirect, which is not followed: ${stderr}`);
    throw E.githostMigrateFailed(src.target, stderr);
  }
}
