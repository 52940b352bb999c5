// strait login SERVER --username admin --password P [--insecure] [--grpc-web] [--plaintext]
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { apiRequest, saveSession } from './control-client.js';

export function registerLoginCommand(program: Command): void {
  program
    .command('login')
    .description('log in to a control module (GitOps API) and keep the session in the user config dir')
    .argument('<server>', 'control module address, e.g. 127.0.0.1:8080 or https://host:8080')
    .requiredOption('--username <name>', 'user name (admin)')
    .requiredOption('--password <password>', "the admin password (Secret argocd-secret, field admin.password, base64)")
    .option('--insecure', 'skip verification of the server certificate (self-signed)', false)
    .option('--grpc-web', 'accepted for compatibility with argocd; strait uses JSON over HTTP/1.1', false)
    .option('--plaintext', 'the server speaks plain HTTP (started without TLS)', false)
    .action(async (server: string, opts: { username: string; password: string; insecure: boolean; grpcWeb: boolean; plaintext: boolean }) => {
      const r = await apiRequest({ server, insecure: opts.insecure, plaintext: opts.plaintext }, 'POST', '/api/v1/session',
        { username: opts.username, password: opts.password });
      if (r.status === 401) throw E.loginFailed(opts.username);
      const token = (r.body as { token?: unknown }).token;
      if (r.status !== 200 || typeof token !== 'string') throw E.controlApi(server, `login answered HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`);
      saveSession({ server, user: opts.username, token, insecure: opts.insecure, plaintext: opts.plaintext, grpcWeb: opts.grpcWeb });
      console.log(`'${opts.username}:login' logged in successfully`);
      console.log(`Context '${server}' updated`);
    });
}
