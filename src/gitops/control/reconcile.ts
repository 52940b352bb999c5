// One Application reconcile as a list of steps, run in order. Each step takes the
// reconcile's context and what earlier steps found as typed arguments, and returns what it
// found, or throws a ReconcileFailure where the failure happens; the status is written
// once, at the end, by the caller (controller.ts).
//   project -> spec -> fetch -> resolve -> verify -> render -> compare -> sync
// verify applies the project's signature rules for the source (source-integrity.ts: legacy
// signatureKeys or a sourceIntegrity policy, mode head or strict; strict-history.ts).
import { isStraitError } from '../../base/errors/index.js';
import { Kinds, type KindInfo } from '../../platform/resources/index.js';
import type { SignatureFailureKind, VerificationResult, VerificationStatus } from '../../platform/signatures/index.js';
import {
  expiredMessage,
  failureKind,
  SIGNATURE_FAILURES,
  verifyCommitSignature,
  verifyTagSignature,
  type AllowedSigners,
  type Keyring,
  type VerifyOptions,
} from '../../platform/signatures/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';
import { stalled, transient, waiting, ReconcileFailure } from './failure.js';
import type { RepoCache, ResolvedRevision } from './git-cache.js';
import { renderManifests } from './manifests.js';
import { normalizeRepoURL } from './repo-url.js';
import type { GitOpsMetrics } from './metrics.js';
import { destinationAllowed, resourceAllowed, signatureKeyIDs, sourceRepoAllowed, sshSignerRules } from './project.js';
import { integrityPolicyFor, type IntegrityPolicy } from './source-integrity.js';
import { judge, type HistoryVerifier, type SshTrust } from './strict-history.js';
import type { AppProject, Application, ApplicationStatus, ResourceStatus, SignatureStatus } from './types.js';

export const TRACKING_LABEL = 'app.kubernetes.io/instance';
export const FIELD_MANAGER = 'argocd-controller';

export interface ReconcileDeps {
  repos: RepoCache;
  keyring: () => { ring: Keyring; version: number };
  /** the SSH allowed signers (ssh-signer-store.ts) */
  sshSigners?: () => { signers: AllowedSigners; version: number };
  project: (name: string) => AppProject | undefined;
  destination: (server: string) => ResourceStore | undefined;
  verifyCache: Map<string, VerificationResult>;
  /** strict mode's history check (its verdict cache and history-ok memo live as long as the controller) */
  history: HistoryVerifier;
  /** rendered manifests by repo, commit and path (immutable; callers clone) */
  renderCache?: Map<string, KubeObject[]>;
  metrics?: GitOpsMetrics;
  now: () => Date;
  /**
   * Write `status` (the sync about to start: operationState Running for its revision) before
   * anything is applied, so that a process killed in the middle of a sync leaves a status that
   * says so, never the previous revision's `Synced` (controller.ts). Absent: not recorded.
   */
  beginSync?: (app: Application, status: ApplicationStatus) => Promise<void>;
}

/** What every step reads: the Application (a copy of it) and the controller's dependencies. */
export interface ReconcileContext {
  readonly app: Application;
  readonly deps: ReconcileDeps;
  /** a sync was asked for (CLI/API), not only a refresh */
  readonly manualSync: boolean;
  /** when this reconcile started (ISO 8601): a sync's startedAt */
  readonly started: string;
}

/** The spec step's result: where the manifests come from and where they go. */
interface Target {
  repoURL: string;
  server: string;
  dest: ResourceStore;
}

/** The compare step's result (the sync step returns it again as the sync left it). */
interface Comparison {
  resources: ResourceStatus[];
  outOfSync: boolean;
  toPrune: ResourceStatus[];
}

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '');
const versionOf = (apiVersion: string): string => (apiVersion.includes('/') ? (apiVersion.split('/')[1] ?? '') : apiVersion);

function kindInfo(apiVersion: string, kind: string): KindInfo | undefined {
  return Object.values(Kinds).find((k: KindInfo) => k.kind === kind && (k.apiVersion === apiVersion || (k.alsoServed ?? []).includes(apiVersion)));
}

