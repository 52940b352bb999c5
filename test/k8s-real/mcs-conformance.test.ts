// The Kubernetes SIG-Multicluster MCS API conformance suite (kubernetes-sigs/mcs-api
// `conformance/`, unchanged, built by test/k8s/build-mcs-conformance.sh) against strait's own
// deploy/ in the two real clusters of the real-cluster suite (harness.ts useClusters: the one
// bring-up every real-cluster file shares; deploy.ts deployStrait). The suite creates its own
// namespaces, Services, Deployments, StatefulSets and ServiceExports in both clusters and
// probes them with real traffic from its request pods (nslookup, nc); its pods use the images
// docker.io/alpine/socat:1.7.4.4 and docker.io/nicolaka/netshoot:v0.15, which
// test/k8s/build-images.sh builds locally and test/k8s/clusters.sh imports into every node.
//
// The run is bounded (SUITE_TIMEOUT_S, Ginkgo's own --ginkgo.timeout, then a kill), its Ginkgo
// JSON report is parsed, every spec is printed with PASS/FAIL/SKIP and the totals, and the
// committed threshold test/k8s-real/mcs-conformance-expected.json is enforced: every spec it
// lists must pass (a listed spec that fails, or that the suite no longer has, fails this
// test); a spec that passes and is not listed is printed so the threshold can be raised.
// The suite's own report (report.html, report.yaml), the Ginkgo JSON and JUnit reports and
// its log are kept in $STRAIT_ARTIFACTS/mcs-conformance (default: artifacts/ in the checkout),
// printed at the end.
//
// Gate: as two-clusters.test.ts, and the suite binary and its two images built
// (test/k8s/build-mcs-conformance.sh; test/k8s/build-images.sh with socat and nc.openbsd
// installed: scripts/setup-system.sh). STRAIT_K8S_REAL=required fails where it would skip.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { deployStrait } from './deploy.js';
import { clusters, gate, kubeconfig, kubectlRun, root, useClusters } from './harness.js';
import { compareThreshold, groupOf, type SpecResult, specsOf, suiteBinary } from './mcs-conformance-report.js';

/** Ginkgo's own bound on the whole suite (it then reports what ran); the process is killed 120 s later */
const SUITE_TIMEOUT_S = 2400;
/** runs of a spec that failed, in all (Ginkgo's --flake-attempts; docs/multicluster.md) */
const FLAKE_ATTEMPTS = 2;
const CONTEXTS = ['cluster-a', 'cluster-b'] as const;
const expectedFile = join(root, 'test', 'k8s-real', 'mcs-conformance-expected.json');
const artifacts = join(process.env['STRAIT_ARTIFACTS'] ?? join(root, 'artifacts'), 'mcs-conformance');

/** Why the conformance suite cannot run here beyond the real-cluster gate (undefined: it can). */
function conformanceGate(): string | undefined {
  let bin: string;
  try {
    bin = suiteBinary(root);
  } catch (err) {
    return `test/k8s/build-mcs-conformance.sh --print failed: ${String(err)}`;
  }
  if (!existsSync(bin)) return `the MCS conformance suite is not built (${bin}; test/k8s/build-mcs-conformance.sh)`;
  const images = join(execFileSync(join(root, 'test', 'k8s', 'build-apiserver.sh'), ['--print'], { encoding: 'utf8' }).trim(), 'images');
  for (const i of ['mcs-socat', 'mcs-netshoot']) {
    if (!existsSync(join(images, `${i}.tar`)))
      return `the ${i} image is not built (test/k8s/build-images.sh; it needs socat and nc.openbsd: scripts/setup-system.sh)`;
  }
  return undefined;
}

const skip = gate() ?? conformanceGate();
// STRAIT_K8S_REAL=required (test/k8s-real/ci.sh, in .ci/run): what would skip fails instead
if (skip && process.env['STRAIT_K8S_REAL'] === 'required') test('the MCS conformance suite can run here (STRAIT_K8S_REAL=required)', () => assert.fail(skip));

