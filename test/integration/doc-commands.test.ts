// Every `strait …` command in the fenced `sh` blocks of README.md and docs/*.md, run as
// written against a world: through a `strait` on PATH (as `npm ci` links it), in a working
// directory with the files the docs assume (deployment.yaml, manifests/, mesh.yaml, …; alice.asc and
// the Application guestbook come from README.md's own `strait demo gitops --world`, run before them),
// with STRAIT_STATE_DIR naming the test's world. A documented command must exit 0 (or the
// exit the docs give it, in EXPECTED_EXIT). The lines that cannot run here are listed in
// EXCLUDED, each with its reason; a line there that the docs no longer have fails the test,
// so the list stays true. Placeholders are expanded: `[-o json]` runs without the optional
// part, `connections|endpoints|…` runs once per alternative, `a && b` runs as one command.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, root, upWorld, type TestWorld } from '../helpers/world.js';

interface DocCommand {
  file: string;
  line: number;
  text: string;
}

/** The text before a shell comment (` # …` outside quotes). */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/** Outside quotes: drop `[optional]` parts, split `a|b|c` tokens into one command each. */
function expand(text: string): string[] {
  const noOptional = text.replace(/\s\[[^\]'"]*\](?=\s|$)/g, '');
  const tokens = noOptional.split(/(\s+)/);
  const alt = tokens.findIndex((t) => /^[\w-]+(\|[\w-]+)+$/.test(t));
  if (alt < 0) return [noOptional];
  return (tokens[alt] as string).split('|').flatMap((choice) => expand(tokens.map((t, i) => (i === alt ? choice : t)).join('')));
}

export function docCommands(): DocCommand[] {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  const out: DocCommand[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    let inSh = false;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i] as string;
      if (/^```/.test(l)) {
        inSh = !inSh && /^```sh\s*$/.test(l);
        continue;
      }
      if (!inSh || !/^strait\s/.test(l)) continue;
      let text = l;
      const start = i + 1;
      while (/\\$/.test(text) && i + 1 < lines.length) text = `${text.slice(0, -1)} ${(lines[++i] as string).trim()}`;
      out.push({ file, line: start, text: stripComment(text).replace(/\s+/g, ' ') });
    }
  }
  return out;
}

/** Lines that cannot run against a test world, by their text (comments stripped), and why. */
const EXCLUDED: Record<string, string> = {
  'strait up --detach --world my.yaml --state-dir /tmp/w1':
    "starts a second world from the reader's own world file; the test's world is itself `strait up --detach`",
  'strait down --state-dir /tmp/w1': 'stops that second world',
  'strait up': "the test's world is already up (strait up --detach); a foreground world runs until Ctrl-C",
  'strait up --detach': "the test's world is this command, run before the others",
  'strait down': "stops the test's world: it runs last, as the cleanup",
  'strait up --fresh': "starts a world; the test's world is already up",
  'strait gpg get 4AEE18F83AFDEB23': 'the key ID is an example',
  'strait gpg rm 4AEE18F83AFDEB23': 'the key ID is an example',
  'strait deploy-broker --kubeconfig broker.kubeconfig': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait join broker-info.subm --kubeconfig cluster-a.kubeconfig --clusterid cluster-a --clustercidr 10.1.0.0/16 --servicecidr 100.1.0.0/16':
    'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait deploy-broker --kubeconfig kubeconfig --context a --cluster cluster-a': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait join broker-info.subm --kubeconfig kubeconfig --context b --clusterid cluster-b --clustercidr 10.20.0.0/16 --servicecidr 10.21.0.0/16':
    'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait show connections --kubeconfig kubeconfig --context a': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait show gateways --context b': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait export service echo -n default --kubeconfig kubeconfig --context b': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait show exports --kubeconfig kubeconfig --context b': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait show imports --kubeconfig kubeconfig --context a': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait verify --kubeconfig kubeconfig --context a': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait diagnose --kubeconfig kubeconfig --context b': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait unexport service echo -n default --kubeconfig kubeconfig --context b': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait show connections --kubeconfig cluster-a.kubeconfig': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait export service echo -n default --kubeconfig cluster-a.kubeconfig': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait verify --kubeconfig cluster-a.kubeconfig': 'Kubernetes mode: needs the kubeconfig of a real API server',
  'strait console --open': "would hand the URL to the desktop's browser (xdg-open); `strait console` without it is tested",
  'strait githost serve --port 3000': "a server that runs until interrupted (and the world's githost holds 127.0.0.1:3000 when it was free)",
};

