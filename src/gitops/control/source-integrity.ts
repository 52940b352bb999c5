// Which signature rules apply to an Application's Git source (docs/gitops.md, "Source
// integrity"): Argo CD 3.5's spec.sourceIntegrity.git.policies, or the legacy
// spec.signatureKeys as Argo CD converts it (one policy, every repository, mode head).
//   - a policy applies when one of its `repos[].url` globs matches the repository URL and
//     none of its "!" globs does; globs have no separator ("*" also crosses "/") and both
//     the glob and the URL are reduced to repoIdentity() (repo-url.ts: user info, ports,
//     trailing dots, repeated slashes, case, ".git", http/https) before they are compared,
//     never the URL as written, so no spelling of a repository a policy names escapes it;
//     a URL that cannot be normalized is refused where any policy exists;
//   - no policy matches: the source is not verified (shown, never enforced; Argo CD's
//     meaning), unless the project lists spec.sshSigners: then SSH signers only, mode head
//     (strait extension), or sets spec.sourceIntegrity.git.requireMatch: then refused
//     (strait extension, a departure from Argo CD);
//   - more than one matches: refused until the project is fixed (as Argo CD: a mistake in
//     the policies must not switch verification off);
//   - mode none: not verified; head: the revision's commit or annotated tag; strict: the
//     tag, the commit and its whole history back to the root or to seal commits.
// SSH signatures (strait extension) are allowed by the project's spec.sshSigners, in either
// form: a project with only sshSigners enforces like legacy signatureKeys (mode head).
import type { SignerRules, SshSignerRule } from '../../platform/signatures/index.js';
import { globMatch } from '../../base/glob/index.js';
import { signatureKeyIDs, sshSignerRules } from './project.js';
import { repoIdentity } from './repo-url.js';
import type { AppProject, GpgMode, SourceIntegrityGitPolicy } from './types.js';

export interface IntegrityPolicy {
  /** where the rules come from: "signatureKeys" or "sourceIntegrity.git.policies[N]" */
  name: string;
  mode: Exclude<GpgMode, 'none'>;
  rules: SignerRules;
  /** who may sign with an SSH key (spec.sshSigners); undefined = no SSH signer is allowed */
  sshRules?: SshSignerRule[];
  /** changes whenever the mode or a rule changes (cache keys) */
  key: string;
}

export type PolicyLookup =
  | { kind: 'enforced'; policy: IntegrityPolicy }
  /** nothing to enforce: no policy, no matching policy, or mode none */
  | { kind: 'open'; why: string }
  /** more than one policy matches, or requireMatch and none does: fail closed */
  | { kind: 'conflict'; message: string; reason: 'SourceIntegrityPolicyConflict' | 'SourceIntegrityNoMatchingPolicy' };

/** The glob as compared: reduced as a URL is (a glob that is no URL: trimmed, lower case). */
function patternIdentity(pattern: string): string {
  const t = pattern.trim();
  return t === '*' ? '*' : (repoIdentity(t).url ?? t.toLowerCase());
}

/**
 * Argo CD's repoURLMatchesPolicyGlobs: included by a glob and excluded by no "!" glob,
 * both sides as repoIdentity() reduces them. `repoURL` must normalize (the caller checks).
 */
export function policyMatches(policy: SourceIntegrityGitPolicy, repoURL: string): boolean {
  const id = repoIdentity(repoURL).url;
  if (id === undefined) return false;
  let include = false;
  for (const r of policy.repos ?? []) {
    const url = String(r?.url ?? '');
    if (url.startsWith('!')) {
      if (globMatch(patternIdentity(url.slice(1)), id)) return false;
    } else if (globMatch(patternIdentity(url), id)) {
      include = true;
    }
  }
  return include;
}

