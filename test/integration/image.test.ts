// The container image (docs/kubernetes.md): the Dockerfile. Static checks (multi-stage, every COPY source exists in the
// build context and is not excluded by .dockerignore, the addon is built inside, the
// runtime runs as a numeric non-root user), then a real build with buildah
// (test/image/build-image.sh: vfs storage, chroot isolation, local base images from
// debootstrap + this machine's Node, npm ci --offline) and `strait --version` run in it.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

interface Stage {
  from: string;
  name: string;
  lines: string[];
}
function stages(text: string): Stage[] {
  const joined = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const out: Stage[] = [];
  for (const l of joined) {
    const m = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(l);
    if (m) out.push({ from: m[1]!, name: m[2] ?? '', lines: [] });
    else out.at(-1)?.lines.push(l);
  }
  return out;
}

describe('Dockerfile (static)', () => {
  const st = stages(dockerfile);
  test('multi-stage: a build stage with the toolchain, a runtime stage from a slim base', () => {
    assert.deepEqual(
      st.map((s) => s.name),
      ['build', 'runtime'],
    );
    assert.match(dockerfile, /^ARG RUNTIME_IMAGE=node:20-bookworm-slim$/m);
    assert.ok(
      st[0]!.lines.some((l) => /node-gyp rebuild .*--directory native/.test(l)),
      'the C addon is built inside the build stage',
    );
    assert.ok(!st[1]!.lines.some((l) => /build-essential|npm (ci|install)|node-gyp/.test(l)), 'no toolchain in the runtime stage');
  });

  test("the image is stamped with package.json's version: the build refuses another VERSION, the runtime stage labels it", () => {
    assert.match(st[0]!.lines.join('\n'), /ARG VERSION/);
    assert.match(st[0]!.lines.join('\n'), /if \[ "\$VERSION" != "\$want" \]; then echo .* exit 1; fi/);
    assert.match(st[1]!.lines.join('\n'), /LABEL .*org\.opencontainers\.image\.version=\$\{VERSION\}/);
  });

  test('every COPY source from the context exists and is not excluded by .dockerignore', () => {
    const wrong: string[] = [];
    for (const s of st) {
      for (const l of s.lines) {
        const m = /^COPY\s+(?!--from)(.+)$/.exec(l);
        if (!m) continue;
        const parts = m[1]!.split(/\s+/);
        for (const src of parts.slice(0, -1)) {
          if (!existsSync(join(root, src))) wrong.push(`${src}: missing`);
          if (ignored.some((p) => src === p || src.startsWith(`${p}/`))) wrong.push(`${src}: excluded by .dockerignore`);
        }
      }
    }
    assert.deepEqual(wrong, []);
    for (const p of ['node_modules', 'dist', '.git', 'native/build']) assert.ok(ignored.includes(p), `.dockerignore leaves out ${p}`);
  });

  test('the runtime copies only what the build stage produced, and runs as a numeric non-root user', () => {
    const rt = st[1]!;
    const froms = rt.lines.filter((l) => l.startsWith('COPY --from=')).map((l) => l.split(/\s+/)[2]!);
    assert.deepEqual(
      froms.filter((p) => !p.startsWith('/src/')),
      [],
    );
    for (const p of ['/src/dist/src', '/src/dist/daemon', '/src/dist/agents', '/src/native/build/Release/strait_native.node']) assert.ok(froms.includes(p), p);
    const user = rt.lines.filter((l) => l.startsWith('USER ')).at(-1);
    assert.match(user ?? '', /^USER [1-9][0-9]*:[1-9][0-9]*$/, 'numeric uid:gid so runAsNonRoot can check it');
    assert.match(dockerfile, /^ENTRYPOINT \["node"\]$/m);
  });
});

function buildSkip(): string | undefined {
  for (const t of ['buildah', 'debootstrap']) {
    if (spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0) return `'${t}' is not installed (scripts/setup-system.sh installs it)`;
  }
  if (process.getuid?.() !== 0) return 'buildah with chroot isolation needs root';
  return undefined;
}

function script(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn('bash', [join(root, 'test', 'image', 'build-image.sh'), ...args], {
      env: { ...process.env, STRAIT_IMAGE_REBUILD: process.env['STRAIT_IMAGE_REBUILD'] ?? 'dockerfile' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    c.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    c.on('close', (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });
}

describe('Dockerfile (built with buildah)', () => {
  const why = buildSkip();
  if (why && process.env['CI'] === 'true') throw new Error(`CI=true: the image test must run, but ${why}`);
  test('the image builds and `strait --version` runs in it, as uid 10001, with the addon loadable', { skip: why, timeout: 3_600_000 }, async () => {
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    const t0 = Date.now();
    // one container: the CLI, then the daemons' addon, the user and the working directory
    const probe = "import('/opt/strait/dist/src/platform/native/index.js').then((m) => { m.native(); console.log(process.getuid() + ' ' + process.cwd()); })";
    const r = await script(['--sh', `node bin/strait.js --version && node --input-type=module -e "${probe}"`]);
    assert.equal(r.status, 0, r.stderr);
    console.log(`# image build (or cache) + run: ${Date.now() - t0} ms ${r.stderr.trim().replace(/\n/g, ' | ')}`);
    const [v, u] = r.stdout.trim().split('\n');
    assert.equal(v, version);
    assert.equal(u, '10001 /opt/strait');
    // the version stamped on the image (its OCI label) is package.json's, as the chart's appVersion
    const labels = await script(['--labels']);
    assert.equal(labels.status, 0, labels.stderr);
    assert.equal((JSON.parse(labels.stdout) as Record<string, string>)['org.opencontainers.image.version'], version);
  });
});
