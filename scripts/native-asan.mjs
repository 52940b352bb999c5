#!/usr/bin/env node
// The C addon under AddressSanitizer and UndefinedBehaviorSanitizer: builds native/ once
// with -fsanitize=address,undefined into native/build-asan/ (never touching the normal
// build in native/build/), then runs the compiled tests that drive the addon against it
// (STRAIT_NATIVE_ADDON, read by src/platform/native/index.ts), with gcc's libasan
// preloaded into node (node itself is not instrumented). Any sanitizer report fails the run.
//   node scripts/native-asan.mjs               build (when stale) and run the default tests
//   node scripts/native-asan.mjs --build-only  build only
//   node scripts/native-asan.mjs <filter...>   run these test files (run-tests.mjs filters)
// Needs dist/ (node scripts/build.mjs) and gcc's libasan/libubsan (libasan8, libubsan1).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'native', 'build-asan');
const addon = join(dir, 'build', 'Release', 'strait_native.node');
// native/binding.gyp is plain JSON (no gyp comments): read as such
const binding = JSON.parse(readFileSync(join(root, 'native', 'binding.gyp'), 'utf8'));

// the tests that load the addon: argument checks, TUN/UDP/pump data paths, the gateway's native
// sessions and data path thread (differential and fuzz), the TLS record
// relay against two peers and its fuzz test, namespaces, SO_ORIGINAL_DST (not unit/tun-no-ipv6:
// its shell gives a node child 2 s to open the device, too short for node under libasan)
const DEFAULT_TESTS = [
  'unit/native-args',
  'unit/agent-pump',
  'unit/udp-batch',
  'unit/tunnel-fragments',
  'unit/tunnel-native-session',
  'unit/gateway-native-path',
  'mesh/tls-relay-',
  'security/mesh-tls-relay-fuzz',
  'netns-listen',
  'original-dst',
];
// tools the tests spawn inherit LD_PRELOAD; curl with libasan preloaded hangs in a futex, so
// these run from a PATH directory of shims that drop LD_PRELOAD first
const NO_ASAN_TOOLS = ['curl'];

function lib(name) {
  const p = execFileSync('gcc', [`-print-file-name=${name}`], { encoding: 'utf8' }).trim();
  if (!p.startsWith('/') || !existsSync(p)) {
    console.error(`native-asan: gcc has no ${name} (Debian: libasan8 / libubsan1; scripts/setup-system.sh installs them)`);
    process.exit(1);
  }
  return p;
}

function newest(d) {
  return Math.max(...readdirSync(d).map((f) => statSync(join(d, f)).mtimeMs));
}

function build() {
  const src = join(root, 'native', 'src');
  const gyp = join(root, 'native', 'binding.gyp');
  if (existsSync(addon) && statSync(addon).mtimeMs >= Math.max(newest(src), statSync(gyp).mtimeMs, statSync(fileURLToPath(import.meta.url)).mtimeMs))
    return false;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  symlinkSync(src, join(dir, 'src'));
  // the normal target, with the sanitizers, frame pointers and no optimisation that hides reports
  const flags = ['-fsanitize=address,undefined', '-fno-omit-frame-pointer', '-fno-sanitize-recover=undefined', '-g', '-O1'];
  const targets = binding.targets.map((t) => ({
    ...t,
    cflags: [...(t.cflags ?? []).filter((f) => !f.startsWith('-O')), ...flags],
    ldflags: [...(t.ldflags ?? []), '-fsanitize=address,undefined'],
  }));
  writeFileSync(join(dir, 'binding.gyp'), JSON.stringify({ targets }, null, 2));
  const nodeGyp = join(root, 'node_modules', '.bin', 'node-gyp');
  execFileSync(nodeGyp, ['rebuild', '--loglevel=error', '--nodedir=/usr', '--directory', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  return true;
}

const args = process.argv.slice(2);
const asan = lib('libasan.so');
lib('libubsan.so');
const t0 = Date.now();
const built = build();
console.error(`native-asan: ${built ? 'built' : 'up to date'}: ${addon} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
if (args.includes('--build-only')) process.exit(0);

const filters = args.length > 0 ? args : DEFAULT_TESTS;
const shims = join(dir, 'bin');
mkdirSync(shims, { recursive: true });
for (const tool of NO_ASAN_TOOLS) {
  const real = execFileSync('sh', ['-c', `command -v ${tool} || true`], { encoding: 'utf8' }).trim();
  if (real) writeFileSync(join(shims, tool), `#!/bin/sh\nunset LD_PRELOAD\nexec ${real} "$@"\n`, { mode: 0o755 });
}
const env = {
  ...process.env,
  PATH: `${shims}:${process.env['PATH'] ?? ''}`,
  STRAIT_NATIVE_ADDON: addon,
  LD_PRELOAD: [asan, process.env['LD_PRELOAD']].filter(Boolean).join(' '),
  // node is not instrumented and keeps memory until exit: no leak report, no new/free
  // mismatch report from its own allocations; any other report ends the process non-zero
  ASAN_OPTIONS: 'detect_leaks=0:alloc_dealloc_mismatch=0:abort_on_error=0:exitcode=86:halt_on_error=1',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1:exitcode=87',
};
const r = spawnSync(process.execPath, [join(root, 'scripts', 'run-tests.mjs'), ...filters], { cwd: root, stdio: 'inherit', env });
process.exit(r.status ?? 1);
