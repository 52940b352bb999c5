// The code-hosting server: one node:http server for /api/v1 and git smart HTTP,
// state under <state-dir>/githost/ (githost.db, repos/, tmp/).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { E } from '../../base/errors/index.js';
import { silentLogger, type Logger } from '../../base/log/index.js';
import { listenServer, type ListeningServer } from '../../base/net/index.js';
import { GiteaApi } from './api.js';
import { Authenticator } from './auth.js';
import { parseGithostSettings, type GithostSettings } from './config.js';
import type { Links } from './convert.js';
import { GithostDb } from './db.js';
import { GitHttp } from './git-http.js';
import { sendError } from './http-io.js';
import { PushChecks } from './push-check.js';
import { PushEvents, type PushListener } from './push-events.js';
import { RepoFiles } from './repo-files.js';
import { GithostService } from './service.js';

export interface GithostOptions {
  stateDir: string;
  /** settings object (validated here) */
  settings?: unknown;
  log?: Logger;
}

/** Where githost keeps its state inside a strait state dir. */
export function githostPaths(stateDir: string): { root: string; db: string } {
  const root = join(stateDir, 'githost');
  return { root, db: join(root, 'githost.db') };
}

/** Read a githost settings file (YAML or JSON); a `githost:` top-level key is unwrapped. */
export function loadGithostSettingsFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw E.fileUnreadable(path, (err as Error).message);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw E.configInvalid(path, text.slice(0, 40), `is not YAML/JSON: ${(err as Error).message}`);
  }
  if (doc && typeof doc === 'object' && 'githost' in doc) return (doc as { githost: unknown }).githost;
  return doc ?? {};
}

export class GithostServer {
  readonly settings: Readonly<GithostSettings>;
  readonly db: GithostDb;
  readonly service: GithostService;
  private readonly server: Server;
  private readonly events: PushEvents;
  private readonly api: GiteaApi;
  private readonly gitHttp: GitHttp;
  private readonly checks: PushChecks;
  private readonly root: string;
  private readonly log: Logger;
  private boundURL = '';
  private bound: ListeningServer | undefined;

  constructor(opts: GithostOptions) {
    this.log = opts.log ?? silentLogger();
    this.settings = parseGithostSettings(opts.settings ?? {}, 'githost settings');
    const paths = githostPaths(opts.stateDir);
    const files = new RepoFiles(paths.root);
    this.db = new GithostDb(paths.db);
    const known = new Set(this.db.allRepos().map((r) => `${r.owner_lower}/${r.lower_name}.git`));
    const removed = files.recover(known);
    if (removed.length) this.log.warn({ removed }, 'removed leftovers of an interrupted run');
    // hooks of repositories made by an older version are brought up to date
    for (const r of this.db.allRepos()) {
      const dir = files.pathOf(r.owner_lower, r.lower_name);
      try {
        files.installHooks(dir);
      } catch (err) {
        this.log.warn({ err, dir }, 'could not update the hooks of a repository');
      }
    }
    this.root = paths.root;
    this.service = new GithostService(this.db, files, this.settings, this.log);
    this.checks = new PushChecks(this.service, this.log);
    const auth = new Authenticator(this.db);
    this.events = new PushEvents(this.settings.pushWebhooks, this.log, () => this.url, this.settings.pushWebhookSecret);
    this.api = new GiteaApi(this.service, auth, () => this.links(), this.log);
    this.gitHttp = new GitHttp(this.service, auth, this.events, this.log, this.checks);
    this.server = createServer((req, res) => {
      void this.route(req, res);
    });
    // a push may take long as a whole; what must not stall is the body (bodyTimeoutMs:
    // a JSON body must arrive within it, a git body may not pause for longer)
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 30_000;
  }

  /** Base URL (no trailing slash) once listening, or the configured baseURL. */
  get url(): string {
    return (this.settings.baseURL || this.boundURL).replace(/\/+$/, '');
  }

  private links(): Links {
    const base = this.url;
    let domain: string;
    try {
      domain = new URL(base).hostname;
    } catch {
      domain = 'localhost';
    }
    return { base, domain };
  }

  /** Subscribe to pushes; returns the unsubscribe function. */
  onPush(cb: PushListener): () => void {
    return this.events.onPush(cb);
  }

  async listen(port = this.settings.port, host = this.settings.host): Promise<string> {
    await this.checks.start(this.root);
    try {
      this.bound = await listenServer(this.server, { port, host });
    } catch (err) {
      // the push-check socket is up already: close it, or the process would not exit
      await this.checks.close();
      throw err;
    }
    const a = this.bound.address;
    if (typeof a === 'object') this.boundURL = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    this.log.info({ url: this.url }, 'githost listening');
    return this.url;
  }

  async close(): Promise<void> {
    if (this.bound) await this.bound.close();
    else this.server.close();
    await this.checks.close();
    this.db.close();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q === -1 ? raw : raw.slice(0, q);
    const query = q === -1 ? '' : raw.slice(q + 1);
    try {
      if (path === '/api/v1' || path.startsWith('/api/v1/')) await this.api.handle(req, res, path);
      else if (path === '/api/swagger') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('strait githost implements part of the Gitea API v1; see docs/githost.md\n');
      } else await this.gitHttp.handle(req, res, path, query);
    } catch (err) {
      this.log.error({ err }, 'githost request failed');
      sendError(req, res, 500, 'internal server error; see the githost log', `${this.url}/api/swagger`, undefined, E.internal.code);
    }
  }
}