/** Mode head for SSH signers only: no OpenPGP key is allowed. */
function sshOnly(pname: string, ssh: SshSignerRule[], allowedBy: string): IntegrityPolicy {
  const rules: SignerRules = { allowedKeyIDs: [], allowedBy };
  return { name: 'sshSigners', mode: 'head', rules, sshRules: ssh, key: `${pname}|sshSigners|ssh:${JSON.stringify(ssh)}` };
}

export function integrityPolicyFor(project: AppProject, repoURL: string): PolicyLookup {
  const pname = project.metadata.name;
  const ssh = (project.spec?.sshSigners ?? []).length > 0 ? sshSignerRules(project).rules : undefined;
  const sshPart = ssh ? { sshRules: ssh } : {};
  const sshKey = ssh ? `|ssh:${JSON.stringify(ssh)}` : '';
  const si = project.spec?.sourceIntegrity;
  if (si) {
    const policies = si.git?.policies ?? [];
    const id = repoIdentity(repoURL);
    if (id.error !== undefined && (policies.length > 0 || si.git?.requireMatch === true)) {
      return {
        kind: 'conflict',
        reason: 'SourceIntegrityPolicyConflict',
        message: `repo URL ${repoURL} cannot be matched against the source integrity policies of project '${pname}': ${id.error}`,
      };
    }
    const hits = policies.map((p, i) => ({ p, i })).filter(({ p }) => p && policyMatches(p, repoURL));
    if (hits.length === 0) {
      // spec.sshSigners (strait extension) still enforces where no git policy applies: adding a
      // policy for one repository must not switch SSH-only enforcement off for the others
      if (ssh) return { kind: 'enforced', policy: sshOnly(pname, ssh, `the project's sshSigners (no sourceIntegrity git policy matches ${repoURL})`) };
      if (si.git?.requireMatch === true) {
        return {
          kind: 'conflict',
          reason: 'SourceIntegrityNoMatchingPolicy',
          message: `no source integrity policy of project '${pname}' matches repo URL ${repoURL}, and the project's sourceIntegrity.git.requireMatch refuses such repositories; add a policy whose repos match it`,
        };
      }
      return { kind: 'open', why: `no source integrity policy of project '${pname}' matches ${repoURL}` };
    }
    if (hits.length > 1) {
      return {
        kind: 'conflict',
        reason: 'SourceIntegrityPolicyConflict',
        message:
          `multiple (${hits.length}) git source integrity policies of project '${pname}' match repo URL ${repoURL} ` +
          `(policies ${hits.map((h) => h.i).join(', ')}); change their repos so that one matches`,
      };
    }
    const { p, i } = hits[0]!;
    const name = `sourceIntegrity.git.policies[${i}]`;
    const mode = p.gpg?.mode;
    if (mode !== 'head' && mode !== 'strict') return { kind: 'open', why: `${name} of project '${pname}' has gpg mode ${mode ?? 'none'}` };
    const rules: SignerRules = {
      allowedKeyIDs: p.gpg.keys ?? [],
      allowedBy: `the project's ${name}.gpg.keys`,
      ...(p.strait?.signerIdentities?.length ? { identities: p.strait.signerIdentities } : {}),
      ...(p.strait?.committerEmailMatchesSigner === true ? { committerEmailMatchesSigner: true } : {}),
    };
    return { kind: 'enforced', policy: { name, mode, rules, ...sshPart, key: `${pname}|${name}|${mode}|${JSON.stringify(rules)}${sshKey}` } };
  }
  const { ids } = signatureKeyIDs(project);
  if ((project.spec?.signatureKeys ?? []).length === 0 && !ssh) return { kind: 'open', why: `project '${pname}' lists no signatureKeys or sshSigners` };
  const rules: SignerRules = { allowedKeyIDs: ids, allowedBy: "the project's signatureKeys" };
  return {
    kind: 'enforced',
    policy: {
      name: ssh && ids.length === 0 ? 'sshSigners' : 'signatureKeys',
      mode: 'head',
      rules,
      ...sshPart,
      key: `${pname}|signatureKeys|${ids.join(',')}${sshKey}`,
    },
  };
}
