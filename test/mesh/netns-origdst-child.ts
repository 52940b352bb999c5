// Runs inside a private network namespace (unshare --net), started by
// original-dst.test.ts: installs strait's sidecar redirect rules with nft, then reports
// what a redirected connection's SO_ORIGINAL_DST says and which traffic bypasses it.
import { execFile, execFileSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { originalDst, sidecarRedirectRules } from '../../src/mesh/dataplane/proxy/index.js';

const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
const run = (cmd: string, args: string[]) =>
  new Promise<{ exit: number; out: string }>((resolve) => {
    execFile(cmd, args, { timeout: 10_000 }, (err, stdout) => resolve({ exit: err ? ((err as unknown as { code: number }).code ?? -1) : 0, out: stdout }));
  });

async function main(): Promise<void> {
  sh('ip', 'link', 'set', 'lo', 'up');
  sh('ip', 'link', 'add', 'd0', 'type', 'veth', 'peer', 'name', 'd1');
  sh('ip', 'link', 'set', 'd1', 'up');
  sh('ip', 'addr', 'add', '10.99.0.1/24', 'dev', 'd0');
  sh('ip', 'link', 'set', 'd0', 'up');
  // an HTTP-ish responder on the outbound port that answers with the original destination
  const server = createServer((sock) => {
    let reply: string;
    try {
      const d = originalDst(sock);
      reply = `${d.host}:${d.port}`;
    } catch (err) {
      reply = `error ${(err as Error).message}`;
    }
    sock.once('data', () => sock.end(`HTTP/1.1 200 OK\r\nContent-Length: ${reply.length}\r\nConnection: close\r\n\r\n${reply}`));
  });
  await new Promise<void>((r) => server.listen(15001, '0.0.0.0', r));
  const port = (server.address() as AddressInfo).port;
  const rules = sidecarRedirectRules({ inboundPort: 15006, outboundPort: port, proxyUid: 1337, excludeOutboundPorts: [15020] });
  execFileSync('nft', ['-f', '-'], { input: rules });
  const redirected = await run('curl', ['-sS', '--max-time', '3', 'http://10.99.0.2:8080/']);
  const excludedPort = await run('curl', ['-sS', '--max-time', '1', 'http://10.99.0.2:15020/']);
  const proxyUid = await run('setpriv', ['--reuid', '1337', '--regid', '1337', '--clear-groups', 'curl', '-sS', '--max-time', '1', 'http://10.99.0.2:8080/']);
  // a connection that was not redirected has no NAT: SO_ORIGINAL_DST reports the address it reached
  const direct = await run('curl', ['-sS', '--max-time', '3', `http://127.0.0.1:${port}/`]);
  server.close();
  process.stdout.write(JSON.stringify({ rules, redirected, excludedPort, proxyUid, direct }));
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }));
  process.exitCode = 1;
});
