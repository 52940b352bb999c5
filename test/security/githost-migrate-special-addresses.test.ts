// Server-side request forgery through repository migration: a clone address in any
// special-purpose range (or IPv4 carried in IPv6 that points at one) is refused before git
// runs, through the real /api/v1/repos/migrate of a server with allowLocalNetworks off.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api, startGithost, type Started } from '../helpers/githost.js';

let gh: Started;
before(async () => {
  gh = await startGithost({});
});
after(async () => {
  await gh.close();
});

const refused = 'You can not import from disallowed hosts.';

test('migration refuses clone addresses in special-purpose IPv6 ranges and IPv4 carried in IPv6', async () => {
  const hosts: [string, string][] = [
    ['site-local (deprecated)', '[fec0::1]'],
    ['IPv4-translated loopback', '[::ffff:0:127.0.0.1]'],
    ['IPv4-translated private', '[::ffff:0:a00:1]'],
    ['discard-only', '[100::1]'],
    ['TEREDO', '[2001::53aa:64c:1234:5678]'],
    ['IETF protocol assignments', '[2001:5::1]'],
    ['benchmarking', '[2001:2::1]'],
    ['documentation 3fff::/20', '[3fff::1]'],
    ['SRv6 SIDs', '[5f00::1]'],
    ['NAT64 local use', '[64:ff9b:1::a00:1]'],
    ['NAT64 well-known of loopback', '[64:ff9b::7f00:1]'],
    ['6to4 of private', '[2002:c0a8:101::1]'],
    ['IPv4-mapped of link-local', '[::ffff:169.254.169.254]'],
    ['unassigned outside 2000::/3', '[4000::1]'],
    ['IPv4 limited broadcast', '255.255.255.255'],
    ['IPv4 6to4 relay anycast', '192.88.99.1'],
    ['IPv4 NAT64 discovery', '192.0.0.170'],
  ];
  for (const [name, host] of hosts) {
    const r = await api(gh.url, 'POST', '/api/v1/repos/migrate', {
      token: gh.adminToken,
      body: { clone_addr: `http://${host}:9/x.git`, repo_name: 'x', uid: 1 },
    });
    assert.equal(r.status, 422, `${name}: ${JSON.stringify(r.body)}`);
    assert.equal((r.body as { message?: string }).message, refused, `${name} (${host})`);
  }
  assert.equal((await api(gh.url, 'GET', '/api/v1/repos/gitea_admin/x', { token: gh.adminToken })).status, 404);
});