const work = mkdtempSync(join(tmpdir(), 'strait-k8s-mcs-'));
let clustersInUse: { release(): void } | undefined;
const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

before(async () => {
  if (skip) return;
  console.log(`load average at start: ${load()}`);
  clustersInUse = await useClusters();
});

after(() => {
  if (!skip) {
    // the suite deletes its namespaces after each spec; a run cut short leaves some: the
    // clusters are shared with the next file
    for (const L of ['a', 'b']) {
      const ns = kubectlRun(L, 'get', 'namespaces', '-o', 'name').stdout.match(/^namespace\/mcs-conformance-[0-9]+$/gm) ?? [];
      if (ns.length > 0) kubectlRun(L, 'delete', '--wait=false', ...ns);
    }
    console.log(`load average at end: ${load()}`);
  }
  clustersInUse?.release();
  rmSync(work, { recursive: true, force: true });
});

/** One kubeconfig with a context per cluster (clusters.sh names cluster, user and context cluster-L apart). */
function mergedKubeconfig(file: string): void {
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as unknown[],
    users: [] as unknown[],
    contexts: [] as unknown[],
    'current-context': CONTEXTS[0],
  };
  for (const L of ['a', 'b']) {
    const kc = parse(readFileSync(kubeconfig(L), 'utf8')) as { clusters: unknown[]; users: unknown[]; contexts: { name: string }[] };
    assert.ok(
      kc.contexts.some((c) => c.name === `cluster-${L}`),
      `${kubeconfig(L)} has a context cluster-${L}`,
    );
    merged.clusters.push(...kc.clusters);
    merged.users.push(...kc.users);
    merged.contexts.push(...kc.contexts);
  }
  writeFileSync(file, JSON.stringify(merged), { mode: 0o600 });
}

