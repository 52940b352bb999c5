// The control module's API as one implementation with two transports: Argo CD's REST
// shapes (api-server.ts) and Argo CD's gRPC / gRPC-web services (argocd-rpc.ts). Each
// handler takes and returns the JSON shape of its Argo CD message (which is also the REST
// body), so both transports call the same code. Errors carry a kind; the HTTP and gRPC
// status come from it (src/base/errors/kinds.ts).
import type { Logger } from 'pino';
import { E, StraitError, isStraitError, type ErrorCode, type ErrorKind } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import { normalizeKeyID } from '../../platform/signatures/index.js';
import { ADMIN_USER, checkToken, issueToken, passwordMatches, type AdminAccount } from './admin.js';
import type { GitOpsController } from './controller.js';
import { DEFAULT_LOGIN_LIMITS, LoginLimiter, type LoginLimits } from './login-limiter.js';
import { projectSpecFromRpc } from './rpc-project-spec.js';
import type { AppProject, Application } from './types.js';

/** An answer of the API other than success, in Argo CD's words: its definition gives the code, the kind the HTTP and gRPC status. */
export class ApiError extends StraitError {
  constructor(of: { readonly code: ErrorCode; readonly kind: ErrorKind }, message: string) {
    super(of.code, of.kind, message);
  }
}

export type Json = Record<string, unknown>;

/** Who calls: the session token from `authorization: Bearer`, gRPC metadata `token`, or the argocd.token cookie. */
export interface Caller {
  token: string | undefined;
  /** the client's address (failed-login limits count per user and per address) */
  addr: string;
  /** set when the request came as an Argo CD protobuf message (gRPC, gRPC-web, Connect): fields the
   *  messages have no number for were neither seen nor sent by the client (rpc-project-spec.ts) */
  rpc?: { userAgent: string };
}

/** Argo CD's bound on local user names (it keeps the failed-login table small). */
const MAX_USERNAME = 32;

export interface ApiHandler {
  /** false: no session needed (login, user info, version, settings) */
  auth: boolean;
  call(req: Json, caller: Caller): Promise<Json>;
}

export interface ApiStreamHandler {
  auth: boolean;
  stream(req: Json, caller: Caller, signal: AbortSignal): AsyncIterable<Json>;
}

export const STRAIT_VERSION = '0.1.0';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface ApiHandlers {
  unary: Record<string, ApiHandler>;
  streams: Record<string, ApiStreamHandler>;
  /** the user a caller's token names, or throws Unauthenticated */
  user(caller: Caller): string;
}

