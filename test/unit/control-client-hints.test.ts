// What `strait login`/`app`/`gpg` say about a connection that failed, in one line: a TLS
// client that met a plain-HTTP server is told to add --plaintext; a refused loopback address
// is pointed at where the local world's control API is now, naming `strait status`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connectHint } from '../../src/gitops/cli/index.js';

let dir: string;
const saved = process.env['STRAIT_STATE_DIR'];
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'strait-hints-'));
  writeFileSync(join(dir, 'world.json'), JSON.stringify({ control: 'http://127.0.0.1:40123' }));
  process.env['STRAIT_STATE_DIR'] = dir;
});
after(() => {
  if (saved === undefined) delete process.env['STRAIT_STATE_DIR'];
  else process.env['STRAIT_STATE_DIR'] = saved;
  rmSync(dir, { recursive: true, force: true });
});

const cases: { name: string; server: string; text: string; want: RegExp }[] = [
  {
    name: 'OpenSSL wrong version number (TLS to plain HTTP)',
    server: '127.0.0.1:8080',
    text: 'EPROTO 4087A0B1:error:0A00010B:SSL routines:ssl3_get_record:wrong version number',
    want: /^the server speaks plain HTTP, not TLS: add --plaintext \(strait login 127\.0\.0\.1:8080 --plaintext …\), not --insecure$/,
  },
  {
    name: 'refused where the world moved its control API',
    server: '127.0.0.1:8080',
    text: 'ECONNREFUSED connect ECONNREFUSED 127.0.0.1:8080',
    want: /^connection refused: the local world's control API is now http:\/\/127\.0\.0\.1:40123 \(`strait status` shows it\); log in there: strait login 127\.0\.0\.1:40123 --plaintext/,
  },
  {
    name: 'reset by another program that took the old port',
    server: '127.0.0.1:8080',
    text: 'ECONNRESET read ECONNRESET',
    want: /^connection reset: the local world's control API is now http:\/\/127\.0\.0\.1:40123 \(`strait status` shows it\)/,
  },
  {
    name: "reset at the world's own address: the error as it is",
    server: '127.0.0.1:40123',
    text: 'ECONNRESET read ECONNRESET',
    want: /^ECONNRESET read ECONNRESET$/,
  },
  {
    name: "refused at the world's own address",
    server: '127.0.0.1:40123',
    text: 'ECONNREFUSED',
    want: /^connection refused; is the control module running\? \(`strait status` shows where/,
  },
  { name: 'refused elsewhere', server: 'ctl.example:443', text: 'ECONNREFUSED', want: /`strait status`/ },
  { name: 'self-signed certificate', server: 'h:8443', text: 'self-signed certificate', want: /use --insecure for a self-signed certificate/ },
];
for (const c of cases) {
  test(`connect hint: ${c.name}`, () => assert.match(connectHint(c.server, c.text, c.text), c.want));
}