async function stepProject(ctx: ReconcileContext): Promise<AppProject> {
  const name = ctx.app.spec?.project || 'default';
  const p = ctx.deps.project(name);
  if (!p) throw waiting('InvalidSpecError', 'ProjectNotFound', `Application referencing project ${name} which does not exist`);
  return p;
}

async function stepSpec(ctx: ReconcileContext, p: AppProject): Promise<Target> {
  const src = ctx.app.spec?.source ?? {};
  const pname = p.metadata.name;
  if (src.chart || src.helm) {
    if (integrityPolicyFor(p, src.repoURL ?? '').kind !== 'open') {
      throw stalled(
        'ComparisonError',
        'VerificationUnsupported',
        `Signature verification works for Git repositories only: chart ${JSON.stringify(src.chart ?? '')} from ${JSON.stringify(src.repoURL ?? '')} cannot be verified, and project ${pname} enforces signatures; use a Git source`,
        { syncError: true, eventReason: 'ResourceComparison' },
      );
    }
    throw stalled('InvalidSpecError', 'HelmUnsupported', `Helm chart sources are not supported; use a Git source with manifests in source.path`);
  }
  if (!src.repoURL) throw stalled('InvalidSpecError', 'InvalidSpec', 'spec.source.repoURL is required');
  const repo = normalizeRepoURL(src.repoURL);
  if (repo.error !== undefined) {
    throw stalled(
      'InvalidSpecError',
      'InvalidSpec',
      `spec.source.repoURL ${JSON.stringify(src.repoURL)} is refused: ${repo.error}; write the repository's URL without them`,
    );
  }
  if (!sourceRepoAllowed(p, src.repoURL)) {
    throw stalled('InvalidSpecError', 'SourceNotPermitted', `application repo ${src.repoURL} is not permitted in project '${pname}'`);
  }
  const server = ctx.app.spec?.destination?.server ?? '';
  const ns = ctx.app.spec?.destination?.namespace ?? '';
  if (!server) throw stalled('InvalidSpecError', 'InvalidSpec', 'spec.destination.server is required');
  if (!destinationAllowed(p, server, ns)) {
    throw stalled('InvalidSpecError', 'DestinationNotPermitted', `application destination {${server} ${ns}} is not permitted in project '${pname}'`);
  }
  const { invalid } = signatureKeyIDs(p);
  if (invalid.length > 0) {
    throw stalled('InvalidSpecError', 'InvalidSignatureKey', `project '${pname}' lists ${invalid.map((i) => `${i} is not a valid GnuPG key ID`).join('; ')}`);
  }
  const badSsh = sshSignerRules(p).invalid;
  if (badSsh.length > 0) {
    throw stalled(
      'InvalidSpecError',
      'InvalidSignatureKey',
      `project '${pname}' lists sshSigners ${badSsh.join(', ')}: each needs a fingerprint "SHA256:<43 base64 characters>" and/or a principal`,
    );
  }
  const dest = ctx.deps.destination(server);
  if (!dest) throw waiting('InvalidSpecError', 'UnknownDestination', `destination server ${server} is not a known cluster`);
  return { repoURL: src.repoURL, server, dest };
}

async function stepFetch(ctx: ReconcileContext, target: Target): Promise<void> {
  const url = target.repoURL;
  try {
    await ctx.deps.repos.sync(url);
  } catch (err) {
    throw transient('ComparisonError', 'FetchFailed', isStraitError(err) ? err.message : String(err));
  }
}

async function stepResolve(ctx: ReconcileContext, target: Target): Promise<ResolvedRevision> {
  const src = ctx.app.spec?.source ?? {};
  try {
    return await ctx.deps.repos.resolve(target.repoURL, src.targetRevision ?? 'HEAD');
  } catch (err) {
    if (isStraitError(err, 'STRAIT_ERR_GITOPS_REVISION_NOT_FOUND')) throw waiting('ComparisonError', 'RevisionNotFound', err.message);
    throw transient('ComparisonError', 'ResolveFailed', isStraitError(err) ? err.message : String(err));
  }
}

/** What the verify step found: the status to report and, under enforcement, why the revision is refused. */
interface Verified {
  signature: SignatureStatus;
  refusal: { kind: SignatureFailureKind | 'policy-conflict'; message: string; reason?: string } | undefined;
}

