// AppProject and Application as argoproj.io/v1alpha1 defines them (the fields strait uses).
import type { KubeObject } from '../../platform/store/index.js';

export interface GroupKind {
  group: string;
  kind: string;
}

export interface AppProjectSpec {
  description?: string;
  sourceRepos?: string[];
  destinations?: { server?: string; namespace?: string; name?: string }[];
  clusterResourceWhitelist?: GroupKind[];
  namespaceResourceWhitelist?: GroupKind[];
  signatureKeys?: { keyID: string }[];
  /** Argo CD 3.5's source integrity policies; refused together with a non-empty signatureKeys */
  sourceIntegrity?: SourceIntegrity;
  /** strait extension: SSH signers allowed to sign (docs/gitops.md "SSH signatures") */
  sshSigners?: { fingerprint?: string; principal?: string }[];
}

/** AppProject spec.sourceIntegrity (Argo CD 3.5, pkg/apis/application/v1alpha1/source_integrity.go). */
export interface SourceIntegrity {
  git?: {
    policies: SourceIntegrityGitPolicy[];
    /** strait extension (not in Argo CD): a repository no policy matches is refused, not left unverified */
    requireMatch?: boolean;
  };
  /** Helm provenance policies: accepted and kept, never applied (strait syncs Git sources only) */
  helm?: unknown;
}

export type GpgMode = 'none' | 'head' | 'strict';

export interface SourceIntegrityGitPolicy {
  /** globs over repository URLs; a "!" prefix excludes */
  repos: { url: string }[];
  gpg: { mode: GpgMode; keys?: string[] };
  /** strait extension (not in Argo CD): who may sign beyond the key list (docs/gitops.md) */
  strait?: StraitSignerRules;
}

export interface StraitSignerRules {
  /** globs over the signing key's verified user IDs ("Name <email>"); one must match */
  signerIdentities?: string[];
  /** the committer's e-mail must be the e-mail of the signer's (matching) verified user ID */
  committerEmailMatchesSigner?: boolean;
}
export type AppProject = KubeObject<AppProjectSpec>;

export interface ApplicationSource {
  repoURL?: string;
  path?: string;
  targetRevision?: string;
  chart?: string;
  helm?: unknown;
}

export interface ApplicationSpec {
  project?: string;
  source?: ApplicationSource;
  destination?: { server?: string; namespace?: string; name?: string };
  syncPolicy?: {
    automated?: { prune?: boolean; selfHeal?: boolean } | null;
    syncOptions?: string[];
  };
}

export interface AppCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface ResourceStatus {
  group: string;
  version: string;
  kind: string;
  namespace: string;
  name: string;
  status: 'Synced' | 'OutOfSync';
}

export interface SignatureStatus {
  status: string;
  /** head or strict (strict also walked the history) */
  mode?: GpgMode;
  /** what set the rules: "signatureKeys", or "sourceIntegrity.git.policies[N]" */
  policy?: string;
  /** strict: commits whose signatures were checked for this revision (cached verdicts included) */
  commitsChecked?: number;
  /** strict: the seal commits the walk stopped at (Argocd-gpg-seal) */
  seals?: string[];
  /** the first commit that failed (strict: the oldest failing commit after the trusted points), full ID */
  failedCommit?: string;
  /** its author, "Name <email>" */
  failedAuthor?: string;
  keyID: string;
  primaryKeyID: string;
  signer: string;
  message: string;
  /** which object carried the checked signature: the commit, or an annotated tag */
  verifiedObject: 'commit' | 'tag';
  objectSHA: string;
  enforced: boolean;
}

export interface ApplicationStatus {
  sync?: {
    status: 'Synced' | 'OutOfSync' | 'Sync Error' | 'Unknown';
    revision?: string;
    comparedTo?: { source?: ApplicationSource; destination?: ApplicationSpec['destination'] };
  };
  health?: { status: 'Healthy' | 'Missing' | 'Degraded' | 'Unknown' };
  operationState?: {
    /** Running: a sync started and has not ended (its process may have been killed: the next reconcile finishes it) */
    phase: 'Running' | 'Succeeded' | 'Error' | 'Failed';
    message: string;
    startedAt: string;
    finishedAt?: string;
    /** what the operation tried (Argo CD's operationState.operation): the revision of this attempt */
    operation?: { sync: { revision?: string } };
    syncResult?: { revision: string; signer?: string; resources: ResourceStatus[] };
  };
  conditions?: AppCondition[];
  signature?: SignatureStatus;
  resources?: ResourceStatus[];
  history?: { revision: string; deployedAt: string; signer?: string; id: number }[];
  reconciledAt?: string;
  observedGeneration?: number;
}
export type Application = KubeObject<ApplicationSpec, ApplicationStatus>;