/** Handlers keyed `package.Service/Method` as Argo CD names its RPCs. */
export function createApiHandlers(controller: GitOpsController, account: AdminAccount, opts: { loginLimits?: LoginLimits; log?: Logger } = {}): ApiHandlers {
  const keys = controller.keys;
  const log = opts.log ?? silentLogger();
  // one limiter for every transport: gRPC is no way around the failed-login limit
  const logins = new LoginLimiter(opts.loginLimits ?? DEFAULT_LOGIN_LIMITS);
  const userOf = (caller: Caller): string | undefined => (caller.token ? checkToken(account, caller.token) : undefined);
  const user = (caller: Caller): string => {
    const u = userOf(caller);
    if (!u) throw new ApiError(E.apiNoSession, 'no session information');
    return u;
  };
  const getApp = async (name: string): Promise<Application> => {
    const app = await controller.getApplication(name);
    if (!app) throw new ApiError(E.apiObjectNotFound, `applications.argoproj.io "${name}" not found`);
    return app;
  };
  const getProject = async (name: string): Promise<AppProject> => {
    const p = await controller.getProject(name);
    if (!p) throw new ApiError(E.apiObjectNotFound, `appprojects.argoproj.io "${name}" not found`);
    return p;
  };
  const projectFrom = (req: Json): AppProject => {
    const p = req['project'] as AppProject | undefined;
    if (!p || typeof p !== 'object' || !p.metadata?.name) throw new ApiError(E.apiRequestInvalid, 'project.metadata.name is required');
    return p;
  };
  const u = (fn: (req: Json, caller: Caller) => Promise<Json> | Json, auth = true): ApiHandler => ({ auth, call: async (req, caller) => fn(req, caller) });

  const unary: Record<string, ApiHandler> = {
    'session.SessionService/Create': u((req, caller) => {
      const username = str(req['username']);
      if (Buffer.byteLength(username) > MAX_USERNAME) throw new ApiError(E.apiRequestInvalid, `Username is too long (${MAX_USERNAME} bytes max)`);
      if (logins.blocked(username, caller.addr)) {
        // as Argo CD: the same answer as a wrong password, and the password is not even checked
        log.warn({ username, addr: caller.addr }, 'login refused: too many failed logins');
        throw new ApiError(E.apiLoginRefused, 'Invalid username or password');
      }
      if (!passwordMatches(account, username, str(req['password']))) {
        logins.fail(username, caller.addr);
        throw new ApiError(E.apiLoginRefused, 'Invalid username or password');
      }
      logins.succeed(username, caller.addr);
      return { token: issueToken(account, username) };
    }, false),
    // tokens are stateless JWTs: delete ends nothing on the server; the client forgets its token
    'session.SessionService/Delete': u(() => ({ token: '' }), false),
    'session.SessionService/GetUserInfo': u((_req, caller) => {
      const name = userOf(caller);
      return name ? { loggedIn: true, username: name, iss: 'strait' } : { loggedIn: false };
    }, false),
    'version.VersionService/Version': u(
      () => ({
        Version: `v${STRAIT_VERSION}+strait`,
        Platform: `${process.platform}/${process.arch}`,
        Compiler: 'node',
        GoVersion: process.version,
      }),
      false,
    ),
    'cluster.SettingsService/Get': u(
      () => ({
        appLabelKey: 'app.kubernetes.io/instance',
        userLoginsDisabled: false,
        trackingMethod: 'label',
        controllerNamespace: controller.namespace,
      }),
      false,
    ),
    'account.AccountService/CanI': u(() => ({ value: 'yes' })),
    'account.AccountService/ListAccounts': u(() => ({ items: [{ name: ADMIN_USER, enabled: true, capabilities: ['login'] }] })),
    'account.AccountService/GetAccount': u((req) => {
      const name = str(req['name']);
      if (name !== ADMIN_USER) throw new ApiError(E.apiObjectNotFound, `account '${name}' does not exist`);
      return { name, enabled: true, capabilities: ['login'] };
    }),
    'gpgkey.GPGKeyService/List': u(() => ({ metadata: {}, items: keys.list() })),
    'gpgkey.GPGKeyService/Get': u((req) => keys.get(normalizeKeyID(str(req['keyID']))) as unknown as Json),
    'gpgkey.GPGKeyService/Create': u(async (req) => {
      const pk = req['publickey'] as { keyData?: unknown } | undefined;
      const r = await keys.add(str(pk?.keyData ?? req['keyData']), req['upsert'] === true);
      return { created: { metadata: {}, items: r.created }, skipped: r.skipped };
    }),
    'gpgkey.GPGKeyService/Delete': u(async (req) => {
      await keys.remove(normalizeKeyID(str(req['keyID'])));
      return {};
    }),
    // strait extension: the SSH allowed signers (REST only: /api/v1/sshsigners; no Argo CD RPC has them)
    'strait.SshSignerService/List': u(() => ({ metadata: {}, items: controller.sshSigners.list() as unknown as Json[] })),
    'strait.SshSignerService/Create': u(async (req) => {
      const r = await controller.sshSigners.add(str(req['allowedSigners']), req['upsert'] === true);
      return { created: { metadata: {}, items: r.created as unknown as Json[] }, skipped: r.skipped };
    }),
    'strait.SshSignerService/Delete': u(async (req) => {
      await controller.sshSigners.remove(str(req['fingerprint']));
      return {};
    }),
    'application.ApplicationService/List': u(async (req) => {
      const projects = [...((req['projects'] as string[] | undefined) ?? []), ...((req['project'] as string[] | undefined) ?? [])];
      const items = (await controller.listApplications()).filter((a) => projects.length === 0 || projects.includes(a.spec?.project || 'default'));
      return { metadata: {}, items };
    }),
    'application.ApplicationService/Get': u(async (req) => {
      const name = str(req['name']);
      if (str(req['refresh'])) await controller.refresh(name);
      return (await getApp(name)) as unknown as Json;
    }),
    'application.ApplicationService/Sync': u(async (req) => {
      const name = str(req['name']);
      await getApp(name);
      await controller.syncNow(name);
      return (await getApp(name)) as unknown as Json;
    }),
    'project.ProjectService/Get': u(async (req) => (await getProject(str(req['name']))) as unknown as Json),
    // what `argocd proj get` calls: no global projects, repositories or clusters in strait
    'project.ProjectService/GetDetailedProject': u(async (req) => ({ project: await getProject(str(req['name'])) })),
    'project.ProjectService/List': u(async () => ({ metadata: {}, items: await controller.listProjects() })),
    // over gRPC an existing project keeps what Argo CD's messages cannot carry (as Update does): an
    // `argocd proj create --upsert` must not drop spec.sshSigners and switch SSH enforcement off
    'project.ProjectService/Create': u(async (req, caller) => {
      const sent = projectFrom(req);
      const existing = await controller.getProject(sent.metadata.name);
      const spec = existing && caller.rpc ? projectSpecFromRpc(sent.metadata.name, sent.spec ?? {}, existing.spec ?? {}, caller.rpc.userAgent) : sent.spec;
      const p = { ...sent, ...(spec ? { spec } : {}) };
      if (existing && req['upsert'] !== true) {
        if (JSON.stringify(existing.spec ?? {}) === JSON.stringify(p.spec ?? {})) return existing as unknown as Json;
        throw new ApiError(E.apiRequestInvalid, `existing project spec is different, use upsert flag to force update`);
      }
      return (await controller.saveProject(p)) as unknown as Json;
    }),
    // Argo CD replaces the spec (a list left out is emptied); spec.sourceIntegrity is kept when left out (controller.replaceProject);
    // over gRPC what Argo CD's messages cannot carry is kept, sourceIntegrity left out too, whatever the client says it is (rpc-project-spec.ts)
    'project.ProjectService/Update': u(async (req, caller) => {
      const p = projectFrom(req);
      const existing = await getProject(p.metadata.name);
      const spec = caller.rpc ? projectSpecFromRpc(p.metadata.name, p.spec ?? {}, existing.spec ?? {}, caller.rpc.userAgent) : p.spec;
      return (await controller.replaceProject({ ...p, ...(spec ? { spec } : {}) })) as unknown as Json;
    }),
  };

  const streams: Record<string, ApiStreamHandler> = {
    'application.ApplicationService/Watch': {
      auth: true,
      stream: (req, _caller, signal) => controller.watchApplications(str(req['name']) || undefined, signal) as AsyncIterable<Json>,
    },
  };
  return { unary, streams, user };
}

/** A StraitError or ApiError as kind + message; anything else is internal. */
export function errorKindOf(err: unknown): { kind: ErrorKind; code: ErrorCode; message: string } {
  if (isStraitError(err)) return { kind: err.kind, code: err.code, message: err.message };
  return { kind: 'internal', code: E.internal.code, message: String((err as Error)?.message ?? err) };
}