/** The head object's signature under the policy's rules (all keys allowed when not enforced); cached per object, keyring and policy. */
async function verifyHead(ctx: ReconcileContext, target: Target, r: ResolvedRevision, policy: IntegrityPolicy | undefined): Promise<VerificationResult> {
  const { ring, version } = ctx.deps.keyring();
  const ssh = ctx.deps.sshSigners?.();
  // enforced: SSH signers only as the project's sshSigners allow (none listed, none allowed); else every allowed signer is shown as valid
  const sshRules = policy ? (policy.sshRules ?? []) : undefined;
  const opts: VerifyOptions = {
    now: ctx.deps.now(),
    ...(policy ? { rules: policy.rules } : {}),
    ...(ssh ? { sshSigners: ssh.signers } : {}),
    ...(sshRules ? { sshRules } : {}),
  };
  const cacheKey = `${r.verifyType}:${r.verifySha}|${version}|${policy?.key ?? '*'}|ssh:${ssh?.version ?? 0}`;
  let result = ctx.deps.verifyCache.get(cacheKey);
  // a verdict cached while the key was valid: the key may have expired since (strict mode re-judges the same way)
  if (result?.status === 'valid' && result.keyExpires && Date.parse(result.keyExpires) <= ctx.deps.now().getTime()) {
    const message = expiredMessage(result.keyID, result.keyExpires);
    return { ...result, status: 'expired', message, reason: message };
  }
  if (!result) {
    const raw = await ctx.deps.repos.readObject(target.repoURL, r.verifyType, r.verifySha);
    const t0 = performance.now();
    result = r.verifyType === 'tag' ? await verifyTagSignature(raw, ring, opts) : await verifyCommitSignature(raw, ring, opts);
    ctx.deps.metrics?.verifySeconds.observe((performance.now() - t0) / 1000);
    ctx.deps.metrics?.verifications.inc({ outcome: result.status });
    if (ctx.deps.verifyCache.size > 50_000) ctx.deps.verifyCache.clear();
    // the payload and signature texts are not needed again
    ctx.deps.verifyCache.set(cacheKey, { ...result, payload: '', signature: '' });
  }
  return result;
}

/**
 * The head's refusal message: exactly "Revision is not signed" (UNSIGNED_MESSAGE,
 * platform/signatures/verify.ts) for an unsigned commit; otherwise it names the object.
 */
function headRefusal(result: { status: VerificationStatus; message: string }, r: ResolvedRevision): string {
  const what = r.verifyType === 'tag' ? `annotated tag ${r.ref.replace(/^refs\/tags\//, '')} (${r.verifySha})` : `revision ${r.commit}`;
  if (result.status === 'unsigned') return r.verifyType === 'commit' ? result.message : `Revision is not signed: ${what} carries no signature`;
  return `${result.message} (${what})`;
}

/**
 * The signature of the resolved revision, as the status reports it (enforced or not), under
 * the rules source-integrity.ts finds for the repository: head checks the commit or
 * annotated tag; strict checks the annotated tag (if any), the commit and its history
 * (strict-history.ts, which also judges the commit itself and names the oldest failure).
 */
async function stepVerify(ctx: ReconcileContext, p: AppProject, target: Target, r: ResolvedRevision): Promise<Verified> {
  const lookup = integrityPolicyFor(p, target.repoURL);
  const policy = lookup.kind === 'enforced' ? lookup.policy : undefined;
  const enforced = policy !== undefined || lookup.kind === 'conflict';
  const status = (x: { status: VerificationStatus; keyID: string; primaryKeyID: string; signer: string; message: string }): SignatureStatus => ({
    status: x.status,
    keyID: x.keyID,
    primaryKeyID: x.primaryKeyID,
    signer: x.signer,
    message: x.message,
    verifiedObject: r.verifyType,
    objectSHA: r.verifySha,
    enforced,
    ...(policy ? { mode: policy.mode, policy: policy.name } : {}),
  });
  if (policy && r.verifyType === 'tag') {
    const misnamed = await tagNameRefusal(ctx, target, r);
    if (misnamed)
      return {
        signature: status({ ...EMPTY_RESULT, status: 'not-allowed', message: misnamed }),
        refusal: { kind: 'policy-conflict', message: misnamed, reason: 'SignatureTagNameMismatch' },
      };
  }
  if (policy?.mode !== 'strict' || r.verifyType === 'tag') {
    const result = await verifyHead(ctx, target, r, policy);
    const signature = status(result);
    if (lookup.kind === 'conflict') return { signature, refusal: { kind: 'policy-conflict', message: lookup.message, reason: lookup.reason } };
    if (!policy) return { signature, refusal: undefined };
    if (result.status !== 'valid') {
      return { signature, refusal: { kind: failureKind(result.status, false), message: headRefusal(result, r) } };
    }
    if (policy.mode === 'head') return { signature, refusal: undefined };
    return strictHistory(ctx, target, r, policy, signature);
  }
  return strictHistory(ctx, target, r, policy, undefined);
}

