// A pod's own credentials (the in-cluster configuration) without @kubernetes/client-node: what
// its KubeConfig.loadFromDefault gives a pod with no $KUBECONFIG and no ~/.kube/config, and
// nothing else: the API server at $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the service
// account's CA and token file, both re-read every 60 s, not per request (bound tokens rotate;
// client-node and client-go re-read the token as often). Every strait pod of deploy/ is in this case. Loading client-node costs
// 1.0-1.4 s of CPU on this project's machine (its config module imports the whole generated API),
// which a rolling update's successor gateway paid between taking the node's ports and asking the
// API server for its Lease: 8 s without an active gateway on a busy node in the real clusters.
// Any other kubeconfig (files, exec plugins, auth providers) still goes through client-node.
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import type { RequestOptions } from 'node:https';
import type { Cluster, User } from '@kubernetes/client-node';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_REREAD_MS = 60_000;

/** What the store asks of a kubeconfig (client-node's KubeConfig has it, and so has InClusterConfig). */
export interface KubeConfigLike {
  getCurrentCluster(): Cluster | null;
  getCurrentUser(): User | null;
  getCurrentContext(): string;
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}

export class InClusterConfig implements KubeConfigLike {
  private readonly cluster: Cluster;
  private readonly user: User;
  private token: string | undefined;
  private ca: Buffer | undefined;
  /** when the token and CA were read (both again after TOKEN_REREAD_MS) */
  private readAt = 0;

  constructor(
    host: string,
    port: string,
    private readonly dir: string,
  ) {
    this.cluster = { name: 'inCluster', server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: join(dir, 'ca.crt'), skipTLSVerify: false };
    this.user = { name: 'inClusterUser' };
  }

  getCurrentCluster(): Cluster {
    return this.cluster;
  }
  getCurrentUser(): User {
    return this.user;
  }
  getCurrentContext(): string {
    return 'inClusterContext';
  }

  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    // read once a minute, not per request (KubeHttp keeps the first request's TLS options); a
    // missing CA fails the request naming the file, as client-node's does: never the system's CAs
    if (this.token === undefined || this.ca === undefined || Date.now() - this.readAt > TOKEN_REREAD_MS) {
      this.token = readFileSync(join(this.dir, 'token'), 'utf8');
      this.ca = readFileSync(join(this.dir, 'ca.crt'));
      this.readAt = Date.now();
    }
    opts.ca = this.ca;
    opts.headers = { ...(opts.headers as Record<string, string> | undefined), Authorization: `Bearer ${this.token}` };
  }
}

/**
 * The in-cluster configuration when client-node's loadFromDefault would take it: no
 * $KUBECONFIG, no ~/.kube/config, and the service account's token file present; else undefined.
 */
export function inClusterConfig(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): InClusterConfig | undefined {
  if ((env['KUBECONFIG'] ?? '') !== '') return undefined;
  const home = env['HOME'];
  if (home && existsSync(join(home, '.kube', 'config'))) return undefined;
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port || !existsSync(join(dir, 'token'))) return undefined;
  // client-node makes these ports plain HTTP and then refuses to send the token over them: its
  // refusal, not a token in clear
  if (port === '80' || port === '8080' || port === '8001') return undefined;
  return new InClusterConfig(host, port, dir);
}
