// strait login SERVER [--username U] [--password P] [--insecure] [--grpc-web] [--plaintext]
// Without --username or --password in a terminal, asks for them as argocd does (the
// password without echo); without a terminal they are required.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { saveSession, sessionCreate } from './control-client.js';

/** Ask one line on the terminal; `secret`: nothing is echoed. */
export async function ask(
  question: string,
  secret: boolean,
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  let muted = false;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input, output: sink, terminal: true });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, (answer) => resolve(answer));
      muted = secret;
    });
  } finally {
    rl.close();
    if (secret) output.write('\n');
  }
}

async function credential(given: string | undefined, flag: string, question: string, secret: boolean): Promise<string> {
  if (given !== undefined) return given;
  if (!process.stdin.isTTY) throw E.usage(`${flag} is required when there is no terminal to ask on`, { value: flag });
  return ask(question, secret);
}

export function registerLoginCommand(program: Command): void {
  program
    .command('login')
    .description('log in to a control module (GitOps API) and keep the session in the user config dir')
    .argument('<server>', 'control module address, e.g. 127.0.0.1:8080 or https://host:8080')
    .option('--username <name>', 'user name (admin); asked for in a terminal when left out')
    .option(
      '--password <password>',
      "the user's password as it is (admin's: the file `strait status` names, <state dir>/control/initial-admin-password); asked for in a terminal when left out",
    )
    .option('--insecure', 'skip verification of the server certificate (self-signed)', false)
    .option('--grpc-web', 'speak gRPC-web over HTTP/1.1 instead of gRPC over HTTP/2 (for proxies without HTTP/2)', false)
    .option('--grpc-web-root-path <path>', 'gRPC-web behind a path prefix (implies --grpc-web)')
    .option('--plaintext', 'the server speaks plain HTTP (started without TLS)', false)
    .action(
      async (
        server: string,
        opts: { username?: string; password?: string; insecure: boolean; grpcWeb: boolean; grpcWebRootPath?: string; plaintext: boolean },
      ) => {
        const username = await credential(opts.username, '--username', 'Username: ', false);
        const password = await credential(opts.password, '--password', 'Password: ', true);
        const token = await sessionCreate(
          {
            server,
            insecure: opts.insecure,
            plaintext: opts.plaintext,
            grpcWeb: opts.grpcWeb,
            ...(opts.grpcWebRootPath ? { grpcWebRootPath: opts.grpcWebRootPath } : {}),
          },
          username,
          password,
        );
        saveSession({ server, user: username, token, insecure: opts.insecure, plaintext: opts.plaintext, grpcWeb: opts.grpcWeb });
        console.log(`'${username}:login' logged in successfully`);
        console.log(`Context '${server}' updated`);
      },
    );
}
