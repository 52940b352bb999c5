// Codes owned by gitops: GnuPG keys, the control module API, fetching revisions.
import { def, q, said } from '../define.js';

export const gitops = {
  gpgKeyIdInvalid: def('STRAIT_ERR_GITOPS_KEY_ID_INVALID', 'usage', (id: string) => ({
    message: `${id} is not a valid GnuPG key ID`,
    detail: { id },
  })),
  gpgKeyNotFound: def('STRAIT_ERR_GITOPS_KEY_NOT_FOUND', 'notFound', (id: string) => ({
    message: `no GnuPG public key with ID ${id} is configured; 'strait gpg list' shows the configured keys`,
    detail: { id },
  })),
  gpgKeyDataInvalid: def('STRAIT_ERR_GITOPS_KEY_DATA_INVALID', 'usage', (reason: string) => ({
    message: `the input holds no usable ASCII-armored OpenPGP public key: ${reason}; export one with 'gpg --armor --export KEYID'`,
    detail: { reason },
  })),
  sshSignerNotFound: def('STRAIT_ERR_GITOPS_SSH_SIGNER_NOT_FOUND', 'notFound', (fingerprint: string) => ({
    message: `no SSH allowed signer with key fingerprint ${q(fingerprint)} is configured; 'strait ssh-signers list' shows them`,
    detail: { fingerprint },
  })),
  loginFailed: def('STRAIT_ERR_GITOPS_LOGIN_FAILED', 'unauthenticated', (username: string) => ({
    message: `Invalid username or password (user ${q(username)}); the admin password is in the Secret's field admin.password (see docs/gitops.md)`,
    detail: { username },
  })),
  notLoggedIn: def('STRAIT_ERR_GITOPS_NOT_LOGGED_IN', 'unauthenticated', (reason: string) => ({
    message: `${reason}; run 'strait login SERVER --username admin --password PASSWORD' first`,
    detail: { reason },
  })),
  controlApi: def('STRAIT_ERR_GITOPS_API', 'unavailable', (server: string, reason: string) => ({
    message: `control module API at ${q(server)}: ${reason}`,
    detail: { server, reason },
  })),
  controlApiNotFound: def('STRAIT_ERR_GITOPS_API_NOT_FOUND', 'notFound', (server: string, message: string) => ({
    message: `control module API at ${q(server)}: ${message}`,
    detail: { server },
  })),
  revisionNotFound: def('STRAIT_ERR_GITOPS_REVISION_NOT_FOUND', 'notFound', (repo: string, revision: string) => ({
    message: `revision ${q(revision)} not found in ${q(repo)}; use a branch, tag, HEAD or a commit SHA that exists`,
    detail: { repo, revision },
  })),
  gitFetch: def('STRAIT_ERR_GITOPS_FETCH', 'unavailable', (repo: string, reason: string) => ({
    message: `cannot fetch ${q(repo)}: ${reason.trim().slice(0, 500)}`,
    detail: { repo, reason },
  })),
  syncFailed: def('STRAIT_ERR_GITOPS_SYNC_FAILED', 'failed', (app: string, revision: string | undefined, reason: string) => ({
    message: `sync of Application ${q(app)}${revision ? ` to ${revision.slice(0, 12)}` : ''} did not succeed: ${reason}`,
    detail: { app, revision, reason },
  })),
  sourceIntegrityLeftOut: def('STRAIT_ERR_GITOPS_SOURCE_INTEGRITY_LEFT_OUT', 'usage', (project: string, userAgent: string) => ({
    message:
      `project ${q(project)}: the update leaves spec.sourceIntegrity out, and strait keeps a field an update does not carry ` +
      `(the client, ${q(userAgent)}, may not know it); to switch verification off set the policy's mode to none ` +
      `(argocd proj source-integrity git policies update ${project} <N> --gpg-mode none), or remove spec.sourceIntegrity explicitly ` +
      `(PUT /api/v1/projects/${project} with "sourceIntegrity": null, or kubectl/strait apply)`,
    detail: { project, userAgent },
  })),
  demoExists: def('STRAIT_ERR_GITOPS_DEMO_EXISTS', 'exists', (stateDir: string, found: string[]) => ({
    message:
      `strait demo gitops --world sets up once, and the world of ${q(stateDir)} already has what it would make: ${found.join('; ')}; ` +
      "nothing was changed. Use what is there (strait app get guestbook), or start over: strait up --fresh (removes the world's state " +
      'and <state dir>/gitops-demo), and remove or rename the files named here',
    detail: { stateDir, found },
  })),
  demoNoServer: def('STRAIT_ERR_GITOPS_DEMO_NO_SERVER', 'unavailable', (stateDir: string, server: string) => ({
    message:
      `the world of ${q(stateDir)} publishes no ${server} on the host (strait status lists what it publishes); ` +
      'strait demo gitops --world needs the code-hosting server and the control module: start a world with both (the built-in world has them)',
    detail: { stateDir, server },
  })),
  // --- the control API's refusals, in Argo CD's words (src/gitops/control/api-handlers.ts, api-server.ts) ---
  apiNoSession: def('STRAIT_ERR_GITOPS_API_NO_SESSION', 'unauthenticated', said),
  apiObjectNotFound: def('STRAIT_ERR_GITOPS_API_OBJECT_NOT_FOUND', 'notFound', said),
  apiRequestInvalid: def('STRAIT_ERR_GITOPS_API_REQUEST_INVALID', 'usage', said),
  apiLoginRefused: def('STRAIT_ERR_GITOPS_API_LOGIN_REFUSED', 'unauthenticated', said),
  webhookRefused: def('STRAIT_ERR_GITOPS_WEBHOOK_REFUSED', 'usage', said),
};