const EMPTY_RESULT = { keyID: '', primaryKeyID: '', signer: '', message: '' };

/**
 * An annotated tag is signed together with its own name (its "tag" header): one found under
 * another ref name (alice's signed v0.9 pushed as refs/tags/v1.0) is refused, as `git tag -v`
 * would show the name it was signed as. undefined when the names agree.
 */
async function tagNameRefusal(ctx: ReconcileContext, target: Target, r: ResolvedRevision): Promise<string | undefined> {
  const raw = await ctx.deps.repos.readObject(target.repoURL, 'tag', r.verifySha);
  const end = raw.indexOf('\n\n');
  const header = (end < 0 ? raw : raw.subarray(0, end)).toString('utf8');
  const signedName = /^tag (.*)$/m.exec(header)?.[1];
  const refName = r.ref.startsWith('refs/tags/') ? r.ref.slice('refs/tags/'.length) : undefined;
  if (signedName !== undefined && signedName === refName) return undefined;
  return (
    `Annotated tag ${r.verifySha} was signed as tag ${JSON.stringify(signedName ?? '')} but is found as ${r.ref}; ` +
    'a signed tag is trusted only under the name it was signed with: push it under its own name or sign a new tag'
  );
}

/** Strict mode's history check; `signature` is the annotated tag's (already valid), else the commit's comes from the check. */
async function strictHistory(
  ctx: ReconcileContext,
  target: Target,
  r: ResolvedRevision,
  policy: IntegrityPolicy,
  tagSignature: SignatureStatus | undefined,
): Promise<Verified> {
  const { ring, version } = ctx.deps.keyring();
  const now = ctx.deps.now();
  const t0 = performance.now();
  const signers = ctx.deps.sshSigners?.();
  const ssh: SshTrust | undefined = signers ? { ...signers, rules: policy.sshRules ?? [] } : undefined;
  const h = await ctx.deps.history.verify(target.repoURL, r.commit, policy, ring, version, now, ssh);
  ctx.deps.metrics?.verifySeconds.observe((performance.now() - t0) / 1000);
  const own = judge(h.head, policy.rules, now.getTime());
  const headResult = {
    status: own?.status ?? h.head.status,
    keyID: h.head.keyID,
    primaryKeyID: h.head.primaryKeyID,
    signer: h.head.signer,
    message: own?.message ?? h.head.message,
  };
  ctx.deps.metrics?.verifications.inc({ outcome: headResult.status });
  const signature: SignatureStatus = tagSignature ?? {
    ...headResult,
    verifiedObject: 'commit',
    objectSHA: r.commit,
    enforced: true,
    mode: policy.mode,
    policy: policy.name,
  };
  signature.commitsChecked = h.commitsChecked;
  if (h.seals.length > 0) signature.seals = h.seals;
  if (!h.failure) return { signature, refusal: undefined };
  signature.status = h.failure.kind;
  signature.failedCommit = h.failure.commit;
  signature.failedAuthor = h.failure.author;
  if (h.failure.commit !== r.commit) signature.message = h.failure.message;
  const message = h.failure.commit === r.commit && h.failure.failing === 1 ? headRefusal(headResult, r) : h.failure.message;
  return { signature, refusal: { kind: h.failure.kind, message } };
}

/**
 * A refusal stalls the sync: Sync Error, the ResourceComparison Event every refusal records
 * (docs/gitops.md "Refusals") and an Event with the refusal's own reason.
 */
