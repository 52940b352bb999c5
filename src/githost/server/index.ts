// The code-hosting server: a Gitea-compatible /api/v1 (users, tokens, repositories,
// migrate, GPG and SSH keys, branch and tag protections, commits with signature
// verification) and git smart HTTP through the real `git http-backend`, with ref names,
// protected tags and protected branches enforced at push (push-check.ts). State: <state-dir>/githost/{githost.db,repos/,tmp/}.
export { GithostServer, githostPaths, loadGithostSettingsFile, type GithostOptions } from './server.js';
export { parseGithostSettings, type GithostSettings } from './config.js';
export { GithostDb, type UserRow } from './db.js';
export { createUser, createToken, MIN_PASSWORD_LENGTH, type CreateUserInput } from './users.js';
export { normalizeScopes } from './scopes.js';
export { isNonPublicAddress } from './migrate.js';
export { refNameRefusal } from './ref-names.js';
export { tagMatcher } from './tag-protection.js';
export type { PushEvent, PushListener } from './push-events.js';
export { runWorldGithost } from './world.js';
