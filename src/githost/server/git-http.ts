// Git smart HTTP through the real `git http-backend` (CGI): authorization first,
// then the request is streamed to the backend and its answer streamed back.
// Pushes get STRAIT_GITHOST_PUSH=authorized (checked by the pre-receive hook) and a
// log file the post-receive hook fills with the updated refs.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from '../../base/log/index.js';
import type { Authenticator, Doer } from './auth.js';
import type { UserRow } from './db.js';
import { guardBodyStream } from '../../platform/http/index.js';
import { HttpError } from './http-io.js';
import { isValidRepoName, isValidUsername } from './names.js';
import { gitScopeRefusal } from './scopes.js';
import type { PushEvents } from './push-events.js';
import type { GithostService } from './service.js';
import { HOOK_CLIENT, type PushChecks } from './push-check.js';

const GIT_PATH =
  /^\/([^/]+)\/([^/]+?)(?:\.git)?(\/(?:info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/[0-9a-f]{2}\/[0-9a-f]{38,62}|objects\/pack\/pack-[0-9a-f]{40,64}\.(?:pack|idx)|objects\/info\/(?:packs|alternates|http-alternates)))$/;

/** Owner, repo and the git sub-path of a URL path, when it is a git HTTP path. */
export function parseGitPath(path: string): { owner: string; repo: string; rest: string } | undefined {
  const m = GIT_PATH.exec(path);
  if (!m) return undefined;
  return { owner: m[1] as string, repo: m[2] as string, rest: m[3] as string };
}

interface BackendRequest {
  owner: UserRow;
  repoName: string;
  repoDir: string;
  rest: string;
  query: string;
  doer: Doer | undefined;
  isPush: boolean;
  repoId: number;
  /** the push check token (every authorized push) */
  check: string | undefined;
}

/** Stop the backend's whole process group (git, git-http-backend, receive-pack) and stop feeding it. */
function killBackend(req: IncomingMessage, child: ChildProcessWithoutNullStreams): () => void {
  return () => {
    req.unpipe(child.stdin);
    child.stdin.destroy();
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  };
}

/** The CGI head of git http-backend's answer (Status and headers), once the blank line after it has come; undefined before. */
function parseCgiHead(buf: Buffer): { status: number; headers: Record<string, string>; body: Buffer } | undefined {
  let end = buf.indexOf('\r\n\r\n');
  let sepLen = 4;
  if (end === -1) {
    end = buf.indexOf('\n\n');
    sepLen = 2;
  }
  if (end === -1) return undefined;
  const head = buf.subarray(0, end).toString('latin1');
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const k = line.slice(0, colon).trim();
    const v = line.slice(colon + 1).trim();
    if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10) || 500;
    else headers[k] = v;
  }
  return { status, headers, body: buf.subarray(end + sepLen) };
}

/**
 * The backend's stdout as the HTTP answer: the CGI head (at most 64 KiB, else the backend is
 * killed) as status and headers, then the body with backpressure. `started` tells whether the head came.
 */
function relayCgiAnswer(child: ChildProcessWithoutNullStreams, res: ServerResponse, kill: () => void): { started: boolean } {
  const answer = { started: false };
  let headerBuf = Buffer.alloc(0);
  child.stdout.on('data', (d: Buffer) => {
    if (answer.started) {
      if (!res.write(d)) {
        child.stdout.pause();
        res.once('drain', () => child.stdout.resume());
      }
      return;
    }
    headerBuf = Buffer.concat([headerBuf, d]);
    const head = parseCgiHead(headerBuf);
    if (!head) {
      if (headerBuf.length > 65536) kill();
      return;
    }
    answer.started = true;
    headerBuf = Buffer.alloc(0);
    res.writeHead(head.status, head.headers);
    if (head.body.length) res.write(head.body);
  });
  return answer;
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
  res.end(text.endsWith('\n') ? text : `${text}\n`);
}

export class GitHttp {
  private seq = 0;

  constructor(
    private readonly svc: GithostService,
    private readonly auth: Authenticator,
    private readonly events: PushEvents,
    private readonly log: Logger,
    private readonly checks: PushChecks,
  ) {}

  private challenge(res: ServerResponse, text: string): void {
    plain(res, 401, text, { 'WWW-Authenticate': `Basic realm="${this.svc.settings.realm}"` });
  }