function enforceSignature(v: Verified): void {
  if (!v.refusal) return;
  const reason = v.refusal.kind === 'policy-conflict' ? (v.refusal.reason ?? 'SourceIntegrityPolicyConflict') : SIGNATURE_FAILURES[v.refusal.kind].reason;
  throw stalled('ComparisonError', reason, v.refusal.message, { syncError: true, eventReason: 'ResourceComparison', ownEvent: true });
}

async function stepRender(ctx: ReconcileContext, p: AppProject, target: Target, resolved: ResolvedRevision): Promise<KubeObject[]> {
  const src = ctx.app.spec?.source ?? {};
  const server = target.server;
  const destNs = ctx.app.spec?.destination?.namespace ?? '';
  let objs: KubeObject[];
  try {
    const commit = resolved.commit;
    const key = `${target.repoURL}\n${commit}\n${src.path ?? ''}`;
    let rendered = ctx.deps.renderCache?.get(key);
    if (!rendered) {
      rendered = renderManifests(await ctx.deps.repos.readFiles(target.repoURL, commit, src.path ?? ''), src.path ?? '');
      if (ctx.deps.renderCache) {
        if (ctx.deps.renderCache.size > 5000) ctx.deps.renderCache.clear();
        ctx.deps.renderCache.set(key, rendered);
      }
    }
    objs = structuredClone(rendered);
  } catch (err) {
    // an invalid manifest refuses the revision before anything is applied, named in the
    // condition and in a Warning Event, as `strait apply` names it
    if (isStraitError(err)) throw stalled('ComparisonError', 'ManifestInvalid', err.message, { eventReason: 'ManifestInvalid' });
    throw transient('ComparisonError', 'ReadFailed', String(err));
  }
  for (const o of objs) {
    const info = kindInfo(o.apiVersion, o.kind);
    const namespaced = info ? info.namespaced : true;
    const group = groupOf(o.apiVersion);
    if (namespaced) {
      o.metadata.namespace ||= destNs || 'default';
      if (!destinationAllowed(p, server, o.metadata.namespace)) {
        throw stalled(
          'SyncError',
          'DestinationNotPermitted',
          `namespace ${o.metadata.namespace} of ${o.kind}/${o.metadata.name} is not permitted in project '${p.metadata.name}'`,
          { syncError: true },
        );
      }
    } else {
      delete o.metadata.namespace;
    }
    if (!resourceAllowed(p, group, o.kind, namespaced)) {
      throw stalled('SyncError', 'ResourceNotPermitted', `resource ${group}:${o.kind} "${o.metadata.name}" is not permitted in project ${p.metadata.name}`, {
        syncError: true,
      });
    }
    o.metadata.labels = { ...(o.metadata.labels ?? {}), [TRACKING_LABEL]: ctx.app.metadata.name };
  }
  return objs;
}

/** true when every field of `want` is present and equal in `have` */
function contains(have: unknown, want: unknown): boolean {
  if (want === null || typeof want !== 'object') return have === want;
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => contains(have[i], w));
  if (have === null || typeof have !== 'object') return false;
  return Object.entries(want as Record<string, unknown>).every(([k, v]) => contains((have as Record<string, unknown>)[k], v));
}

