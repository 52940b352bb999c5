import { StraitError, type ErrorDetail } from './strait-error.js';

// Exit codes the CLI uses (scripts can trust them):
//   1 general failure, 2 usage / bad input, 3 not found, 4 conflict, 5 unavailable, 6 auth/permission
const EXIT = { general: 1, usage: 2, notFound: 3, conflict: 4, unavailable: 5, denied: 6 } as const;

/** Quote a user-supplied value for a message: JSON quoting, shortened if long. */
export function q(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 200 ? `${s.slice(0, 197)}...` : s;
}

function def<A extends unknown[]>(code: string, exitCode: number, build: (...args: A) => { message: string; detail?: ErrorDetail }) {
  const factory = (...args: A): StraitError => {
    const { message, detail } = build(...args);
    return new StraitError(code, message, { detail: detail ?? {}, exitCode });
  };
  return Object.assign(factory, { code, exitCode });
}

/**
 * One factory per condition. Group by area; keep docs/errors.md in the same order.
 * Usage: `throw E.configInvalid('world.clusters[0].cidr', '10.1/16', 'must be a CIDR')`.
 */
export const E = {
  // --- base: configuration, input, lifecycle -------------------------------------
  configInvalid: def('STRAIT_ERR_CONFIG_INVALID', EXIT.usage, (path: string, value: unknown, rule: string) => ({
    message: `invalid configuration at ${path}: ${q(value)} ${rule}`,
    detail: { path, value, rule },
  })),
  configUnknownKey: def('STRAIT_ERR_CONFIG_UNKNOWN_KEY', EXIT.usage, (path: string, key: string, suggestion?: string) => ({
    message: `unknown configuration key ${q(key)} at ${path || '(top level)'}; ${suggestion ? `did you mean ${q(suggestion)}?` : 'remove it or check its spelling'}`,
    detail: { path, key, ...(suggestion ? { suggestion } : {}) },
  })),
  configRenamedKey: def('STRAIT_ERR_CONFIG_RENAMED_KEY', EXIT.usage, (path: string, oldKey: string, newKey: string) => ({
    message: `configuration key ${q(oldKey)} at ${path || '(top level)'} was renamed to ${q(newKey)}; use ${q(newKey)} instead`,
    detail: { path, oldKey, newKey },
  })),
  usage: def('STRAIT_ERR_USAGE', EXIT.usage, (message: string, detail?: ErrorDetail) => ({ message, detail: detail ?? {} })),
  fileUnreadable: def('STRAIT_ERR_FILE_UNREADABLE', EXIT.usage, (path: string, reason: string) => ({
    message: `cannot read ${q(path)}: ${reason}`,
    detail: { path, reason },
  })),
  notRoot: def('STRAIT_ERR_PRIVILEGE', EXIT.denied, (what: string) => ({
    message: `${what} needs root or unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1); run as root or enable them`,
    detail: { what },
  })),
  systemTool: def('STRAIT_ERR_SYSTEM_TOOL', EXIT.general, (command: string, exit: number | string, stderr: string) => ({
    message: `${q(command)} failed (exit ${exit}): ${stderr.trim().slice(0, 500)}`,
    detail: { command, exit, stderr },
  })),
  portInUse: def('STRAIT_ERR_PORT_IN_USE', EXIT.conflict, (address: string) => ({
    message: `cannot listen on ${address}: the address is in use by another program; stop that program or choose another port`,
    detail: { address },
  })),
  listenFailed: def('STRAIT_ERR_LISTEN_FAILED', EXIT.general, (address: string, reason: string) => ({
    message: `cannot listen on ${address}: ${reason}`,
    detail: { address, reason },
  })),
  internal: def('STRAIT_ERR_INTERNAL', EXIT.general, (what: string) => ({ message: `internal error: ${what}`, detail: { what } })),

  // --- resources and stores ------------------------------------------------------
  manifestInvalid: def('STRAIT_ERR_MANIFEST_INVALID', EXIT.usage,
    (source: string, docIndex: number, fieldPath: string, rule: string, value?: unknown) => ({
      message: `${source} document ${docIndex}: ${fieldPath}: ${rule}${value === undefined ? '' : ` (got ${q(value)})`}`,
      detail: { source, docIndex, fieldPath, rule, value },
    })),
  manifestParse: def('STRAIT_ERR_MANIFEST_PARSE', EXIT.usage, (source: string, docIndex: number, reason: string) => ({
    message: `${source} document ${docIndex}: not valid YAML/JSON: ${reason}`,
    detail: { source, docIndex, reason },
  })),
  kindUnknown: def('STRAIT_ERR_KIND_UNKNOWN', EXIT.usage, (kind: string) => ({
    message: `unknown resource kind ${q(kind)}; 'strait api-resources' lists the kinds strait knows`,
    detail: { kind },
  })),
  notFound: def('STRAIT_ERR_NOT_FOUND', EXIT.notFound, (kind: string, name: string, namespace?: string) => ({
    message: `${kind} ${q(name)} not found${namespace ? ` in namespace ${q(namespace)}` : ''}`,
    detail: { kind, name, namespace },
  })),
  alreadyExists: def('STRAIT_ERR_ALREADY_EXISTS', EXIT.conflict, (kind: string, name: string, namespace?: string) => ({
    message: `${kind} ${q(name)} already exists${namespace ? ` in namespace ${q(namespace)}` : ''}`,
    detail: { kind, name, namespace },
  })),
  conflict: def('STRAIT_ERR_CONFLICT', EXIT.conflict, (kind: string, name: string, expected: string, actual: string) => ({
    message: `${kind} ${q(name)} was changed by someone else (resourceVersion ${q(expected)}, now ${q(actual)}); read it again and retry`,
    detail: { kind, name, expected, actual },
  })),
  watchExpired: def('STRAIT_ERR_WATCH_EXPIRED', EXIT.general, (resourceVersion: string, oldest: string) => ({
    message: `resourceVersion ${q(resourceVersion)} is too old (oldest kept: ${q(oldest)}); list again and watch from the list's resourceVersion`,
    detail: { resourceVersion, oldest },
  })),
  storeUnavailable: def('STRAIT_ERR_STORE_UNAVAILABLE', EXIT.unavailable, (where: string, reason: string) => ({
    message: `resource store at ${q(where)} is not reachable: ${reason}; is 'strait up' running?`,
    detail: { where, reason },
  })),
  unauthorized: def('STRAIT_ERR_UNAUTHORIZED', EXIT.denied, (what: string) => ({
    message: `not authorized: ${what}`,
    detail: { what },
  })),

  // --- kubernetes: the Kubernetes resource store and test tooling -----------------
  kubeconfigInvalid: def('STRAIT_ERR_KUBE_CONFIG', EXIT.usage, (source: string, reason: string) => ({
    message: `kubeconfig ${q(source)} is not usable: ${reason}; check the file, --kubeconfig and --context`,
    detail: { source, reason },
  })),
  kubeApi: def('STRAIT_ERR_KUBE_API', EXIT.general, (what: string, status: number, reason: string, message: string) => ({
    message: `Kubernetes API server refused ${what}: HTTP ${status} ${reason}: ${message}`,
    detail: { what, status, reason, apiMessage: message },
  })),
  kubeForbidden: def('STRAIT_ERR_KUBE_FORBIDDEN', EXIT.denied, (what: string, message: string) => ({
    message: `Kubernetes API server forbids ${what}: ${message}; grant the RBAC rule (deploy/rbac) to this identity`,
    detail: { what, apiMessage: message },
  })),

  // --- local world ---------------------------------------------------------------
  worldInvalid: def('STRAIT_ERR_WORLD_INVALID', EXIT.usage, (path: string, value: unknown, rule: string) => ({
    message: `invalid world at ${path}: ${q(value)} ${rule}`,
    detail: { path, value, rule },
  })),
  worldParse: def('STRAIT_ERR_WORLD_PARSE', EXIT.usage, (path: string, reason: string) => ({
    message: `world file ${q(path)} is not valid YAML/JSON: ${reason}`,
    detail: { path, reason },
  })),
  worldNotRunning: def('STRAIT_ERR_WORLD_NOT_RUNNING', EXIT.unavailable, (stateDir: string) => ({
    message: `no world is running with state dir ${q(stateDir)}; start one with 'strait up'`,
    detail: { stateDir },
  })),
  worldRunning: def('STRAIT_ERR_WORLD_RUNNING', EXIT.conflict, (stateDir: string, pid: number, stop = 'strait down') => ({
    message: `a world is already running with state dir ${q(stateDir)} (pid ${pid}); stop it with '${stop}' or pick another --state-dir`,
    detail: { stateDir, pid },
  })),
  podNotFound: def('STRAIT_ERR_POD_NOT_FOUND', EXIT.notFound, (ref: string) => ({
    message: `pod ${q(ref)} not found; use CLUSTER/NAMESPACE/POD as 'strait get pods -A' shows`,
    detail: { ref },
  })),
  clusterUnknown: def('STRAIT_ERR_CLUSTER_UNKNOWN', EXIT.notFound, (cluster: string, known: string[]) => ({
    message: `unknown cluster ${q(cluster)}; known clusters: ${known.join(', ') || '(none)'}`,
    detail: { cluster, known },
  })),

  // --- multicluster: broker, join, export, clusterset DNS --------------------------
  mcBrokerInfoEncoding: def('STRAIT_ERR_MC_BROKER_INFO_ENCODING', EXIT.usage, (source: string, reason: string) => ({
    message: `broker info ${q(source)} is not base64 text: ${reason}; pass the broker-info.subm file that 'strait deploy-broker' wrote, unchanged`,
    detail: { source, reason },
  })),
  mcBrokerInfoJson: def('STRAIT_ERR_MC_BROKER_INFO_JSON', EXIT.usage, (source: string, reason: string) => ({
    message: `broker info ${q(source)} does not hold a JSON object: ${reason}; deploy the broker again to get a new file`,
    detail: { source, reason },
  })),
  mcBrokerInfoField: def('STRAIT_ERR_MC_BROKER_INFO_FIELD', EXIT.usage, (source: string, field: string, rule: string, value?: unknown) => ({
    message: `broker info ${q(source)}: field ${field} ${rule}${value === undefined ? '' : ` (got ${q(value)})`}`,
    detail: { source, field, rule, value },
  })),
  mcBrokerInfoPsk: def('STRAIT_ERR_MC_BROKER_INFO_PSK', EXIT.usage, (source: string, bytes: number, min: number) => ({
    message: `broker info ${q(source)}: the IPsec PSK has ${bytes} bytes, at least ${min} are required; deploy the broker again to generate a new PSK`,
    detail: { source, bytes, min },
  })),
  mcBrokerInfoTampered: def('STRAIT_ERR_MC_BROKER_INFO_TAMPERED', EXIT.denied, (source: string) => ({
    message: `broker info ${q(source)} failed its integrity check (the content was changed after 'strait deploy-broker' wrote it); use the original file`,
    detail: { source },
  })),
  mcBrokerInfoStale: def('STRAIT_ERR_MC_BROKER_INFO_STALE', EXIT.denied, (source: string, what: string) => ({
    message: `broker info ${q(source)} does not match the deployed broker (${what}); the broker was redeployed, use the broker-info.subm of the latest 'strait deploy-broker'`,
    detail: { source, what },
  })),
  mcBrokerNotDeployed: def('STRAIT_ERR_MC_BROKER_NOT_DEPLOYED', EXIT.notFound, (where: string) => ({
    message: `no broker is deployed at ${q(where)}; run 'strait deploy-broker' first`,
    detail: { where },
  })),
  mcBrokerUrl: def('STRAIT_ERR_MC_BROKER_URL', EXIT.usage, (url: string, reason: string) => ({
    message: `broker URL ${q(url)} cannot be used: ${reason}`,
    detail: { url, reason },
  })),
  mcClusterIdInvalid: def('STRAIT_ERR_MC_CLUSTER_ID_INVALID', EXIT.usage, (clusterId: string) => ({
    message: `cluster ID ${q(clusterId)} is not a DNS label (lower case letters, digits and '-', at most 63, starting and ending with a letter or digit); pick another --clusterid`,
    detail: { clusterId },
  })),
  mcCidrOverlap: def('STRAIT_ERR_MC_CIDR_OVERLAP', EXIT.conflict,
    (cluster: string, cidr: string, otherCluster: string, otherCidr: string) => ({
      message: `cluster ${q(cluster)} cannot join: its CIDR ${q(cidr)} overlaps CIDR ${q(otherCidr)} of joined cluster ${q(otherCluster)}; change one of the CIDRs (or enable a global-IP scheme) and join again`,
      detail: { cluster, cidr, otherCluster, otherCidr },
    })),
  mcNetworkUnknown: def('STRAIT_ERR_MC_NETWORK_UNKNOWN', EXIT.usage, (cluster: string, what: string) => ({
    message: `cannot discover the ${what} of cluster ${q(cluster)}; pass it with the matching join flag (--clustercidr, --servicecidr)`,
    detail: { cluster, what },
  })),
  mcNotJoined: def('STRAIT_ERR_MC_NOT_JOINED', EXIT.notFound, (cluster: string) => ({
    message: `cluster ${q(cluster)} has not joined a broker; run 'strait join broker-info.subm --clusterid ${cluster}' first`,
    detail: { cluster },
  })),
  mcExportUnsupported: def('STRAIT_ERR_MC_EXPORT_UNSUPPORTED', EXIT.usage, (namespace: string, name: string, type: string) => ({
    message: `service ${q(`${namespace}/${name}`)} has type ${q(type)}, which cannot be exported; export a ClusterIP or headless service`,
    detail: { namespace, name, type },
  })),
  mcDiagnoseFailed: def('STRAIT_ERR_MC_DIAGNOSE_FAILED', EXIT.general, (failed: string[]) => ({
    message: `diagnose found ${failed.length} problem(s): ${failed.join('; ')}`,
    detail: { failed },
  })),
  mcVerifyFailed: def('STRAIT_ERR_MC_VERIFY_FAILED', EXIT.general, (failed: string[]) => ({
    message: `verify: ${failed.length} check(s) failed: ${failed.join('; ')}; run 'strait diagnose' and 'strait show all' for the cause`,
    detail: { failed },
  })),

  // --- signatures and GitOps -----------------------------------------------------
  gpgKeyIdInvalid: def('STRAIT_ERR_GITOPS_KEY_ID_INVALID', EXIT.usage, (id: string) => ({
    message: `${id} is not a valid GnuPG key ID`,
    detail: { id },
  })),
  gpgKeyNotFound: def('STRAIT_ERR_GITOPS_KEY_NOT_FOUND', EXIT.notFound, (id: string) => ({
    message: `no GnuPG public key with ID ${id} is configured; 'strait gpg list' shows the configured keys`,
    detail: { id },
  })),
  gpgKeyDataInvalid: def('STRAIT_ERR_GITOPS_KEY_DATA_INVALID', EXIT.usage, (reason: string) => ({
    message: `the input holds no usable ASCII-armored OpenPGP public key: ${reason}; export one with 'gpg --armor --export KEYID'`,
    detail: { reason },
  })),
  loginFailed: def('STRAIT_ERR_GITOPS_LOGIN_FAILED', EXIT.denied, (username: string) => ({
    message: `Invalid username or password (user ${q(username)}); the admin password is in the Secret's field admin.password (see docs/gitops.md)`,
    detail: { username },
  })),
  notLoggedIn: def('STRAIT_ERR_GITOPS_NOT_LOGGED_IN', EXIT.denied, (reason: string) => ({
    message: `${reason}; run 'strait login SERVER --username admin --password PASSWORD' first`,
    detail: { reason },
  })),
  controlApi: def('STRAIT_ERR_GITOPS_API', EXIT.unavailable, (server: string, reason: string) => ({
    message: `control module API at ${q(server)}: ${reason}`,
    detail: { server, reason },
  })),
  revisionNotFound: def('STRAIT_ERR_GITOPS_REVISION_NOT_FOUND', EXIT.notFound, (repo: string, revision: string) => ({
    message: `revision ${q(revision)} not found in ${q(repo)}; use a branch, tag, HEAD or a commit SHA that exists`,
    detail: { repo, revision },
  })),
  gitFetch: def('STRAIT_ERR_GITOPS_FETCH', EXIT.unavailable, (repo: string, reason: string) => ({
    message: `cannot fetch ${q(repo)}: ${reason.trim().slice(0, 500)}`,
    detail: { repo, reason },
  })),
  syncFailed: def('STRAIT_ERR_GITOPS_SYNC_FAILED', EXIT.general, (app: string, revision: string | undefined, reason: string) => ({
    message: `sync of Application ${q(app)}${revision ? ` to ${revision.slice(0, 12)}` : ''} did not succeed: ${reason}`,
    detail: { app, revision, reason },
  })),

  // --- tunnel, VXLAN and the gateway/agent data plane ------------------------------
  tunnelMalformed: def('STRAIT_ERR_TUNNEL_MALFORMED', EXIT.usage, (what: string, offset: number, rule: string) => ({
    message: `malformed ${what} at byte ${offset}: ${rule}; the packet is dropped`,
    detail: { what, offset, rule },
  })),
  tunnelAuth: def('STRAIT_ERR_TUNNEL_AUTH', EXIT.denied, (peer: string, reason: string) => ({
    message: `tunnel authentication with ${q(peer)} failed: ${reason}; check that both gateways use the PSK from the same broker-info file`,
    detail: { peer, reason },
  })),
  tunnelHandshakeTimeout: def('STRAIT_ERR_TUNNEL_HANDSHAKE_TIMEOUT', EXIT.unavailable, (peer: string, attempts: number) => ({
    message: `no valid handshake response from ${q(peer)} after ${attempts} attempts: the peer is down, unreachable on UDP, or uses a different PSK; check the broker-info file and the endpoint`,
    detail: { peer, attempts },
  })),
  tunnelPeerUnknown: def('STRAIT_ERR_TUNNEL_PEER_UNKNOWN', EXIT.notFound, (clusterId: string, from: string) => ({
    message: `handshake from ${q(from)} claims cluster ${q(clusterId)}, which is not a configured peer; add it to the gateway's peers`,
    detail: { clusterId, from },
  })),
  tunnelDevice: def('STRAIT_ERR_TUNNEL_DEVICE', EXIT.general, (name: string, reason: string) => ({
    message: `cannot open TUN device ${q(name)}: ${reason}; it needs CAP_NET_ADMIN and /dev/net/tun`,
    detail: { name, reason },
  })),

  // --- signatures: commit objects and OpenPGP keys -----------------------------------
  signatureObjectInvalid: def('STRAIT_ERR_SIGNATURE_OBJECT_INVALID', EXIT.usage, (why: string, what: 'commit' | 'tag' = 'commit') => ({
    message: `not a valid git ${what} object: ${why}`,
    detail: { why, what },
  })),
  signatureKeyInvalid: def('STRAIT_ERR_SIGNATURE_KEY_INVALID', EXIT.usage, (why: string) => ({
    message: `failed to parse gpg key: ${why}; give an ASCII armored public key (gpg --armor --export KEYID)`,
    detail: { why, httpStatus: 422 },
  })),

  // --- githost: the code-hosting server -----------------------------------------------
  // detail.httpStatus is the status the Gitea-compatible API answers with.
  githostNameInvalid: def('STRAIT_ERR_GITHOST_NAME_INVALID', EXIT.usage, (what: string, name: string, rule: string) => ({
    message: `${what} name is invalid [name: ${q(name)}]: ${rule}`,
    detail: { what, name, rule, httpStatus: 422 },
  })),
  githostUserExists: def('STRAIT_ERR_GITHOST_USER_EXISTS', EXIT.conflict, (name: string) => ({
    message: `user already exists [name: ${name}]; pick another username`,
    detail: { name, httpStatus: 422 },
  })),
  githostEmailUsed: def('STRAIT_ERR_GITHOST_EMAIL_USED', EXIT.conflict, (email: string) => ({
    message: `e-mail already in use [email: ${email}]; every user needs their own e-mail`,
    detail: { email, httpStatus: 422 },
  })),
  githostEmailInvalid: def('STRAIT_ERR_GITHOST_EMAIL_INVALID', EXIT.usage, (email: string) => ({
    message: `e-mail invalid [email: ${q(email)}]; give an address like name@example.com`,
    detail: { email, httpStatus: 422 },
  })),
  githostPasswordTooShort: def('STRAIT_ERR_GITHOST_PASSWORD_TOO_SHORT', EXIT.usage, (min: number) => ({
    message: `password is too short: it must have at least ${min} characters`,
    detail: { min, httpStatus: 400 },
  })),
  githostRepoExists: def('STRAIT_ERR_GITHOST_REPO_EXISTS', EXIT.conflict, (owner: string, name: string) => ({
    message: `The repository with the same name already exists. [${owner}/${name}]`,
    detail: { owner, name, httpStatus: 409 },
  })),
  githostImportRefused: def('STRAIT_ERR_GITHOST_IMPORT_REFUSED', EXIT.denied, (addr: string, message: string) => ({
    message,
    detail: { addr, httpStatus: 422 },
  })),
  githostMigrateFailed: def('STRAIT_ERR_GITHOST_MIGRATE_FAILED', EXIT.general, (addr: string, stderr: string) => ({
    message: `Migration failed: git clone of ${q(addr)}: ${stderr.trim().slice(0, 400)}`,
    detail: { addr, stderr, httpStatus: 422 },
  })),
  githostDatabase: def('STRAIT_ERR_GITHOST_DATABASE', EXIT.unavailable, (path: string, reason: string) => ({
    message: `cannot open the githost database ${q(path)}: ${reason}; check the state dir and its permissions`,
    detail: { path, reason },
  })),
  // --- mesh: CA, policy, sidecar proxy ---------------------------------------------
  meshCaInvalid: def('STRAIT_ERR_MESH_CA_INVALID', EXIT.usage, (reason: string) => ({
    message: `mesh CA material is not usable: ${reason}; give a PEM root certificate with its own private key, or let strait create a new root`,
    detail: { reason },
  })),
  meshIdentityInvalid: def('STRAIT_ERR_MESH_IDENTITY_INVALID', EXIT.usage, (what: string, value: string) => ({
    message: `${what} ${q(value)} cannot be part of a SPIFFE ID; use lower-case letters, digits and '-' (DNS label rules)`,
    detail: { what, value },
  })),
  meshConfigInvalid: def('STRAIT_ERR_MESH_CONFIG_INVALID', EXIT.usage, (path: string, value: unknown, rule: string) => ({
    message: `invalid sidecar configuration at ${path}: ${q(value)} ${rule}`,
    detail: { path, value, rule },
  })),
  meshWorkloadNotFound: def('STRAIT_ERR_MESH_WORKLOAD_NOT_FOUND', EXIT.notFound, (ref: string, known: string[]) => ({
    message: `no pod or Deployment ${q(ref)} among the mesh resources; known pods: ${known.slice(0, 20).join(', ') || '(none)'}`,
    detail: { ref, known },
  })),
  meshCheckFailed: def('STRAIT_ERR_MESH_CHECK_FAILED', EXIT.general, (errors: number) => ({
    message: `mesh check found ${errors} configuration error(s) that will break traffic; fix the resources listed above`,
    detail: { errors },
  })),
  meshOrigDst: def('STRAIT_ERR_MESH_ORIGINAL_DST', EXIT.general, (reason: string) => ({
    message: `cannot read the original destination of a redirected connection: ${reason}; is the nftables redirect in place?`,
    detail: { reason },
  })),
};

export type ErrorCode = (typeof E)[keyof typeof E]['code'];

/** Every code this module can raise, in declaration order. */
export function listErrorCodes(): string[] {
  return Object.values(E).map((f) => f.code);
}