  /**
   * Who asks (anonymous: doer undefined), or undefined once the request has been answered: authentication failed,
   * or a token whose scopes allow no git over HTTP.
   */
  private async admit(req: IncomingMessage, res: ServerResponse): Promise<{ doer: Doer | undefined } | undefined> {
    let doer: Doer | undefined;
    try {
      doer = await this.auth.identify(req.headers);
    } catch (err) {
      req.resume();
      if (err instanceof HttpError && err.status === 401) {
        this.challenge(res, `strait githost: authentication failed: ${err.message}`);
        return undefined;
      }
      plain(res, err instanceof HttpError ? err.status : 500, `strait githost: ${(err as Error).message}`);
      return undefined;
    }
    // a token's scopes bound what it may do before anything about the repository is looked at
    if (doer?.via === 'token') {
      const refusal = gitScopeRefusal(doer.scopes, false, false);
      if (refusal) {
        req.resume();
        plain(res, 403, `strait githost: Token scope does not allow action: ${refusal}; git over HTTP needs read:repository (and write:repository to push)`);
        return undefined;
      }
    }
    return { doer };
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<void> {
    const parsed = parseGitPath(path);
    if (!parsed || !isValidUsername(parsed.owner) || !isValidRepoName(parsed.repo)) {
      req.resume();
      plain(res, 404, 'Not found');
      return;
    }
    const isPush = parsed.rest === '/git-receive-pack' || (parsed.rest === '/info/refs' && /(^|&)service=git-receive-pack(&|$)/.test(query));
    const who = await this.admit(req, res);
    if (!who) return;
    const doer = who.doer;
    const owner = this.svc.db.userByName(parsed.owner);
    const repo = owner ? this.svc.db.repoByName(owner.id, parsed.repo) : undefined;
    const perm = repo ? this.svc.permission(repo, doer?.user) : undefined;
    const hidden = repo !== undefined && doer?.via === 'token' && gitScopeRefusal(doer.scopes, false, repo.private === 1) !== undefined;
    if (!owner || !repo || !perm?.pull || hidden) {
      req.resume();
      if (!doer) this.challenge(res, 'strait githost: authentication required');
      else plain(res, 404, `strait githost: repository ${parsed.owner}/${parsed.repo} does not exist or you have no access to it`);
      return;
    }
    if (isPush) {
      if (!doer) {
        req.resume();
        this.challenge(res, 'strait githost: authentication required to push');
        return;
      }
      const refusal = doer.via === 'token' ? gitScopeRefusal(doer.scopes, true, repo.private === 1) : undefined;
      if (refusal) {
        req.resume();
        plain(res, 403, `strait githost: Token scope does not allow action: ${refusal}; push refused`);
        return;
      }
      if (!perm.push) {
        req.resume();
        this.log.info({ user: doer.user.name, repo: `${owner.name}/${repo.name}` }, 'push refused: no write access');
        plain(
          res,
          403,
          `User permission denied for writing: ${doer.user.name} may not push to ${owner.name}/${repo.name}; ask its owner to add you as a collaborator with write access.`,
        );
        return;
      }
    }
    // the push check (push-check.ts: ref names, branch protection) runs in the pre-receive hook, for this push only
    const check =
      isPush && parsed.rest === '/git-receive-pack' && doer !== undefined
        ? this.checks.register({ owner, repo, doer: doer.user, repoDir: this.svc.repoPath(owner, repo) })
        : undefined;
    try {
      await this.runBackend(req, res, {
        owner,
        repoName: repo.name,
        repoDir: `${owner.lower_name}/${repo.lower_name}.git`,
        rest: parsed.rest,
        query,
        doer,
        isPush,
        repoId: repo.id,
        check,
      });
    } finally {
      if (check) this.checks.unregister(check);
    }
  }

  private runBackend(req: IncomingMessage, res: ServerResponse, r: BackendRequest): Promise<void> {
    const pushLog = r.isPush && r.rest === '/git-receive-pack' ? join(this.svc.files.tmpDir, `push-${process.pid}-${++this.seq}.log`) : undefined;
    const env = this.backendEnv(req, r, pushLog);
    return new Promise((resolve) => {
      // its own process group: `git` runs git-http-backend as a child, which runs receive-pack;
      // killing only `git` would leave them holding our pipes
      const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        if (stderr.length < 8192) stderr += d.toString('utf8');
      });
      child.on('error', (err) => {
        this.log.error({ err }, 'git http-backend could not start');
        if (!res.headersSent) plain(res, 500, 'strait githost: git http-backend could not start');
        else res.destroy();
      });
      const kill = killBackend(req, child);
      this.feedBackend(req, res, child, kill, r.repoDir);
      const answer = relayCgiAnswer(child, res, kill);
      child.on('close', async (code) => {
        if (code !== 0 && stderr) this.log.debug({ code, stderr: stderr.trim().slice(0, 500) }, 'git http-backend stderr');
        // refs first (HEAD, subscribers), then the end of the answer: when git reports
        // the push done, a sync triggered by it already sees the new refs
        if (pushLog) await this.afterPush(pushLog, r).catch((err: unknown) => this.log.warn({ err }, 'push bookkeeping failed'));
        if (!answer.started && !res.headersSent) {
          this.log.warn({ code, stderr: stderr.trim().slice(0, 500) }, 'git http-backend ended without an answer');
          plain(res, 500, 'strait githost: git http-backend failed');
        } else res.end();
        resolve();
      });
    });
  }

  /** git http-backend's CGI environment for this request (and the push hook's, for an authorized push). */
  private backendEnv(req: IncomingMessage, r: BackendRequest, pushLog: string | undefined): NodeJS.ProcessEnv {
    const files = this.svc.files;
    const env = files.env({
      GIT_PROJECT_ROOT: files.reposDir,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: `/${r.repoDir}${r.rest}`,
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: r.query,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: req.socket.remoteAddress ?? '',
      REMOTE_USER: r.doer?.user.name ?? '',
      GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
      GIT_HTTP_MAX_REQUEST_BUFFER: '100M',
      STRAIT_GITHOST_PUSH: r.isPush ? 'authorized' : '',
      STRAIT_GITHOST_PUSH_LOG: pushLog ?? '',
      STRAIT_GITHOST_CHECK: r.check ? 'socket' : 'none',
      ...(r.check
        ? {
            STRAIT_GITHOST_HOOK_TOKEN: r.check,
            STRAIT_GITHOST_HOOK_SOCKET: this.checks.address,
            STRAIT_GITHOST_NODE: process.execPath,
            STRAIT_GITHOST_HOOK_CLIENT: HOOK_CLIENT,
          }
        : {}),
    });
    if (req.headers['content-length'] !== undefined) env['CONTENT_LENGTH'] = String(req.headers['content-length']);
    return env;
  }

  /** The request body into the backend's stdin, within the push size limit and the body timeout; the backend killed when the client goes. */
  private feedBackend(req: IncomingMessage, res: ServerResponse, child: ChildProcessWithoutNullStreams, kill: () => void, repoDir: string): void {
    const maxPush = this.svc.settings.maxPushBytes;
    let received = 0;
    req.on('data', (d: Buffer) => {
      received += d.length;
      if (maxPush > 0 && received > maxPush) {
        kill();
        req.destroy();
      }
    });
    guardBodyStream(req, this.svc.settings.bodyTimeoutMs, () => {
      this.log.info({ repo: repoDir, received }, `request body stalled for ${this.svc.settings.bodyTimeoutMs} ms; connection closed`);
      kill();
      req.destroy();
    });
    req.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    req.on('aborted', kill);
    res.on('close', () => {
      if (child.exitCode === null) kill();
    });
  }

  private async afterPush(pushLog: string, r: { owner: UserRow; repoName: string; doer: Doer | undefined; repoId: number }): Promise<void> {
    let text: string;
    try {
      text = readFileSync(pushLog, 'utf8');
    } catch {
      text = '';
    }
    rmSync(pushLog, { force: true });
    if (!text) return;
    this.svc.db.touchRepo(r.repoId);
    // HEAD first, so subscribers that resolve "HEAD" see the pushed branch
    const created = [...text.matchAll(/^[0-9a-f]+ ([0-9a-f]+) (\S+)$/gm)].filter((m) => !/^0+$/.test(m[1] as string)).map((m) => m[2] as string);
    const row = this.svc.db.repoById(r.repoId);
    if (row) await this.svc.fixDefaultBranch(r.owner, row, created);
    const events = this.events.publishLog(r.owner.name, r.repoName, r.doer?.user.name ?? '', text);
    this.log.info({ repo: `${r.owner.name}/${r.repoName}`, pusher: r.doer?.user.name, refs: events.map((e) => e.ref) }, 'push received');
  }
}
