// The MCS conformance suite's results (test/k8s-real/mcs-conformance.test.ts): the suite
// binary's path, its Ginkgo JSON report read into one row per spec, and the committed
// threshold compared with a run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Where test/k8s/build-mcs-conformance.sh puts (or has put) the suite's test binary. */
export function suiteBinary(root: string): string {
  return execFileSync(join(root, 'test', 'k8s', 'build-mcs-conformance.sh'), ['--print'], { encoding: 'utf8' }).trim();
}

/** A spec as Ginkgo's JSON report has it (the fields read here). */
interface GinkgoSpec {
  ContainerHierarchyTexts: string[] | null;
  ContainerHierarchyLabels: string[][] | null;
  LeafNodeType: string;
  LeafNodeText: string;
  LeafNodeLabels: string[] | null;
  State: string;
  RunTime?: number;
  Failure?: { Message?: string };
  /** how many times it ran (--ginkgo.flake-attempts) */
  NumAttempts?: number;
}

export interface SpecResult {
  /** Ginkgo's full text without the suite's empty Describe("") texts */
  name: string;
  /** passed, failed, skipped, pending, panicked, interrupted, aborted, timedout */
  state: string;
  labels: string[];
  seconds: number;
  failure: string;
  /** how many times it ran: more than 1 for a spec that failed and was run again (--ginkgo.flake-attempts) */
  attempts: number;
}

/** The Its of a Ginkgo JSON report; the failures of its other nodes (BeforeSuite, ...). */
export function specsOf(report: unknown): { specs: SpecResult[]; suiteFailures: string[] } {
  assert.ok(Array.isArray(report) && report.length > 0, 'a Ginkgo JSON report is an array of suite reports');
  const specs: SpecResult[] = [];
  const suiteFailures: string[] = [];
  for (const suite of report as { SpecReports: GinkgoSpec[] | null }[]) {
    for (const s of suite.SpecReports ?? []) {
      const failure = (s.Failure?.Message ?? '').trim();
      if (s.LeafNodeType !== 'It') {
        if (s.State !== 'passed' && failure) suiteFailures.push(`${s.LeafNodeType} ${s.State}: ${failure}`);
        continue;
      }
      specs.push({
        name: [...(s.ContainerHierarchyTexts ?? []), s.LeafNodeText]
          .map((t) => t.trim())
          .filter(Boolean)
          .join(' '),
        state: s.State,
        labels: [...(s.ContainerHierarchyLabels ?? []).flat(), ...(s.LeafNodeLabels ?? [])],
        seconds: Math.round((s.RunTime ?? 0) / 1e9),
        failure,
        attempts: s.NumAttempts ?? 1,
      });
    }
  }
  return { specs, suiteFailures };
}

/** The suite's own grouping: Required or Optional (its report.html's two tables). */
export const groupOf = (s: SpecResult): string => (s.labels.includes('Required') ? 'Required' : s.labels.includes('Optional') ? 'Optional' : '-');

/**
 * A run against the committed threshold: the listed specs that did not pass (or are not in
 * the report: not run, or renamed in the suite), and the passing ones not listed.
 */
export function compareThreshold(specs: SpecResult[], mustPass: string[]): { regressions: string[]; newlyPassing: string[] } {
  const byName = new Map(specs.map((s) => [s.name, s]));
  return {
    regressions: mustPass.filter((n) => byName.get(n)?.state !== 'passed').map((n) => `${n}: ${byName.get(n)?.state ?? 'not run (not in the report)'}`),
    newlyPassing: specs.filter((s) => s.state === 'passed' && !mustPass.includes(s.name)).map((s) => s.name),
  };
}
