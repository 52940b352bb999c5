// Gitea's naming rules for users, repositories and e-mails. Names reach the file
// system (repos/<owner>/<repo>.git), so these rules are also the traversal guard.
import { E } from '../../base/errors/index.js';

const USERNAME = /^[\da-zA-Z][\w.-]*$/;
const CONSECUTIVE = /[-._]{2,}/;
const REPO_NAME = /^[\w.-]+$/;
const EMAIL = /^[\w.!#$%&'*+/=?^`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

const RESERVED_USERNAMES = new Set([
  '.',
  '..',
  '-',
  'admin',
  'api',
  'assets',
  'attachments',
  'avatar',
  'avatars',
  'captcha',
  'commits',
  'debug',
  'error',
  'explore',
  'favicon.ico',
  'ghost',
  'issues',
  'login',
  'manifest.json',
  'metrics',
  'milestones',
  'new',
  'notifications',
  'org',
  'pulls',
  'raw',
  'repo',
  'repo-avatars',
  'robots.txt',
  'search',
  'serviceworker.js',
  'ssh_info',
  'swagger.v1.json',
  'user',
  'v2',
  'gitea-actions',
]);
const RESERVED_REPO_NAMES = new Set(['.', '..', '-']);
const RESERVED_REPO_PATTERNS = [/\.wiki$/i, /\.git$/i, /\.rss$/i, /\.atom$/i];

const CHAR_RULE = 'must be valid alpha or numeric or dash(-_) or dot characters';

export function checkUsername(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw E.githostNameInvalid('user', String(name ?? ''), 'is required');
  if (name.length > 40) throw E.githostNameInvalid('user', name, 'must have at most 40 characters');
  if (!USERNAME.test(name) || CONSECUTIVE.test(name) || /[-._]$/.test(name)) {
    throw E.githostNameInvalid('user', name, `${CHAR_RULE}, start with a letter or digit, not end with or repeat - _ .`);
  }
  if (RESERVED_USERNAMES.has(name.toLowerCase())) throw E.githostNameInvalid('user', name, 'name is reserved');
  return name;
}

export function isValidUsername(name: string): boolean {
  try {
    checkUsername(name);
    return true;
  } catch {
    return false;
  }
}

export function checkRepoName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw E.githostNameInvalid('repository', String(name ?? ''), 'is required');
  if (name.length > 100) throw E.githostNameInvalid('repository', name, 'must have at most 100 characters');
  if (!REPO_NAME.test(name)) throw E.githostNameInvalid('repository', name, CHAR_RULE);
  if (RESERVED_REPO_NAMES.has(name)) throw E.githostNameInvalid('repository', name, 'name is reserved');
  const pattern = RESERVED_REPO_PATTERNS.find((p) => p.test(name));
  if (pattern) throw E.githostNameInvalid('repository', name, `name pattern is not allowed [pattern: ${pattern.source}]`);
  return name;
}

export function isValidRepoName(name: string): boolean {
  try {
    checkRepoName(name);
    return true;
  } catch {
    return false;
  }
}

export function checkEmail(email: unknown): string {
  if (typeof email !== 'string' || email.length === 0 || email.length > 254 || !EMAIL.test(email)) {
    throw E.githostEmailInvalid(String(email ?? ''));
  }
  return email;
}
