// GitOps: Applications synced from Git only at revisions signed by a key the
// Application's project lists and the controller imported: legacy signatureKeys or
// Argo CD 3.5's sourceIntegrity policies, head or strict (docs/gitops.md).
export { GitOpsController, IN_CLUSTER_SERVERS, type GitOpsControllerOptions } from './controller.js';
export { KeyStore, type KeyProblem } from './key-store.js';
export { SshSignerStore, ALLOWED_SIGNERS_KEY, type SshSignerInfo } from './ssh-signer-store.js';
export { RepoCache, type ResolvedRevision, type ManifestFile } from './git-cache.js';
export { renderManifests } from './manifests.js';
export { normalizeRepoURL, repoIdentity, sameRepoURL, type NormalizedRepoURL } from './repo-url.js';
export { globMatch } from '../../base/glob/index.js';
export { ensureDefaultProject, DEFAULT_PROJECT } from './default-project.js';
export { sourceRepoAllowed, destinationAllowed, resourceAllowed, enforcesSignatures, signatureKeyIDs } from './project.js';
export { integrityPolicyFor, policyMatches, type IntegrityPolicy, type PolicyLookup } from './source-integrity.js';
export { HistoryVerifier, judge, type CommitSource, type CommitVerdict, type HistoryOutcome, type HistoryFailure } from './strict-history.js';
export { reconcileApplication, STEPS, TRACKING_LABEL, type ReconcileDeps, type ReconcileOutcome } from './reconcile.js';
export { ReconcileFailure, type FailureKind } from './failure.js';
export { ADMIN_SECRET, ADMIN_USER, ensureAdminSecret, issueToken, checkToken, passwordMatches, type AdminAccount } from './admin.js';
export { startApiServer, type ApiServer, type ApiServerOptions, type ApiMount, type ApiCaller } from './api-server.js';
export { LoginLimiter, loginLimitsFromEnv, DEFAULT_LOGIN_LIMITS, type LoginLimits } from './login-limiter.js';
export { readWebhookSecrets, webhookRefusal, type WebhookSecrets } from './webhook-auth.js';
export { ensureServingCertificate, selfSignedCertificate } from './tls.js';
export { createGitOpsMetrics, type GitOpsMetrics } from './metrics.js';
export type {
  AppProject,
  AppProjectSpec,
  Application,
  ApplicationSpec,
  ApplicationStatus,
  SignatureStatus,
  SourceIntegrity,
  SourceIntegrityGitPolicy,
} from './types.js';
export { startGitOpsService, type GitOpsService, type GitOpsServiceOptions } from './service.js';
export { createApiHandlers, ApiError, type ApiHandlers } from './api-handlers.js';
export { createArgoRpcHandler } from './argocd-rpc.js';
export { jsonToMessage, messageToJson } from './argocd-json.js';
export { claimsSourceIntegrity, projectSpecFromRpc } from './rpc-project-spec.js';
