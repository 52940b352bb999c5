// The MCS conformance suite's report as mcs-conformance.test.ts reads it, from the real suite
// binary (test/k8s/build-mcs-conformance.sh) with no cluster: a dry run (Ginkgo lists every
// spec, runs none, reports each as passed) gives the suite's specs by name and label, and
// every spec the committed threshold lists must be one of them (a spec renamed upstream
// would otherwise only show in the real-cluster run); a run whose API server is a closed
// loopback port fails in BeforeSuite, reports no spec, and the threshold reads every listed
// spec as not run. No clusters: it runs wherever the binary is built (skipped, with the
// reason, elsewhere).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareThreshold, groupOf, specsOf, suiteBinary } from './mcs-conformance-report.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
/** the suite binary's path, or why there is none here (no mcs-api snapshot beside the checkout: the build script says so) */
function locate(): { bin: string; why?: string } {
  try {
    return { bin: suiteBinary(root) };
  } catch (err) {
    // exit 3: the script's "no mcs-api snapshot here"; anything else is a broken script, not a reason to skip
    const e = err as { status?: number; stderr?: string };
    if (e.status !== 3) throw err;
    return { bin: '', why: e.stderr?.trim() || String(err) };
  }
}
const { bin, why } = locate();

/** a loopback port nothing listens on (bound, then closed) */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const expected = (): string[] =>
  (JSON.parse(readFileSync(join(root, 'test', 'k8s-real', 'mcs-conformance-expected.json'), 'utf8')) as { mustPass: string[] }).mustPass;
const opts = {
  skip:
    why !== undefined
      ? `the MCS conformance suite cannot be located here: ${why}`
      : existsSync(bin)
        ? false
        : `the MCS conformance suite is not built (${bin}; test/k8s/build-mcs-conformance.sh)`,
  timeout: 120_000,
};

/** Run the suite binary in a temporary directory with these flags; its exit status and parsed JSON report. */
function runSuite(flags: string[]): { status: number | null; output: string } & ReturnType<typeof specsOf> {
  const dir = mkdtempSync(join(tmpdir(), 'strait-mcs-report-'));
  try {
    const r = spawnSync(bin, [...flags, `--ginkgo.json-report=${join(dir, 'report.json')}`, '--ginkgo.no-color'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 100_000,
    });
    const output = `${r.stdout}${r.stderr}`;
    assert.ok(existsSync(join(dir, 'report.json')), `no JSON report (exit ${r.status}): ${output.slice(-2000)}`);
    // the suite's own report is written beside it, whatever the outcome
    assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /MCS Conformance Report/);
    return { status: r.status, output, ...specsOf(JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'))) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the suite dry-run: every spec by name, Required or Optional; every spec of the committed threshold is one of them', opts, () => {
  const { status, specs, suiteFailures } = runSuite(['--ginkgo.dry-run']);
  assert.equal(status, 0);
  assert.deepEqual(suiteFailures, []);
  assert.ok(specs.length >= 20, `the suite's specs: ${specs.length}`);
  assert.equal(new Set(specs.map((s) => s.name)).size, specs.length, 'spec names are unique');
  assert.deepEqual(
    specs.filter((s) => groupOf(s) === '-').map((s) => s.name),
    [],
    'every spec is Required or Optional',
  );
  const names = new Set(specs.map((s) => s.name));
  assert.deepEqual(
    expected().filter((n) => !names.has(n)),
    [],
    'every spec the threshold lists is a spec of the suite',
  );
  console.log(
    `${specs.length} specs (Required ${specs.filter((s) => groupOf(s) === 'Required').length}, Optional ${specs.filter((s) => groupOf(s) === 'Optional').length}); threshold: ${expected().length}`,
  );
});

test('the suite with no API server: BeforeSuite fails naming the context, no spec runs, every listed spec reads as not run', opts, async () => {
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'strait-mcs-kc-'));
  try {
    const kc = join(dir, 'kubeconfig');
    writeFileSync(
      kc,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'nowhere', cluster: { server: `http://127.0.0.1:${port}` } }],
        users: [{ name: 'nobody', user: {} }],
        contexts: [{ name: 'nowhere', context: { cluster: 'nowhere', user: 'nobody' } }],
        'current-context': 'nowhere',
      }),
    );
    const { status, output, specs, suiteFailures } = runSuite([`--kubeconfig=${kc}`, '--contexts=nowhere']);
    assert.notEqual(status, 0, 'the suite fails');
    assert.match(output, /Ran 0 of [0-9]+ Specs/);
    assert.deepEqual(specs, []);
    assert.match(suiteFailures.join('\n'), /^BeforeSuite failed: .*error listing ServiceExports on context nowhere/s);
    const { regressions, newlyPassing } = compareThreshold(specs, expected());
    assert.deepEqual(newlyPassing, []);
    assert.deepEqual(
      regressions,
      expected().map((n) => `${n}: not run (not in the report)`),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