/** Documented commands whose documented outcome is not exit 0. */
const EXPECTED_EXIT: Record<string, { code: number; why: string }> = {
  'strait mesh check -f test/mesh/manifests/world-mesh.yaml -f test/mesh/manifests/strict-no-dr.yaml': {
    code: 1,
    why: 'the README shows check finding the error in strict-no-dr.yaml',
  },
  'strait diagnose --cluster cluster-a --clusterid cluster-c --clustercidr 10.1.128.0/17 --servicecidr 100.3.0.0/16': {
    code: 1,
    why: 'docs/multicluster.md shows diagnose finding the overlap with cluster-a',
  },
};

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: strait/echo, ports: [{containerPort: 8080}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: web}, ports: [{port: 8080, targetPort: 8080}]}
`;

function run(cmd: string, env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', cmd], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

describe('every strait command of README.md and docs/ runs as written', () => {
  const all = docCommands();
  const seen = new Set<string>();
  const runnable: { doc: DocCommand; cmd: string }[] = [];
  for (const doc of all) {
    for (const part of doc.text.split(/\s+&&\s+/)) {
      if (!/^strait\s/.test(part) || EXCLUDED[part] !== undefined) continue;
      for (const cmd of expand(part)) {
        if (EXCLUDED[cmd] !== undefined || seen.has(cmd)) continue;
        seen.add(cmd);
        runnable.push({ doc, cmd });
      }
    }
  }

  test('the exclusions name lines the docs still have', () => {
    const texts = new Set(all.flatMap((d) => d.text.split(/\s+&&\s+/)).flatMap((p) => [p, ...expand(p)]));
    const stale = Object.keys(EXCLUDED).filter((t) => !texts.has(t));
    assert.deepEqual(stale, [], 'remove these from EXCLUDED');
    assert.ok(runnable.length >= 40, `${runnable.length} commands to run`);
  });

  let world: TestWorld;
  let cwd: string;
  let env: NodeJS.ProcessEnv;
  before(() => {
    world = upWorld();
    cwd = mkdtempSync(join(tmpdir(), 'strait-docs-'));
    const bin = join(cwd, '.bin');
    mkdirSync(bin);
    symlinkSync(BIN, join(bin, 'strait'));
    symlinkSync(join(root, 'test'), join(cwd, 'test'));
    writeFileSync(join(cwd, 'deployment.yaml'), DEPLOYMENT);
    mkdirSync(join(cwd, 'manifests'));
    writeFileSync(
      join(cwd, 'manifests', 'settings.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {color: blue}\n',
    );
    copyFileSync(join(root, 'test', 'mesh', 'manifests', 'world-mesh.yaml'), join(cwd, 'mesh.yaml'));
    copyFileSync(join(root, 'test', 'mesh', 'manifests', 'world-mesh.yaml'), join(cwd, 'world.yaml'));
    copyFileSync(join(root, 'test', 'mesh', 'manifests', 'strict.yaml'), join(cwd, 'strict.yaml'));
    env = {
      ...process.env,
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      STRAIT_STATE_DIR: world.stateDir,
      // sessions (strait login) stay in the test's directory
      XDG_CONFIG_HOME: join(cwd, '.config'),
    };
    // the admin password, as docs/gitops.md reads it
    const pw = spawnSync(
      'bash',
      ['-c', 'strait get secret argocd-secret -n argocd --cluster cluster-a -o json | jq -r \'.data["admin.password"]\' | base64 -d'],
      { cwd, env, encoding: 'utf8' },
    );
    env['PW'] = pw.stdout;
  });
  after(() => {
    world?.cleanup();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  for (const { doc, cmd } of runnable) {
    const want = EXPECTED_EXIT[cmd];
    test(`${doc.file}:${doc.line}: ${cmd}`, async () => {
      // the docs' 127.0.0.1:8080 is the world's control API on the host; "another free port
      // when 8080 is taken" (README), as strait status says
      const control = (JSON.parse(readFileSync(join(world.stateDir, 'world.json'), 'utf8')) as { control?: string }).control;
      const hostControl = control ? new URL(control).host : '127.0.0.1:8080';
      const r = await run(cmd.replaceAll('127.0.0.1:8080', hostControl), env, cwd, 120_000);
      assert.equal(r.code, want?.code ?? 0, `exit ${r.code}${want ? ` (docs: ${want.code}, ${want.why})` : ''}:\n${r.out.slice(-2000)}`);
    });
  }

  test('strait down (docs/world.md) stops the world', async () => {
    const r = await run('strait down', env, cwd, 30_000);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /world stopped/);
  });
});
