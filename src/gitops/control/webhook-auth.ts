// Authenticating POST /api/webhook as Argo CD does, with the shared secrets of the
// admin Secret (argocd-secret): webhook.gitea.secret checks Gitea's X-Gitea-Signature
// (hex HMAC-SHA256 of the raw body), webhook.github.secret checks GitHub's
// X-Hub-Signature-256 ("sha256=" + hex HMAC-SHA256). Compared in constant time.
// When a secret is configured, every webhook must carry a valid signature for one of
// the configured secrets. Without any, webhooks are accepted unauthenticated: a
// webhook is only a refresh trigger (the controller fetches and verifies the
// repository itself; nothing in the payload is trusted but which repository to
// refresh), so the worst an anonymous caller does is make the controller fetch a
// repository an Application already names.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Kinds } from '../../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';
import { ADMIN_SECRET } from './admin.js';

export interface WebhookSecrets {
  gitea?: string;
  github?: string;
}

/** The webhook secrets of the admin Secret (read on every call: they may change). */
export async function readWebhookSecrets(store: ResourceStore, namespace: string): Promise<WebhookSecrets> {
  const s = await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, namespace);
  const field = (k: string): string | undefined => {
    const v = s?.data?.[`webhook.${k}.secret`];
    const text = v ? Buffer.from(v, 'base64').toString('utf8') : '';
    return text || undefined;
  };
  const out: WebhookSecrets = {};
  const gitea = field('gitea');
  const github = field('github');
  if (gitea) out.gitea = gitea;
  if (github) out.github = github;
  return out;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function hmacMatches(secret: string, body: Buffer, hex: string): boolean {
  const want = Buffer.from(createHmac('sha256', secret).update(body).digest('hex'));
  const got = Buffer.from(hex.trim().toLowerCase());
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Why the webhook is refused, or undefined when it is accepted. */
export function webhookRefusal(headers: IncomingHttpHeaders, body: Buffer, secrets: WebhookSecrets): string | undefined {
  if (!secrets.gitea && !secrets.github) return undefined;
  const gitea = header(headers, 'x-gitea-signature');
  if (secrets.gitea && gitea !== undefined) return hmacMatches(secrets.gitea, body, gitea) ? undefined : 'HMAC verification failed';
  const hub = header(headers, 'x-hub-signature-256');
  if (secrets.github && hub !== undefined) {
    if (!hub.startsWith('sha256=')) return 'X-Hub-Signature-256 must be "sha256=<hex HMAC>"';
    return hmacMatches(secrets.github, body, hub.slice('sha256='.length)) ? undefined : 'HMAC verification failed';
  }
  const wanted = [secrets.gitea ? 'X-Gitea-Signature' : '', secrets.github ? 'X-Hub-Signature-256' : ''].filter(Boolean).join(' or ');
  return `missing ${wanted} header (a webhook secret is configured in ${ADMIN_SECRET})`;
}
