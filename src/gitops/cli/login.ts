// strait login SERVER --username admin --password P [--insecure] [--grpc-web] [--plaintext]
import type { Command } from 'commander';
import { saveSession, sessionCreate } from './control-client.js';

export function registerLoginCommand(program: Command): void {
  program
    .command('login')
    .description('log in to a control module (GitOps API) and keep the session in the user config dir')
    .argument('<server>', 'control module address, e.g. 127.0.0.1:8080 or https://host:8080')
    .requiredOption('--username <name>', 'user name (admin)')
    .requiredOption('--password <password>', "the admin password (Secret argocd-secret, field admin.password, base64)")
    .option('--insecure', 'skip verification of the server certificate (self-signed)', false)
    .option('--grpc-web', 'speak gRPC-web over HTTP/1.1 instead of gRPC over HTTP/2 (for proxies without HTTP/2)', false)
    .option('--grpc-web-root-path <path>', 'gRPC-web behind a path prefix (implies --grpc-web)')
    .option('--plaintext', 'the server speaks plain HTTP (started without TLS)', false)
    .action(async (server: string, opts: { username: string; password: string; insecure: boolean; grpcWeb: boolean; grpcWebRootPath?: string; plaintext: boolean }) => {
      const token = await sessionCreate({ server, insecure: opts.insecure, plaintext: opts.plaintext, grpcWeb: opts.grpcWeb, ...(opts.grpcWebRootPath ? { grpcWebRootPath: opts.grpcWebRootPath } : {}) },
        opts.username, opts.password);
      saveSession({ server, user: opts.username, token, insecure: opts.insecure, plaintext: opts.plaintext, grpcWeb: opts.grpcWeb });
      console.log(`'${opts.username}:login' logged in successfully`);
      console.log(`Context '${server}' updated`);
    });
}
