// SSH commit signature verification: strait in process (platform/signatures, node:crypto)
// against `ssh-keygen -Y verify` (what git runs) and `git verify-commit` over the same
// commits in the same run. Commits are made by the real git (gpg.format=ssh), one key
// type at a time; the allowed_signers list has every key (plus --filler unrelated lines,
// as a team's file has). Prints per-commit times, the ratios and the load average.
//   node dist/bench/ssh-signatures.js [--commits 40] [--filler 100]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AllowedSigners, parseCommitObject, verifyCommitSignature } from '../src/platform/signatures/index.js';
import { sshKey, sshWorkTree } from '../test/helpers/ssh-signing.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const COMMITS = Math.max(5, Math.min(500, arg('commits', 40)));
const FILLER = Math.max(0, Math.min(5000, arg('filler', 100)));
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

const dir = mkdtempSync(join(tmpdir(), 'strait-bench-ssh-'));
try {
  const types: [string, string, number | undefined][] = [
    ['ed25519', 'ed25519', undefined],
    ['ecdsa-p256', 'ecdsa', 256],
    ['rsa-3072', 'rsa', 3072],
  ];
  const lines: string[] = [];
  for (let i = 0; i < FILLER; i++) lines.push(`filler${i}@example.com ${sshKey(join(dir, 'filler'), `f${i}`).pub}`);
  const sets = types.map(([label, type, bits]) => {
    const key = sshKey(dir, label, type, bits);
    lines.push(`${label}@example.com namespaces="git" ${key.pub}`);
    const wt = sshWorkTree(dir, key);
    const shas: string[] = [];
    for (let i = 0; i < COMMITS; i++) shas.push(wt.commit(`${label} ${i}`, { date: `2025-06-01T12:${String(i % 60).padStart(2, '0')}:00Z` }));
    return { label, wt, shas, raws: shas.map((s) => wt.raw(s)) };
  });
  const allowedText = `${lines.join('\n')}\n`;
  const allowedFile = join(dir, 'allowed_signers');
  writeFileSync(allowedFile, allowedText);
  console.log(`SSH signature verification, ${COMMITS} commits per key type, allowed_signers of ${lines.length} lines; load average ${load()}`);

  let t = performance.now();
  const signers = AllowedSigners.parse(allowedText);
  console.log(`  parse allowed_signers (${lines.length} lines): ${(performance.now() - t).toFixed(1)} ms`);

  for (const s of sets) {
    // warm-up, then the in-process loop (verification of every commit, parsed from raw bytes)
    await verifyCommitSignature(s.raws[0]!, [], { sshSigners: signers });
    t = performance.now();
    for (const raw of s.raws) {
      const r = await verifyCommitSignature(raw, [], { sshSigners: signers });
      if (r.status !== 'valid') throw new Error(`${s.label}: ${r.message}`);
    }
    const inproc = (performance.now() - t) / s.raws.length;

    // ssh-keygen -Y verify: what git runs per commit (payload on stdin, signature in a file)
    const files = s.raws.map((raw, i) => {
      const c = parseCommitObject(raw);
      const sig = join(dir, `${s.label}-${i}.sig`);
      writeFileSync(sig, c.signature ?? '');
      return { sig, payload: c.payload, at: new Date(c.committer.time * 1000).toISOString().replace(/[-:]/g, '').slice(0, 15).replace('T', '') };
    });
    t = performance.now();
    for (const f of files) {
      const r = spawnSync(
        'ssh-keygen',
        ['-Y', 'verify', '-f', allowedFile, '-I', `${s.label}@example.com`, '-n', 'git', '-s', f.sig, `-Overify-time=${f.at}`],
        { input: f.payload },
      );
      if (r.status !== 0) throw new Error(`ssh-keygen refused ${f.sig}: ${String(r.stderr)}`);
    }
    const keygen = (performance.now() - t) / files.length;

    // git verify-commit (find-principals + verify: two ssh-keygen runs and git itself)
    t = performance.now();
    const gitN = Math.min(s.shas.length, 20);
    for (const sha of s.shas.slice(0, gitN)) {
      execFileSync('git', ['-c', `gpg.ssh.allowedSignersFile=${allowedFile}`, 'verify-commit', sha], { cwd: s.wt.dir, stdio: 'ignore' });
    }
    const gitv = (performance.now() - t) / gitN;
    console.log(
      `  ${s.label.padEnd(10)} in process ${inproc.toFixed(3)} ms/commit | ssh-keygen -Y verify ${keygen.toFixed(1)} ms (${(keygen / inproc).toFixed(0)}x) | git verify-commit ${gitv.toFixed(1)} ms (${(gitv / inproc).toFixed(0)}x) | load ${load()}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
