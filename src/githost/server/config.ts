// githost settings, validated once at start (unknown keys refused) and frozen.
import { defineConfig, type ConfigSchema } from '../../base/config/index.js';
import { E } from '../../base/errors/index.js';

export interface GithostSettings {
  /** TCP port; 0 picks a free one */
  port: number;
  host: string;
  /** public base URL used in links (clone_url, html_url); default http://host:port */
  baseURL: string;
  /** allow migrating from hosts that resolve to loopback, private or link-local ranges */
  allowLocalNetworks: boolean;
  /** allow migrating from local paths and file: URLs */
  allowImportLocal: boolean;
  /** largest accepted API request body */
  maxBodyBytes: number;
  /** an API request body must arrive within this long, a git request body may not pause longer (ms) */
  bodyTimeoutMs: number;
  /** largest accepted git push body (bytes); 0 = no limit */
  maxPushBytes: number;
  /** a migration's git clone is killed after this long */
  migrateTimeoutMs: number;
  /** loopback http URLs that get a POST for every pushed ref */
  pushWebhooks: string[];
  /** shared secret: push webhooks are signed (X-Gitea-Signature, X-Hub-Signature-256) when set */
  pushWebhookSecret: string;
  /** WWW-Authenticate realm for git over HTTP */
  realm: string;
}

const schema: ConfigSchema<GithostSettings> = {
  type: 'object',
  additionalProperties: false,
  properties: {
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 3000 },
    host: { type: 'string', minLength: 1, default: '127.0.0.1' },
    baseURL: { type: 'string', default: '' },
    allowLocalNetworks: { type: 'boolean', default: false },
    allowImportLocal: { type: 'boolean', default: false },
    maxBodyBytes: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 },
    bodyTimeoutMs: { type: 'integer', minimum: 100, maximum: 3_600_000, default: 30_000 },
    maxPushBytes: { type: 'integer', minimum: 0, default: 0 },
    migrateTimeoutMs: { type: 'integer', minimum: 1000, default: 10 * 60 * 1000 },
    pushWebhooks: { type: 'array', items: { type: 'string' }, default: [] },
    pushWebhookSecret: { type: 'string', default: '' },
    realm: { type: 'string', minLength: 1, default: 'strait githost' },
  },
  required: [],
};

const definition = defineConfig(schema, {
  prefix: 'githost',
  renamed: { allowLocalNetwork: 'allowLocalNetworks', allowLocalImport: 'allowImportLocal', webhooks: 'pushWebhooks' },
});

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Validate githost settings; push webhooks must be http(s) URLs on loopback. */
export function parseGithostSettings(input: unknown, where?: string): Readonly<GithostSettings> {
  const s = definition.parse(input, where);
  s.pushWebhooks.forEach((u, i) => {
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      throw E.configInvalid(`githost.pushWebhooks[${i}]`, u, 'is not a URL');
    }
    if (!/^https?:$/.test(url.protocol) || !isLoopbackHost(url.hostname)) {
      throw E.configInvalid(`githost.pushWebhooks[${i}]`, u, 'must be an http(s) URL on loopback (127.0.0.0/8, ::1, localhost)');
    }
  });
  if (s.baseURL) {
    try {
      new URL(s.baseURL);
    } catch {
      throw E.configInvalid('githost.baseURL', s.baseURL, 'is not a URL such as http://127.0.0.1:3000');
    }
  }
  return s;
}
