// Every state-changing route of the port that serves the console (the control module's API
// port), in one place: what a page holding the session cookie (argocd.token) can ask to
// change. Each is covered by the front door's check of cookie writes
// (src/platform/http/browser-writes.ts: Origin must be the serving origin, `null` refused,
// JSON required) and by test/security/console-browser-writes.test.ts, which walks this list
// and fails on a state-changing route of the port that is missing from it.
//
// The RPC paths (gRPC, gRPC-web, Connect: POST /<service>/<method>) are not here: they do not
// take the cookie (src/gitops/control/argocd-rpc.ts), only metadata `token` or Bearer.

export interface BrowserWriteRoute {
  method: 'POST' | 'PUT' | 'DELETE';
  /** path template as the server lists it ({name}: one segment) */
  path: string;
  /** what the cookie does there: `session` (the route is authorized by it), `ignored` (the route takes no session) */
  cookie: 'session' | 'ignored';
  why: string;
}

export const BROWSER_WRITE_ROUTES: readonly BrowserWriteRoute[] = [
  // the control API (src/gitops/control/api-server.ts)
  { method: 'POST', path: '/api/v1/session', cookie: 'ignored', why: 'log in (sets the cookie)' },
  { method: 'DELETE', path: '/api/v1/session', cookie: 'ignored', why: 'log out (clears the cookie)' },
  { method: 'POST', path: '/api/webhook', cookie: 'ignored', why: 'a push notification (its own secret)' },
  { method: 'POST', path: '/api/v1/gpgkeys', cookie: 'session', why: 'trust a GnuPG key' },
  { method: 'DELETE', path: '/api/v1/gpgkeys', cookie: 'session', why: 'distrust a GnuPG key' },
  { method: 'DELETE', path: '/api/v1/gpgkeys/{keyID}', cookie: 'session', why: 'distrust a GnuPG key' },
  { method: 'POST', path: '/api/v1/sshsigners', cookie: 'session', why: 'trust an SSH signer' },
  { method: 'DELETE', path: '/api/v1/sshsigners', cookie: 'session', why: 'distrust an SSH signer' },
  { method: 'POST', path: '/api/v1/applications/{name}/sync', cookie: 'session', why: 'sync an Application' },
  { method: 'POST', path: '/api/v1/projects', cookie: 'session', why: 'create or replace an AppProject (its sourceIntegrity)' },
  { method: 'PUT', path: '/api/v1/projects/{name}', cookie: 'session', why: 'change an AppProject (its sourceIntegrity)' },
  // the console's store API (src/console/server/mount.ts over src/platform/store/api/server.ts)
  { method: 'POST', path: '/v1/clusters/{cluster}/apply', cookie: 'session', why: 'apply a ServiceExport or PeerAuthentication' },
  { method: 'PUT', path: '/v1/clusters/{cluster}/update', cookie: 'session', why: 'refused by the console (store API verb)' },
  { method: 'PUT', path: '/v1/clusters/{cluster}/status', cookie: 'session', why: 'refused by the console (store API verb)' },
  { method: 'DELETE', path: '/v1/clusters/{cluster}/object', cookie: 'session', why: 'delete a ServiceExport or PeerAuthentication' },
  { method: 'POST', path: '/v1/clusters/{cluster}/events', cookie: 'session', why: 'refused by the console (store API verb)' },
];
