// Every call the console makes: the control module's API (Argo CD's REST shapes: session,
// applications, projects, GnuPG keys) and the store API (the same paths the CLI's store
// client calls), all on the page's own origin, with the session cookie the login set.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Obj = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
    ownerReferences?: { kind: string; name: string }[];
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
};

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    // the control API answers {error, code, message} (code: gRPC status), the store API {code, message}
    const message = typeof parsed['message'] === 'string' ? parsed['message'] : `HTTP ${res.status}`;
    throw new ApiError(res.status, String(parsed['code'] ?? res.status), message);
  }
  return parsed as T;
}

const q = (o: Record<string, string | undefined>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v !== undefined) p.set(k, v);
  return p.toString();
};
const enc = encodeURIComponent;

export const login = (username: string, password: string) => call<{ token: string }>('POST', '/api/v1/session', { username, password });
export const logout = () => call<Record<string, never>>('DELETE', '/api/v1/session');
export const userInfo = () => call<{ loggedIn: boolean; username?: string }>('GET', '/api/v1/session/userinfo');
export const storeClusters = () => call<{ clusters: string[] }>('GET', '/v1/clusters');
export const applyObject = (cluster: string, obj: Obj) => call<Obj>('POST', `/v1/clusters/${enc(cluster)}/apply?${q({ fieldManager: 'strait-console' })}`, obj);
export const deleteObject = (cluster: string, kind: { apiVersion: string; kind: string }, name: string, namespace?: string) =>
  call<{ deleted: boolean }>('DELETE', `/v1/clusters/${enc(cluster)}/object?${q({ apiVersion: kind.apiVersion, kind: kind.kind, name, namespace })}`);
export const syncApplication = (name: string) => call<Obj>('POST', `/api/v1/applications/${enc(name)}/sync`, {});
export const refreshApplication = (name: string) => call<Obj>('GET', `/api/v1/applications/${enc(name)}?refresh=normal`);
export interface GpgKey {
  keyID: string;
  fingerprint?: string;
  owner?: string;
  trust?: string;
  subType?: string;
}
export const gpgKeys = () => call<{ items: GpgKey[] | null }>('GET', '/api/v1/gpgkeys');