/** Run the suite binary in the link namespace (where the API servers are), bounded; its exit code. */
async function runSuite(bin: string, kc: string): Promise<{ code: number | null; seconds: number }> {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const args = [
    'exec',
    bin,
    `--kubeconfig=${kc}`,
    `--contexts=${CONTEXTS.join(',')}`,
    '--dns-domain=clusterset.local',
    '--organization=strait',
    '--project=strait',
    `--version=${version}`,
    '--url=docs/multicluster.md',
    `--ginkgo.json-report=${join(artifacts, 'ginkgo-report.json')}`,
    `--ginkgo.junit-report=${join(artifacts, 'junit.xml')}`,
    `--ginkgo.timeout=${SUITE_TIMEOUT_S}s`,
    '--ginkgo.no-color',
    '--ginkgo.v',
    // a spec that fails runs once more, and is printed as passing only on its second attempt:
    // the clusters share 2 cores with everything else, and an exec into the request pod that
    // failed for 20 s (the output "") once failed a spec that passes in every other run
    `--ginkgo.flake-attempts=${FLAKE_ATTEMPTS}`,
  ];
  const log = createWriteStream(join(artifacts, 'suite.log'));
  const t0 = Date.now();
  // the suite writes report.html and report.yaml into its working directory
  const p = spawn(clusters, args, { cwd: artifacts, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout.pipe(log, { end: false });
  p.stderr.pipe(log, { end: false });
  const killer = setTimeout(() => p.kill('SIGKILL'), (SUITE_TIMEOUT_S + 120) * 1000);
  const code = await new Promise<number | null>((resolve) => p.once('close', (c) => resolve(c)));
  clearTimeout(killer);
  await new Promise<void>((resolve) => log.end(resolve));
  return { code, seconds: Math.round((Date.now() - t0) / 1000) };
}

test('the MCS API conformance suite against strait in the two real clusters: every spec of the committed threshold passes', {
  skip: skip ?? false,
  timeout: (SUITE_TIMEOUT_S + 900 + 300) * 1000,
}, async () => {
  await deployStrait(work);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  const kc = join(work, 'kubeconfig');
  mergedKubeconfig(kc);
  const bin = suiteBinary(root);
  console.log(`running ${bin} against ${CONTEXTS.join(', ')} (at most ${SUITE_TIMEOUT_S} s)`);
  const { code, seconds } = await runSuite(bin, kc);
  const logText = readFileSync(join(artifacts, 'suite.log'), 'utf8');
  // Ginkgo's own summary lines ("Ran 27 of 27 Specs in ...", "FAIL! -- 10 Passed | 17 Failed ...")
  const summary = logText.split('\n').filter((l) => /^Ran [0-9]+ of [0-9]+ Specs|^(SUCCESS|FAIL)! |Passed \| [0-9]+ Failed/.test(l));
  console.log(`suite exited ${code} after ${seconds} s (load ${load()}); Ginkgo: ${summary.join(' / ') || '(no summary line)'}`);
  const reportFile = join(artifacts, 'ginkgo-report.json');
  assert.ok(existsSync(reportFile), `the suite wrote no JSON report (exit ${code}); the end of its log:\n${logText.slice(-4000)}`);
  const { specs, suiteFailures } = specsOf(JSON.parse(readFileSync(reportFile, 'utf8')));
  for (const f of suiteFailures) console.log(`suite node: ${f.split('\n')[0]}`);

  const mark: Record<string, string> = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP', pending: 'SKIP' };
  for (const s of [...specs].sort((a, b) => groupOf(b).localeCompare(groupOf(a)) || a.name.localeCompare(b.name))) {
    // the failure on one line, cut at 400 characters (the whole of it: the JSON report)
    const failure = s.failure.replace(/\s+/g, ' ').trim();
    const why = s.state === 'passed' ? '' : ` -- ${failure.length > 400 ? `${failure.slice(0, 400)}...` : failure || s.state}`;
    const again = s.attempts > 1 ? ` (attempt ${s.attempts} of ${FLAKE_ATTEMPTS}: flaky)` : '';
    console.log(`${mark[s.state] ?? s.state.toUpperCase()} [${groupOf(s)}] ${s.name} (${s.seconds} s)${again}${why}`);
  }
  const flaky = specs.filter((s) => s.state === 'passed' && s.attempts > 1);
  const count = (g: string, st?: string): number => specs.filter((s) => groupOf(s) === g && (st === undefined || s.state === st)).length;
  const passed = specs.filter((s: SpecResult) => s.state === 'passed');
  console.log(
    `MCS conformance: ${passed.length} of ${specs.length} specs passed (Required ${count('Required', 'passed')}/${count('Required')}, ` +
      `Optional ${count('Optional', 'passed')}/${count('Optional')}); ${specs.filter((s) => s.state === 'failed').length} failed, ` +
      `${specs.filter((s) => s.state !== 'passed' && s.state !== 'failed').length} other, in ${seconds} s` +
      (flaky.length > 0 ? `; ${flaky.length} of the passed only on a second attempt` : ''),
  );
  console.log(`MCS conformance reports (the suite's report.html/report.yaml, ginkgo-report.json, junit.xml, suite.log): ${artifacts}`);

  const expected = JSON.parse(readFileSync(expectedFile, 'utf8')) as { mustPass: string[] };
  assert.ok(Array.isArray(expected.mustPass) && expected.mustPass.length > 0, `${relative(root, expectedFile)}: mustPass lists spec names`);
  const { regressions, newlyPassing } = compareThreshold(specs, expected.mustPass);
  for (const n of newlyPassing) console.log(`newly passing (add it to ${relative(root, expectedFile)} mustPass): ${JSON.stringify(n)}`);
  assert.deepEqual(regressions, [], `specs the committed threshold (${relative(root, expectedFile)}, ${expected.mustPass.length} specs) requires did not pass`);
});
