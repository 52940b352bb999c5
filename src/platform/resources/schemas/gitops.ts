// AppProject and Application (docs/gitops.md; upstream argoproj.io/v1alpha1 field names).
import { anyObject, arr, bool, enumOf, kindSchema, obj, str, type Schema } from './builders.js';

const groupKind = obj({ group: str(), kind: str() }, ['group', 'kind']);
const destination = obj({ server: str(), namespace: str(), name: str() });
const source = obj(
  {
    repoURL: str({ minLength: 1, description: 'a non-empty repository URL' }),
    path: str(),
    targetRevision: str(),
    chart: str(),
    ref: str(),
    helm: anyObject,
    kustomize: anyObject,
    directory: anyObject,
    plugin: anyObject,
  },
  ['repoURL'],
);

const keyID = str({ pattern: '^([0-9A-Fa-f]{16}|[0-9A-Fa-f]{40})$', description: 'an OpenPGP key ID of 16 hex digits (or a 40-hex fingerprint)' });

/** Argo CD 3.5's spec.sourceIntegrity; `strait` in a policy is strait's extension (signer identity rules). */
const sourceIntegrity = obj({
  git: obj(
    {
      policies: arr(
        obj(
          {
            repos: arr(obj({ url: str({ minLength: 1, description: 'a glob over repository URLs ("!" in front excludes)' }) }, ['url']), { minItems: 1 }),
            gpg: obj({ mode: enumOf('none', 'head', 'strict'), keys: arr(keyID) }, ['mode']),
            strait: obj(
              {
                signerIdentities: arr(str({ minLength: 1, description: 'a glob over a signer\'s verified user ID, such as "* <*@example.com>"' })),
                committerEmailMatchesSigner: bool,
              },
              [],
              false,
            ),
          },
          ['repos', 'gpg'],
        ),
      ),
      // strait extension (docs/gitops.md "Repositories no policy names"): refuse them instead of leaving them unverified
      requireMatch: bool,
    },
    ['policies'],
  ),
  helm: anyObject,
});

export const gitopsSchemas: Record<string, Schema> = {
  AppProject: kindSchema({
    spec: obj({
      description: str(),
      sourceRepos: arr(str()),
      sourceNamespaces: arr(str()),
      destinations: arr(destination),
      clusterResourceWhitelist: arr(groupKind),
      namespaceResourceWhitelist: arr(groupKind),
      clusterResourceBlacklist: arr(groupKind),
      namespaceResourceBlacklist: arr(groupKind),
      signatureKeys: arr(obj({ keyID }, ['keyID'])),
      sourceIntegrity,
      // strait extension (docs/gitops.md "SSH signatures"): a key fingerprint and/or a principal pattern
      sshSigners: arr(
        obj({
          fingerprint: str({ pattern: '^SHA256:[A-Za-z0-9+/]{43}$', description: 'an SSH key fingerprint as ssh-keygen -l prints it (SHA256:…)' }),
          principal: str({ minLength: 1, description: "an OpenSSH pattern list matched against the signer's principals" }),
        }),
      ),
      roles: arr(anyObject),
      syncWindows: arr(anyObject),
      orphanedResources: anyObject,
    }),
    status: anyObject,
  }),
  Application: kindSchema(
    {
      spec: obj(
        {
          project: str({ minLength: 1, description: 'the name of an AppProject' }),
          source,
          sources: arr(source),
          destination,
          syncPolicy: obj({
            automated: obj({ prune: bool, selfHeal: bool, allowEmpty: bool }),
            syncOptions: arr(str()),
            retry: anyObject,
          }),
          ignoreDifferences: arr(anyObject),
          revisionHistoryLimit: { type: 'integer', minimum: 0 },
        },
        ['project', 'destination'],
      ),
      status: anyObject,
      operation: anyObject,
    },
    { required: ['spec'] },
  ),
};
