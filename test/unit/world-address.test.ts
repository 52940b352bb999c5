// World addresses from the host (docs/world.md): from the host, a world-internal address (198.18.0.0/15, a CIDR of the
// running world) is refused before anything is sent, naming the host URL `strait up`
// published for that server; other addresses pass.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { refuseWorldAddressFromHost } from '../../src/platform/cli-kit/index.js';

test('world-internal addresses are refused from the host with the host URL; others pass', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-addr-'));
  try {
    writeFileSync(
      join(dir, 'world.json'),
      JSON.stringify({
        control: 'http://127.0.0.1:18080',
        githost: 'http://127.0.0.1:13000',
        inWorld: { control: 'http://198.18.0.1:8080', githost: 'http://198.18.0.1:3000' },
        clusters: [{ clusterCIDR: '10.201.0.0/16', serviceCIDR: '100.201.0.0/16', nodeCIDR: '172.31.250.0/24' }],
      }),
    );
    const refused = (target: string): string => {
      try {
        refuseWorldAddressFromHost(target, dir);
      } catch (err) {
        return `${(err as { code: string }).code}: ${(err as Error).message}`;
      }
      return 'passed';
    };
    assert.match(
      refused('198.18.0.1:8080'),
      /^STRAIT_ERR_WORLD_ADDRESS: "198\.18\.0\.1:8080" is an address inside the local world.*from the host use http:\/\/127\.0\.0\.1:18080$/,
    );
    assert.match(refused('http://198.18.0.1:3000/alice/app.git'), /from the host use http:\/\/127\.0\.0\.1:13000$/);
    assert.match(refused('https://198.19.4.4'), /STRAIT_ERR_WORLD_ADDRESS: "198\.19\.4\.4".*'strait status' lists/);
    assert.match(refused('10.201.3.4:8080'), /STRAIT_ERR_WORLD_ADDRESS/);
    for (const ok of ['127.0.0.1:8080', 'http://localhost:8080', 'https://argocd.example.com', '198.20.0.1:8080', '10.202.0.1:80']) {
      assert.equal(refused(ok), 'passed', ok);
    }
    // without a world record, only the world's internet segment is known
    rmSync(join(dir, 'world.json'));
    assert.equal(refused('10.201.3.4:8080'), 'passed');
    assert.match(refused('198.18.0.1:8080'), /STRAIT_ERR_WORLD_ADDRESS/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