const resKey = (r: { kind: string; namespace?: string; name: string; group?: string }): string => `${r.group ?? ''}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

async function stepCompare(ctx: ReconcileContext, target: Target, desired: KubeObject[]): Promise<Comparison> {
  const dest = target.dest;
  const resources: ResourceStatus[] = [];
  let outOfSync = false;
  for (const o of desired) {
    let live: KubeObject | undefined;
    try {
      live = await dest.get({ apiVersion: o.apiVersion, kind: o.kind }, o.metadata.name, o.metadata.namespace);
    } catch (err) {
      throw transient('ComparisonError', 'LiveStateUnavailable', isStraitError(err) ? err.message : String(err));
    }
    const { metadata, status: _s, ...body } = o;
    const same = live !== undefined && contains(live, body) && contains(live.metadata.labels ?? {}, metadata.labels ?? {});
    if (!same) outOfSync = true;
    resources.push({
      group: groupOf(o.apiVersion),
      version: versionOf(o.apiVersion),
      kind: o.kind,
      namespace: o.metadata.namespace ?? '',
      name: o.metadata.name,
      status: same ? 'Synced' : 'OutOfSync',
    });
  }
  const want = new Set(resources.map(resKey));
  const previous = ctx.app.status?.resources ?? [];
  const toPrune = previous.filter((r) => !want.has(resKey(r)));
  if (toPrune.length > 0) outOfSync = true;
  return { resources, outOfSync, toPrune };
}

/** Apply (and prune) when a sync is due; the comparison as the sync left it, and whether it ran. */
async function stepSync(
  ctx: ReconcileContext,
  target: Target,
  resolved: ResolvedRevision,
  desired: KubeObject[],
  compared: Comparison,
): Promise<{ comparison: Comparison; synced: boolean }> {
  const policy = ctx.app.spec?.syncPolicy;
  const automated = policy?.automated ?? undefined;
  const lastOp = ctx.app.status?.operationState;
  const lastSynced = lastOp?.phase === 'Succeeded' ? lastOp.syncResult?.revision : undefined;
  const revision = resolved.commit;
  const auto = automated !== undefined && automated !== null;
  // a new target after a failed or refused attempt is synced even when the live state already
  // matches it: the last operation then speaks of this revision, not of the one it refused
  const retargetAfterFailure =
    auto &&
    lastOp !== undefined &&
    lastOp.phase !== 'Succeeded' &&
    lastOp.phase !== 'Running' &&
    (lastOp.operation?.sync.revision ?? '') !== revision &&
    lastSynced !== revision;
  // a sync whose process ended before it finished (killed in the middle) is run again to its
  // end, also when everything was already applied: its result and history entry were not written
  const interrupted = lastOp?.phase === 'Running';
  const should =
    ctx.manualSync ||
    retargetAfterFailure ||
    interrupted ||
    (auto && compared.outOfSync && (revision !== lastSynced || automated.selfHeal === true || lastSynced === undefined));
  if (!should) return { comparison: compared, synced: false };
  await recordSyncStart(ctx, target, revision, compared);
  const dest = target.dest;
  let toPrune = compared.toPrune;
  const ns = ctx.app.spec?.destination?.namespace ?? '';
  const createNs = (policy?.syncOptions ?? []).some((o) => o.replace(/\s/g, '') === 'CreateNamespace=true');
  try {
    if (ns) {
      const exists = await dest.get(Kinds.Namespace, ns);
      if (!exists) {
        if (createNs) {
          await dest.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { fieldManager: FIELD_MANAGER });
        } else if (ns !== 'default' && !desired.some((o) => o.kind === 'Namespace' && o.metadata.name === ns)) {
          throw stalled('SyncError', 'NamespaceNotFound', `namespaces "${ns}" not found; create it or add the sync option CreateNamespace=true`, {
            syncError: true,
          });
        }
      }
    }
    const ordered = [...desired].sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
    for (const o of ordered) await dest.apply(o, { fieldManager: FIELD_MANAGER });
    if (automated?.prune === true) {
      for (const r of toPrune) {
        await dest.delete({ apiVersion: r.group ? `${r.group}/${r.version}` : r.version, kind: r.kind }, r.name, r.namespace || undefined);
      }
      toPrune = [];
    }
  } catch (err) {
    if (err instanceof ReconcileFailure) throw err;
    // a manifest the destination refuses (unknown kind, schema) will not apply on retry either
    if (isStraitError(err) && err.kind === 'usage') throw stalled('SyncError', 'ApplyRefused', err.message, { syncError: true });
    throw transient('SyncError', 'ApplyFailed', isStraitError(err) ? err.message : String(err));
  }
  for (const r of compared.resources) r.status = 'Synced';
  return { comparison: { resources: compared.resources, outOfSync: toPrune.length > 0, toPrune }, synced: true };
}

/**
 * Before the first write to the destination: the status says a sync of `revision` runs
 * (operationState Running, the comparison against `revision`), with the last result kept
 * beside it. A kill in the middle leaves this, and the next reconcile finishes the sync.
 */
async function recordSyncStart(ctx: ReconcileContext, target: Target, revision: string, compared: Comparison): Promise<void> {
  if (!ctx.deps.beginSync) return;
  const prev = ctx.app.status ?? {};
  const src = ctx.app.spec?.source;
  const destination = ctx.app.spec?.destination;
  const lastResult = prev.operationState?.syncResult;
  const status: ApplicationStatus = {
    ...structuredClone(prev),
    // the steps up to here succeeded: an earlier fetch or comparison error is no longer true
    conditions: (prev.conditions ?? []).filter((c) => !ERROR_CONDITIONS.has(c.type)),
    sync: {
      status: compared.outOfSync ? 'OutOfSync' : 'Synced',
      revision,
      comparedTo: { ...(src ? { source: src } : {}), ...(destination ? { destination } : {}) },
    },
    resources: compared.resources,
    operationState: {
      phase: 'Running',
      message: `syncing to ${revision} (${compared.resources.length} resources to ${target.server})`,
      startedAt: ctx.started,
      operation: { sync: { revision } },
      ...(lastResult ? { syncResult: lastResult } : {}),
    },
  };
  try {
    await ctx.deps.beginSync(ctx.app, status);
  } catch (err) {
    // nothing is applied unless the status can say a sync runs
    throw transient('SyncError', 'StatusWriteFailed', `cannot record the start of the sync to ${revision}: ${isStraitError(err) ? err.message : String(err)}`);
  }
}

export const STEPS = ['project', 'spec', 'fetch', 'resolve', 'verify', 'render', 'compare', 'sync'] as const;

/** Run one step: a failure that is not a ReconcileFailure is an internal error of that step. */
async function step<T>(name: (typeof STEPS)[number], run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw err instanceof ReconcileFailure ? err : transient('ComparisonError', 'InternalError', `step ${name}: ${String((err as Error)?.message ?? err)}`);
  }
}

/** What a reconcile that ran every step found. */
interface Reconciled {
  resolved: ResolvedRevision;
  signature: SignatureStatus;
  comparison: Comparison;
  synced: boolean;
}

/**
 * The steps in STEPS' order, each given what it needs. The revision and the signature go
 * into `seen` as soon as they are known: the status reports them even when a later step fails.
 */
async function runSteps(ctx: ReconcileContext, seen: { revision?: string; signature?: SignatureStatus }): Promise<Reconciled> {
  const project = await step('project', () => stepProject(ctx));
  const target = await step('spec', () => stepSpec(ctx, project));
  await step('fetch', () => stepFetch(ctx, target));
  const resolved = await step('resolve', () => stepResolve(ctx, target));
  seen.revision = resolved.commit;
  const verified = await step('verify', () => stepVerify(ctx, project, target, resolved));
  const signature = verified.signature;
  seen.signature = signature;
  await step('verify', () => enforceSignature(verified));
  const desired = await step('render', () => stepRender(ctx, project, target, resolved));
  const compared = await step('compare', () => stepCompare(ctx, target, desired));
  const { comparison, synced } = await step('sync', () => stepSync(ctx, target, resolved, desired, compared));
  return { resolved, signature, comparison, synced };
}

export interface ReconcileOutcome {
  status: ApplicationStatus;
  failure?: ReconcileFailure;
  /** events to record (reason, message) */
  events: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
  result: 'synced' | 'refused' | 'failed' | 'compared';
}

const ERROR_CONDITIONS = new Set(['ComparisonError', 'InvalidSpecError', 'SyncError']);

/** A reconcile that ran every step: its sync, resources and health, and for a sync its operation and history. True when it synced. */
function reconciledStatus(
  status: ApplicationStatus,
  prev: ApplicationStatus,
  done: Reconciled,
  keep: NonNullable<ApplicationStatus['conditions']>,
  started: string,
  now: string,
  src: NonNullable<Application['spec']>['source'] | undefined,
  destination: NonNullable<Application['spec']>['destination'] | undefined,
): boolean {
  status.conditions = keep;
  const { comparison, signature } = done;
  const revision = done.resolved.commit;
  status.sync = {
    status: comparison.outOfSync ? 'OutOfSync' : 'Synced',
    revision,
    comparedTo: { ...(src ? { source: src } : {}), ...(destination ? { destination } : {}) },
  };
  status.resources = comparison.resources;
  status.health = { status: comparison.resources.every((r) => r.status === 'Synced') ? 'Healthy' : 'Missing' };
  if (done.synced) {
    const signer = signature.status === 'valid' ? `${signature.signer} (${signature.keyID})` : undefined;
    status.operationState = {
      phase: 'Succeeded',
      message: 'successfully synced (all tasks run)',
      startedAt: started,
      finishedAt: now,
      operation: { sync: { revision } },
      syncResult: { revision, ...(signer ? { signer } : {}), resources: comparison.resources },
    };
    const history = prev.history ?? [];
    status.history = [...history, { revision, deployedAt: now, ...(signer ? { signer } : {}), id: (history.at(-1)?.id ?? -1) + 1 }].slice(-10);
    // no Event on success: status.history records deployments, and every durable store write counts at scale
    return true;
  }
  return false;
}

/** Run the steps and build the one status this reconcile writes. */
export async function reconcileApplication(app: Application, deps: ReconcileDeps, manualSync = false): Promise<ReconcileOutcome> {
  const started = deps.now().toISOString();
  const ctx: ReconcileContext = { app: structuredClone(app), deps, manualSync, started };
  const seen: { revision?: string; signature?: SignatureStatus } = {};
  let failure: ReconcileFailure | undefined;
  let done: Reconciled | undefined;
  try {
    done = await runSteps(ctx, seen);
  } catch (err) {
    failure = err instanceof ReconcileFailure ? err : transient('ComparisonError', 'InternalError', String(err));
  }
  const now = deps.now().toISOString();
  const prev = ctx.app.status ?? {};
  const status: ApplicationStatus = structuredClone(prev);
  const events: ReconcileOutcome['events'] = [];
  const src = ctx.app.spec?.source;
  const destination = ctx.app.spec?.destination;
  status.reconciledAt = now;
  if (ctx.app.metadata.generation !== undefined) status.observedGeneration = ctx.app.metadata.generation;
  if (seen.signature) status.signature = seen.signature;
  const keep = (prev.conditions ?? []).filter((c) => !ERROR_CONDITIONS.has(c.type));
  let result: ReconcileOutcome['result'] = 'compared';
  if (failure) {
    const old = (prev.conditions ?? []).find((c) => c.type === failure!.conditionType && c.message === failure!.message);
    status.conditions = [
      ...keep,
      { type: failure.conditionType, status: 'True', reason: failure.reason, message: failure.message, lastTransitionTime: old?.lastTransitionTime ?? now },
    ];
    const lastResult = prev.operationState?.syncResult;
    const attempted = seen.revision;
    const errorOp = {
      phase: 'Error' as const,
      message: failure.message,
      startedAt: started,
      finishedAt: now,
      operation: { sync: attempted ? { revision: attempted } : {} },
      ...(lastResult ? { syncResult: lastResult } : {}),
    };
    // status.sync speaks of the revision the target resolves to now (the one refused), never
    // of an earlier one: the last good revision stays in operationState.syncResult and history
    const { revision: _before, ...sync } = prev.sync ?? {};
    const current = attempted ? { revision: attempted } : {};
    if (failure.opts.syncError) {
      // the sync attempt is refused: nothing applied, the last synced state is kept
      status.sync = { ...sync, status: 'Sync Error', ...current, comparedTo: { ...(src ? { source: src } : {}), ...(destination ? { destination } : {}) } };
      status.operationState = errorOp;
      result = 'refused';
    } else {
      // Synced only while the target still resolves to the synced revision (a later step
      // failed); a repository that does not answer leaves the revision unknown: Unknown
      const still = prev.sync?.status === 'Synced' && attempted !== undefined && attempted === prev.sync.revision;
      status.sync = { ...sync, status: still ? 'Synced' : 'Unknown', ...current };
      // a sync that was asked for and could not run is an operation that failed, not the last one's result
      if (ctx.manualSync) status.operationState = errorOp;
      result = 'failed';
    }
    if (failure.opts.eventReason) events.push({ type: 'Warning', reason: failure.opts.eventReason, message: failure.message });
    if (failure.opts.ownEvent && failure.reason !== failure.opts.eventReason)
      events.push({ type: 'Warning', reason: failure.reason, message: failure.message });
  } else if (done && reconciledStatus(status, prev, done, keep, started, now, src, destination)) {
    result = 'synced';
  }
  return { status, ...(failure ? { failure } : {}), events, result };
}
