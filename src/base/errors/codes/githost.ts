// Codes owned by githost: the code-hosting server.
import { def, q, said } from '../define.js';

// giteaStatus: where Gitea answers with another status than the kind's, the status the
// Gitea-compatible API answers with (Gitea says 422 for most refused input).
export const githost = {
  githostNameInvalid: def(
    'STRAIT_ERR_GITHOST_NAME_INVALID',
    'usage',
    (what: string, name: string, rule: string) => ({
      message: `${what} name is invalid [name: ${q(name)}]: ${rule}`,
      detail: { what, name, rule },
    }),
    { giteaStatus: 422 },
  ),
  githostUserExists: def(
    'STRAIT_ERR_GITHOST_USER_EXISTS',
    'exists',
    (name: string) => ({
      message: `user already exists [name: ${name}]; pick another username`,
      detail: { name },
    }),
    { giteaStatus: 422 },
  ),
  githostEmailUsed: def(
    'STRAIT_ERR_GITHOST_EMAIL_USED',
    'conflict',
    (email: string) => ({
      message: `e-mail already in use [email: ${email}]; every user needs their own e-mail`,
      detail: { email },
    }),
    { giteaStatus: 422 },
  ),
  githostEmailInvalid: def(
    'STRAIT_ERR_GITHOST_EMAIL_INVALID',
    'usage',
    (email: string) => ({
      message: `e-mail invalid [email: ${q(email)}]; give an address like name@example.com`,
      detail: { email },
    }),
    { giteaStatus: 422 },
  ),
  githostPasswordTooShort: def('STRAIT_ERR_GITHOST_PASSWORD_TOO_SHORT', 'usage', (min: number) => ({
    message: `password is too short: it must have at least ${min} characters`,
    detail: { min },
  })),
  githostRepoExists: def('STRAIT_ERR_GITHOST_REPO_EXISTS', 'exists', (owner: string, name: string) => ({
    message: `The repository with the same name already exists. [${owner}/${name}]`,
    detail: { owner, name },
  })),
  githostImportRefused: def(
    'STRAIT_ERR_GITHOST_IMPORT_REFUSED',
    'denied',
    (addr: string, message: string) => ({
      message,
      detail: { addr },
    }),
    { giteaStatus: 422 },
  ),
  githostMigrateFailed: def(
    'STRAIT_ERR_GITHOST_MIGRATE_FAILED',
    'failed',
    (addr: string, stderr: string) => ({
      message: `Migration failed: git clone of ${q(addr)}: ${stderr.trim().slice(0, 400)}`,
      detail: { addr, stderr },
    }),
    { giteaStatus: 422 },
  ),
  githostDatabase: def('STRAIT_ERR_GITHOST_DATABASE', 'unavailable', (path: string, reason: string) => ({
    message: `cannot open the githost database ${q(path)}: ${reason}; check the state dir and its permissions`,
    detail: { path, reason },
  })),
  // --- the Gitea-compatible API's refusals, in Gitea's words and statuses (src/githost/server) ---
  githostUnauthenticated: def('STRAIT_ERR_GITHOST_UNAUTHENTICATED', 'unauthenticated', said),
  githostDenied: def('STRAIT_ERR_GITHOST_DENIED', 'denied', said),
  githostNotFound: def('STRAIT_ERR_GITHOST_NOT_FOUND', 'notFound', said),
  githostRequestInvalid: def('STRAIT_ERR_GITHOST_REQUEST_INVALID', 'usage', said),
  githostFieldInvalid: def('STRAIT_ERR_GITHOST_FIELD_INVALID', 'usage', said, { giteaStatus: 422 }),
  githostUserUnknown: def('STRAIT_ERR_GITHOST_USER_UNKNOWN', 'notFound', said, { giteaStatus: 422 }),
  githostKeyUsed: def('STRAIT_ERR_GITHOST_KEY_USED', 'exists', said, { giteaStatus: 422 }),
  githostTokenNameUsed: def('STRAIT_ERR_GITHOST_TOKEN_NAME_USED', 'exists', said, { giteaStatus: 400 }),
  githostRuleExists: def('STRAIT_ERR_GITHOST_RULE_EXISTS', 'exists', said, { giteaStatus: 403 }),
};
