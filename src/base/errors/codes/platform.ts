// Codes owned by platform: resources, stores, Kubernetes, signatures.
import { def, q, said } from '../define.js';

/** A signature refusal: the message is made where the refusal is found (it names the commit and why). */
function refusal<const C extends `STRAIT_ERR_SIGNATURE_${string}`>(code: C) {
  return def(code, 'denied', (message: string, detail: { commit?: string; author?: string; keyID?: string } = {}) => ({ message, detail: { ...detail } }));
}

export const platform = {
  // --- resources and stores ---
  manifestInvalid: def('STRAIT_ERR_MANIFEST_INVALID', 'usage', (source: string, docIndex: number, fieldPath: string, rule: string, value?: unknown) => ({
    message: `${source} document ${docIndex}: ${fieldPath}: ${rule}${value === undefined ? '' : ` (got ${q(value)})`}`,
    detail: { source, docIndex, fieldPath, rule, value },
  })),
  objectInvalid: def('STRAIT_ERR_OBJECT_INVALID', 'usage', (kind: string, name: string, fieldPath: string, rule: string, value?: unknown) => ({
    message: `${kind} ${q(name)}: ${fieldPath}: ${rule}${value === undefined ? '' : ` (got ${q(value)})`}`,
    detail: { kind, name, fieldPath, rule, value },
  })),
  manifestParse: def('STRAIT_ERR_MANIFEST_PARSE', 'usage', (source: string, docIndex: number, reason: string) => ({
    message: `${source} document ${docIndex}: not valid YAML/JSON: ${reason}`,
    detail: { source, docIndex, reason },
  })),
  kindUnknown: def('STRAIT_ERR_KIND_UNKNOWN', 'usage', (kind: string) => ({
    message: `unknown resource kind ${q(kind)}; 'strait api-resources' lists the kinds strait knows`,
    detail: { kind },
  })),
  notFound: def('STRAIT_ERR_NOT_FOUND', 'notFound', (kind: string, name: string, namespace?: string) => ({
    message: `${kind} ${q(name)} not found${namespace ? ` in namespace ${q(namespace)}` : ''}`,
    detail: { kind, name, namespace },
  })),
  alreadyExists: def('STRAIT_ERR_ALREADY_EXISTS', 'exists', (kind: string, name: string, namespace?: string) => ({
    message: `${kind} ${q(name)} already exists${namespace ? ` in namespace ${q(namespace)}` : ''}`,
    detail: { kind, name, namespace },
  })),
  conflict: def('STRAIT_ERR_CONFLICT', 'conflict', (kind: string, name: string, expected: string, actual: string) => ({
    message: `${kind} ${q(name)} was changed by someone else (resourceVersion ${q(expected)}, now ${q(actual)}); read it again and retry`,
    detail: { kind, name, expected, actual },
  })),
  watchExpired: def('STRAIT_ERR_WATCH_EXPIRED', 'expired', (resourceVersion: string, oldest: string) => ({
    message: `resourceVersion ${q(resourceVersion)} is too old (oldest kept: ${q(oldest)}); list again and watch from the list's resourceVersion`,
    detail: { resourceVersion, oldest },
  })),
  storeUnavailable: def('STRAIT_ERR_STORE_UNAVAILABLE', 'unavailable', (where: string, reason: string) => ({
    message: `resource store at ${q(where)} is not reachable: ${reason}; ${
      /^https?:/.test(where) ? 'is the Kubernetes API server up, and are --kubeconfig and --context the right ones?' : "is 'strait up' running?"
    }`,
    detail: { where, reason },
  })),
  storeFull: def('STRAIT_ERR_STORE_FULL', 'unavailable', (where: string, what: string) => ({
    message:
      `resource store at ${q(where)} is out of disk space (ENOSPC): ${what} was not written; free space on the filesystem that holds it ` +
      '(the store takes writes again once there is room, without a restart; everything written before is kept)',
    detail: { where, what, errno: 'ENOSPC' },
  })),
  unauthorized: def('STRAIT_ERR_UNAUTHORIZED', 'unauthenticated', (what: string) => ({
    message: `not authorized: ${what}`,
    detail: { what },
  })),
  storeForbidden: def('STRAIT_ERR_STORE_FORBIDDEN', 'denied', (verb: string, kind: string, why: string) => ({
    message: `the store API refuses ${verb} of ${q(kind)} here: ${why}`,
    detail: { verb, kind, why },
  })),
  crossOriginWrite: def('STRAIT_ERR_CROSS_ORIGIN', 'denied', (method: string, path: string, origin: string, serving: string) => ({
    message: `${method} ${path} with the session cookie from ${origin ? `origin ${q(origin)}` : 'a page that sent no Origin'} is refused: writes with the cookie are taken only from this server's own origin ${q(serving)} (a script or CLI sends Authorization: Bearer instead)`,
    detail: { method, path, origin, serving },
  })),
  contentTypeRefused: def('STRAIT_ERR_CONTENT_TYPE', 'usage', (method: string, path: string, contentType: string) => ({
    message: `${method} ${path} with the session cookie needs content-type application/json, not ${q(contentType)}`,
    detail: { method, path, contentType },
  })),
  consoleNotBuilt: def('STRAIT_ERR_CONSOLE_NOT_BUILT', 'unavailable', (dir: string) => ({
    message: `the web console's files are not in ${q(dir)}; build them with 'node scripts/build.mjs' (or 'npm run build')`,
    detail: { dir },
  })),

  // --- the Kubernetes resource store ---
  kubeconfigInvalid: def('STRAIT_ERR_KUBE_CONFIG', 'usage', (source: string, reason: string) => ({
    message: `kubeconfig ${q(source)} is not usable: ${reason}; check the file, --kubeconfig and --context`,
    detail: { source, reason },
  })),
  kubeApi: def('STRAIT_ERR_KUBE_API', 'failed', (what: string, status: number, reason: string, message: string) => ({
    message: `Kubernetes API server refused ${what}: HTTP ${status} ${reason}: ${message}`,
    detail: { what, status, reason, apiMessage: message },
  })),
  kubeCrdMissing: def('STRAIT_ERR_KUBE_CRD_MISSING', 'notFound', (server: string, resources: string[]) => ({
    message:
      `the Kubernetes API server ${q(server)} does not serve ${resources.map((r) => q(r)).join(', ')}: ` +
      `strait's CustomResourceDefinitions are not installed there; apply them first: kubectl apply -f deploy/crds.yaml ` +
      `(or: strait crds | kubectl apply -f -), then wait for them: kubectl wait --for condition=Established crd -l app.kubernetes.io/part-of=strait`,
    detail: { server, resources },
  })),
  kubeForbidden: def('STRAIT_ERR_KUBE_FORBIDDEN', 'denied', (what: string, message: string) => ({
    message: `Kubernetes API server forbids ${what}: ${message}; grant the RBAC rule (deploy/rbac) to this identity`,
    detail: { what, apiMessage: message },
  })),

  // --- signatures: commit objects and OpenPGP keys ---
  signatureObjectInvalid: def('STRAIT_ERR_SIGNATURE_OBJECT_INVALID', 'usage', (why: string, what: 'commit' | 'tag' = 'commit') => ({
    message: `not a valid git ${what} object: ${why}`,
    detail: { why, what },
  })),
  signatureKeyInvalid: def(
    'STRAIT_ERR_SIGNATURE_KEY_INVALID',
    'usage',
    (why: string) => ({
      message: `failed to parse gpg key: ${why}; give an ASCII armored public key (gpg --armor --export KEYID)`,
      detail: { why },
    }),
    { giteaStatus: 422 },
  ),

  // --- signature refusals: one code per kind (src/platform/signatures/failures.ts); the
  // message names the revision or commit, its author and why
  signatureUnsigned: refusal('STRAIT_ERR_SIGNATURE_UNSIGNED'),
  signatureUnknownKey: refusal('STRAIT_ERR_SIGNATURE_UNKNOWN_KEY'),
  signatureKeyNotAllowed: refusal('STRAIT_ERR_SIGNATURE_KEY_NOT_ALLOWED'),
  signatureSignerNotAllowed: refusal('STRAIT_ERR_SIGNATURE_SIGNER_NOT_ALLOWED'),
  signatureExpired: refusal('STRAIT_ERR_SIGNATURE_EXPIRED'),
  signatureRevoked: refusal('STRAIT_ERR_SIGNATURE_REVOKED'),
  signatureBad: refusal('STRAIT_ERR_SIGNATURE_BAD'),
  signatureHistoryUnsigned: refusal('STRAIT_ERR_SIGNATURE_HISTORY_UNSIGNED'),
  // --- signatures: SSH keys, SSHSIG signatures, allowed_signers ---
  sshKeyInvalid: def(
    'STRAIT_ERR_SSH_KEY_INVALID',
    'usage',
    (why: string, value?: string) => ({
      message: `not a usable SSH public key${value === undefined ? '' : ` ${q(value)}`}: ${why}; give one line of a .pub file ("ssh-ed25519 AAAA... comment")`,
      detail: { why, value },
    }),
    { giteaStatus: 422 },
  ),
  sshSignatureInvalid: def('STRAIT_ERR_SSH_SIGNATURE_INVALID', 'usage', (why: string) => ({
    message: `not a valid SSH signature (PROTOCOL.sshsig): ${why}`,
    detail: { why },
  })),
  allowedSignersInvalid: def('STRAIT_ERR_ALLOWED_SIGNERS_INVALID', 'usage', (line: number, why: string, text: string) => ({
    message: `allowed_signers line ${line}: ${why} (line ${q(text)}); see "ALLOWED SIGNERS" in ssh-keygen(1)`,
    detail: { line, why, text },
  })),
  // --- HTTP: what every server of strait answers a request it cannot serve (src/platform/http) ---
  httpNoRoute: def('STRAIT_ERR_HTTP_NO_ROUTE', 'notFound', said),
  httpMethodNotAllowed: def('STRAIT_ERR_HTTP_METHOD_NOT_ALLOWED', 'usage', said, { httpStatus: 405 }),
  httpTargetInvalid: def('STRAIT_ERR_HTTP_TARGET_INVALID', 'usage', said),
  httpBodyTooLarge: def('STRAIT_ERR_HTTP_BODY_TOO_LARGE', 'usage', said, { httpStatus: 413 }),
  httpBodyTimeout: def('STRAIT_ERR_HTTP_BODY_TIMEOUT', 'usage', said, { httpStatus: 408 }),
  httpBodyAborted: def('STRAIT_ERR_HTTP_BODY_ABORTED', 'usage', said),
  httpBodyInvalid: def('STRAIT_ERR_HTTP_BODY_INVALID', 'usage', said),
  httpRateLimited: def('STRAIT_ERR_HTTP_RATE_LIMITED', 'unavailable', said, { httpStatus: 429 }),
};
