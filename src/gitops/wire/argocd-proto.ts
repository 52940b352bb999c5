// Argo CD's gRPC wire format: the messages and services of argo-cd v3's
//   server/{session,version,settings,account,gpgkey,application,project}/*.proto
//   pkg/apis/application/v1alpha1/generated.proto  (Application, AppProject, GnuPGPublicKey, ...)
//   k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto  (ObjectMeta, ListMeta, Time, GroupKind)
// written by hand as descriptors: only the messages and fields strait fills or reads, each with
// upstream's package, name and field number (the numbers are the protocol; names give the JSON
// names, which are also Argo CD's REST shapes). Fields left out are skipped by decoders on both
// sides. docs/gitops.md lists the RPCs served. The two go-to-protobuf files (meta/v1 and
// v1alpha1 generated.proto) are proto2 as upstream's are: a field set to its zero value (an
// empty `group` of a core-group GroupKind, `enabled: false`) is present on the wire and in JSON.
import { createFileRegistry, fromJson, type DescMessage, type DescService, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type DescriptorProtoJson, type FieldDescriptorProtoJson, type FileDescriptorProtoJson } from '@bufbuild/protobuf/wkt';

/** [name, number, type, repeated?] (names have no underscores, so the JSON name is the name); type is a scalar, `map` (string -> string), or a message name
 *  (`.pkg.Name` fully qualified, else in the same package). */
type Field = readonly [string, number, string, ('repeated' | 'map')?];
type Messages = Record<string, readonly Field[]>;
type Rpcs = Record<string, readonly [input: string, output: string, streaming?: 'stream']>;

const SCALARS: Record<string, FieldDescriptorProtoJson['type']> = { string: 'TYPE_STRING', bool: 'TYPE_BOOL', int64: 'TYPE_INT64', int32: 'TYPE_INT32' };

function field(pkg: string, msg: string, [name, number, type, mode]: Field): { field: FieldDescriptorProtoJson; nested?: DescriptorProtoJson } {
  if (mode === 'map') {
    const entry = `${name[0]!.toUpperCase()}${name.slice(1)}Entry`;
    return {
      field: { name, jsonName: name, number, label: 'LABEL_REPEATED', type: 'TYPE_MESSAGE', typeName: `.${pkg}.${msg}.${entry}` },
      nested: {
        name: entry,
        options: { mapEntry: true },
        field: [
          { name: 'key', number: 1, label: 'LABEL_OPTIONAL', type: 'TYPE_STRING', jsonName: 'key' },
          { name: 'value', number: 2, label: 'LABEL_OPTIONAL', type: 'TYPE_STRING', jsonName: 'value' },
        ],
      },
    };
  }
  const label = mode === 'repeated' ? 'LABEL_REPEATED' : 'LABEL_OPTIONAL';
  const scalar = SCALARS[type];
  if (scalar !== undefined) return { field: { name, jsonName: name, number, label, type: scalar } };
  return { field: { name, jsonName: name, number, label, type: 'TYPE_MESSAGE', typeName: type.startsWith('.') ? type : `.${pkg}.${type}` } };
}

function file(
  name: string,
  pkg: string,
  deps: string[],
  messages: Messages,
  services: Record<string, Rpcs> = {},
  syntax: 'proto2' | 'proto3' = 'proto3',
): FileDescriptorProtoJson {
  const msgType = (n: string): string => (n.startsWith('.') ? n : `.${pkg}.${n}`);
  return {
    name,
    package: pkg,
    dependency: deps,
    syntax,
    messageType: Object.entries(messages).map(([m, fields]) => {
      const built = fields.map((f) => field(pkg, m, f));
      return { name: m, field: built.map((b) => b.field), nestedType: built.flatMap((b) => (b.nested ? [b.nested] : [])) };
    }),
    service: Object.entries(services).map(([s, rpcs]) => ({
      name: s,
      method: Object.entries(rpcs).map(([m, [i, o, stream]]) => ({
        name: m,
        inputType: msgType(i),
        outputType: msgType(o),
        serverStreaming: stream === 'stream',
      })),
    })),
  };
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const V1A1 = 'github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1';
const meta = (n: string): string => `.${META}.${n}`;
const v1a1 = (n: string): string => `.${V1A1}.${n}`;
const META_FILE = 'k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto';
const V1A1_FILE = 'github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1/generated.proto';

const files: FileDescriptorProtoJson[] = [
  file('google/protobuf/empty.proto', 'google.protobuf', [], { Empty: [] }),
  file(
    META_FILE,
    META,
    [],
    {
      ObjectMeta: [
        ['name', 1, 'string'],
        ['namespace', 3, 'string'],
        ['uid', 5, 'string'],
        ['resourceVersion', 6, 'string'],
        ['generation', 7, 'int64'],
        ['creationTimestamp', 8, 'Time'],
        ['labels', 11, 'string', 'map'],
        ['annotations', 12, 'string', 'map'],
        ['finalizers', 14, 'string', 'repeated'],
      ],
      ListMeta: [['resourceVersion', 2, 'string']],
      Time: [
        ['seconds', 1, 'int64'],
        ['nanos', 2, 'int32'],
      ],
      GroupKind: [
        ['group', 1, 'string'],
        ['kind', 2, 'string'],
      ],
    },
    {},
    'proto2',
  ),
  file(
    V1A1_FILE,
    V1A1,
    [META_FILE],
    {
      GnuPGPublicKey: [
        ['keyID', 1, 'string'],
        ['fingerprint', 2, 'string'],
        ['owner', 3, 'string'],
        ['trust', 4, 'string'],
        ['subType', 5, 'string'],
        ['keyData', 6, 'string'],
      ],
      GnuPGPublicKeyList: [
        ['metadata', 1, meta('ListMeta')],
        ['items', 2, 'GnuPGPublicKey', 'repeated'],
      ],
      Application: [
        ['metadata', 1, meta('ObjectMeta')],
        ['spec', 2, 'ApplicationSpec'],
        ['status', 3, 'ApplicationStatus'],
        ['operation', 4, 'Operation'],
      ],
      ApplicationList: [
        ['metadata', 1, meta('ListMeta')],
        ['items', 2, 'Application', 'repeated'],
      ],
      ApplicationSpec: [
        ['source', 1, 'ApplicationSource'],
        ['destination', 2, 'ApplicationDestination'],
        ['project', 3, 'string'],
        ['syncPolicy', 4, 'SyncPolicy'],
      ],
      ApplicationSource: [
        ['repoURL', 1, 'string'],
        ['path', 2, 'string'],
        ['targetRevision', 4, 'string'],
        ['chart', 12, 'string'],
        ['ref', 13, 'string'],
        ['name', 14, 'string'],
      ],
      ApplicationDestination: [
        ['server', 1, 'string'],
        ['namespace', 2, 'string'],
        ['name', 3, 'string'],
      ],
      SyncPolicy: [
        ['automated', 1, 'SyncPolicyAutomated'],
        ['syncOptions', 2, 'string', 'repeated'],
      ],
      SyncPolicyAutomated: [
        ['prune', 1, 'bool'],
        ['selfHeal', 2, 'bool'],
        ['allowEmpty', 3, 'bool'],
        ['enabled', 4, 'bool'],
      ],
      ApplicationStatus: [
        ['resources', 1, 'ResourceStatus', 'repeated'],
        ['sync', 2, 'SyncStatus'],
        ['health', 3, 'AppHealthStatus'],
        ['history', 4, 'RevisionHistory', 'repeated'],
        ['conditions', 5, 'ApplicationCondition', 'repeated'],
        ['reconciledAt', 6, meta('Time')],
        ['operationState', 7, 'OperationState'],
        ['sourceType', 9, 'string'],
        ['controllerNamespace', 13, 'string'],
      ],
      SyncStatus: [
        ['status', 1, 'string'],
        ['comparedTo', 2, 'ComparedTo'],
        ['revision', 3, 'string'],
        ['revisions', 4, 'string', 'repeated'],
      ],
      ComparedTo: [
        ['source', 1, 'ApplicationSource'],
        ['destination', 2, 'ApplicationDestination'],
      ],
      AppHealthStatus: [
        ['status', 1, 'string'],
        ['message', 2, 'string'],
        ['lastTransitionTime', 3, meta('Time')],
      ],
      HealthStatus: [
        ['status', 1, 'string'],
        ['message', 2, 'string'],
      ],
      Operation: [['sync', 1, 'SyncOperation']],
      SyncOperation: [
        ['revision', 1, 'string'],
        ['prune', 2, 'bool'],
        ['dryRun', 3, 'bool'],
      ],
      OperationState: [
        ['operation', 1, 'Operation'],
        ['phase', 2, 'string'],
        ['message', 3, 'string'],
        ['syncResult', 4, 'SyncOperationResult'],
        ['startedAt', 6, meta('Time')],
        ['finishedAt', 7, meta('Time')],
        ['retryCount', 8, 'int64'],
      ],
      SyncOperationResult: [
        ['resources', 1, 'ResourceResult', 'repeated'],
        ['revision', 2, 'string'],
        ['source', 3, 'ApplicationSource'],
      ],
      ResourceResult: [
        ['group', 1, 'string'],
        ['version', 2, 'string'],
        ['kind', 3, 'string'],
        ['namespace', 4, 'string'],
        ['name', 5, 'string'],
        ['status', 6, 'string'],
        ['message', 7, 'string'],
        ['hookPhase', 9, 'string'],
        ['syncPhase', 10, 'string'],
      ],
      ApplicationCondition: [
        ['type', 1, 'string'],
        ['message', 2, 'string'],
        ['lastTransitionTime', 3, meta('Time')],
      ],
      ResourceStatus: [
        ['group', 1, 'string'],
        ['version', 2, 'string'],
        ['kind', 3, 'string'],
        ['namespace', 4, 'string'],
        ['name', 5, 'string'],
        ['status', 6, 'string'],
        ['health', 7, 'HealthStatus'],
        ['hook', 8, 'bool'],
        ['requiresPruning', 9, 'bool'],
      ],
      RevisionHistory: [
        ['revision', 2, 'string'],
        ['deployedAt', 4, meta('Time')],
        ['id', 5, 'int64'],
        ['source', 6, 'ApplicationSource'],
      ],
      ApplicationWatchEvent: [
        ['type', 1, 'string'],
        ['application', 2, 'Application'],
      ],
      AppProject: [
        ['metadata', 1, meta('ObjectMeta')],
        ['spec', 2, 'AppProjectSpec'],
      ],
      AppProjectList: [
        ['metadata', 1, meta('ListMeta')],
        ['items', 2, 'AppProject', 'repeated'],
      ],
      AppProjectSpec: [
        ['sourceRepos', 1, 'string', 'repeated'],
        ['destinations', 2, 'ApplicationDestination', 'repeated'],
        ['description', 3, 'string'],
        ['clusterResourceWhitelist', 5, meta('GroupKind'), 'repeated'],
        ['namespaceResourceBlacklist', 6, meta('GroupKind'), 'repeated'],
        ['namespaceResourceWhitelist', 9, meta('GroupKind'), 'repeated'],
        ['signatureKeys', 10, 'SignatureKey', 'repeated'],
        ['clusterResourceBlacklist', 11, meta('GroupKind'), 'repeated'],
        ['sourceNamespaces', 12, 'string', 'repeated'],
        ['sourceIntegrity', 15, 'SourceIntegrity'],
      ],
      SignatureKey: [['keyID', 1, 'string']],
      // Argo CD 3.5 (v3.5.7's generated.proto): git policies only; strait's `helm` and a policy's `strait` rules have no field
      SourceIntegrity: [['git', 1, 'SourceIntegrityGit']],
      SourceIntegrityGit: [['policies', 1, 'SourceIntegrityGitPolicy', 'repeated']],
      SourceIntegrityGitPolicy: [
        ['repos', 1, 'SourceIntegrityGitPolicyRepo', 'repeated'],
        ['gpg', 2, 'SourceIntegrityGitPolicyGPG'],
      ],
      SourceIntegrityGitPolicyRepo: [['url', 1, 'string']],
      SourceIntegrityGitPolicyGPG: [
        ['mode', 1, 'string'],
        ['keys', 3, 'string', 'repeated'],
      ],
    },
    {},
    'proto2',
  ),
  file(
    'server/session/session.proto',
    'session',
    [],
    {
      SessionCreateRequest: [
        ['username', 1, 'string'],
        ['password', 2, 'string'],
        ['token', 3, 'string'],
      ],
      SessionDeleteRequest: [],
      SessionResponse: [['token', 1, 'string']],
      GetUserInfoRequest: [],
      GetUserInfoResponse: [
        ['loggedIn', 1, 'bool'],
        ['username', 2, 'string'],
        ['iss', 3, 'string'],
        ['groups', 4, 'string', 'repeated'],
      ],
    },
    {
      SessionService: {
        GetUserInfo: ['GetUserInfoRequest', 'GetUserInfoResponse'],
        Create: ['SessionCreateRequest', 'SessionResponse'],
        Delete: ['SessionDeleteRequest', 'SessionResponse'],
      },
    },
  ),
  file(
    'server/version/version.proto',
    'version',
    ['google/protobuf/empty.proto'],
    {
      VersionMessage: [
        ['Version', 1, 'string'],
        ['BuildDate', 2, 'string'],
        ['GitCommit', 3, 'string'],
        ['GitTag', 4, 'string'],
        ['GitTreeState', 5, 'string'],
        ['GoVersion', 6, 'string'],
        ['Compiler', 7, 'string'],
        ['Platform', 8, 'string'],
        ['KustomizeVersion', 10, 'string'],
        ['HelmVersion', 11, 'string'],
        ['KubectlVersion', 12, 'string'],
        ['JsonnetVersion', 13, 'string'],
        ['ExtraBuildInfo', 14, 'string'],
      ],
    },
    { VersionService: { Version: ['.google.protobuf.Empty', 'VersionMessage'] } },
  ),
  file(
    'server/settings/settings.proto',
    'cluster',
    [],
    {
      SettingsQuery: [],
      Settings: [
        ['url', 1, 'string'],
        ['appLabelKey', 4, 'string'],
        ['statusBadgeEnabled', 6, 'bool'],
        ['userLoginsDisabled', 11, 'bool'],
        ['passwordPattern', 17, 'string'],
        ['trackingMethod', 18, 'string'],
        ['execEnabled', 22, 'bool'],
        ['controllerNamespace', 23, 'string'],
        ['appsInAnyNamespaceEnabled', 24, 'bool'],
        ['impersonationEnabled', 25, 'bool'],
        ['hydratorEnabled', 28, 'bool'],
      ],
    },
    { SettingsService: { Get: ['SettingsQuery', 'Settings'] } },
  ),
  file(
    'server/account/account.proto',
    'account',
    [],
    {
      CanIRequest: [
        ['resource', 1, 'string'],
        ['action', 2, 'string'],
        ['subresource', 3, 'string'],
      ],
      CanIResponse: [['value', 1, 'string']],
      GetAccountRequest: [['name', 1, 'string']],
      Account: [
        ['name', 1, 'string'],
        ['enabled', 2, 'bool'],
        ['capabilities', 3, 'string', 'repeated'],
        ['tokens', 4, 'Token', 'repeated'],
      ],
      AccountsList: [['items', 1, 'Account', 'repeated']],
      Token: [
        ['id', 1, 'string'],
        ['issuedAt', 2, 'int64'],
        ['expiresAt', 3, 'int64'],
      ],
      ListAccountRequest: [],
    },
    {
      AccountService: {
        CanI: ['CanIRequest', 'CanIResponse'],
        ListAccounts: ['ListAccountRequest', 'AccountsList'],
        GetAccount: ['GetAccountRequest', 'Account'],
      },
    },
  ),
  file(
    'server/gpgkey/gpgkey.proto',
    'gpgkey',
    [V1A1_FILE],
    {
      GnuPGPublicKeyQuery: [['keyID', 1, 'string']],
      GnuPGPublicKeyCreateRequest: [
        ['publickey', 1, v1a1('GnuPGPublicKey')],
        ['upsert', 2, 'bool'],
      ],
      GnuPGPublicKeyCreateResponse: [
        ['created', 1, v1a1('GnuPGPublicKeyList')],
        ['skipped', 2, 'string', 'repeated'],
      ],
      GnuPGPublicKeyResponse: [],
    },
    {
      GPGKeyService: {
        List: ['GnuPGPublicKeyQuery', v1a1('GnuPGPublicKeyList')],
        Get: ['GnuPGPublicKeyQuery', v1a1('GnuPGPublicKey')],
        Create: ['GnuPGPublicKeyCreateRequest', 'GnuPGPublicKeyCreateResponse'],
        Delete: ['GnuPGPublicKeyQuery', 'GnuPGPublicKeyResponse'],
      },
    },
  ),
  file(
    'server/application/application.proto',
    'application',
    [V1A1_FILE],
    {
      ApplicationQuery: [
        ['name', 1, 'string'],
        ['refresh', 2, 'string'],
        ['projects', 3, 'string', 'repeated'],
        ['resourceVersion', 4, 'string'],
        ['selector', 5, 'string'],
        ['repo', 6, 'string'],
        ['appNamespace', 7, 'string'],
        ['project', 8, 'string', 'repeated'],
      ],
      ApplicationSyncRequest: [
        ['name', 1, 'string'],
        ['revision', 2, 'string'],
        ['dryRun', 3, 'bool'],
        ['prune', 4, 'bool'],
        ['appNamespace', 12, 'string'],
        ['project', 13, 'string'],
      ],
    },
    {
      ApplicationService: {
        List: ['ApplicationQuery', v1a1('ApplicationList')],
        Get: ['ApplicationQuery', v1a1('Application')],
        Watch: ['ApplicationQuery', v1a1('ApplicationWatchEvent'), 'stream'],
        Sync: ['ApplicationSyncRequest', v1a1('Application')],
      },
    },
  ),
  file(
    'server/project/project.proto',
    'project',
    [V1A1_FILE],
    {
      ProjectCreateRequest: [
        ['project', 1, v1a1('AppProject')],
        ['upsert', 2, 'bool'],
      ],
      ProjectQuery: [['name', 1, 'string']],
      ProjectUpdateRequest: [['project', 1, v1a1('AppProject')]],
      // repositories (3) and clusters (4) are Repository / Cluster messages strait has none of
      DetailedProjectsResponse: [
        ['globalProjects', 1, v1a1('AppProject'), 'repeated'],
        ['project', 2, v1a1('AppProject')],
      ],
    },
    {
      ProjectService: {
        Create: ['ProjectCreateRequest', v1a1('AppProject')],
        List: ['ProjectQuery', v1a1('AppProjectList')],
        Get: ['ProjectQuery', v1a1('AppProject')],
        Update: ['ProjectUpdateRequest', v1a1('AppProject')],
        GetDetailedProject: ['ProjectQuery', 'DetailedProjectsResponse'],
      },
    },
  ),
];

let registry: FileRegistry | undefined;

/** All of the above as one registry (built once, on first use). */
export function argocdRegistry(): FileRegistry {
  registry ??= createFileRegistry(fromJson(FileDescriptorSetSchema, { file: files }));
  return registry;
}

export function argocdService(typeName: string): DescService {
  const s = argocdRegistry().getService(typeName);
  if (!s) throw new Error(`no descriptor for service ${typeName}`);
  return s;
}

export function argocdMessage(typeName: string): DescMessage {
  const m = argocdRegistry().getMessage(typeName);
  if (!m) throw new Error(`no descriptor for message ${typeName}`);
  return m;
}

/** The services strait serves, by full name (for docs and the router). */
export const ARGOCD_SERVICES = [
  'session.SessionService',
  'version.VersionService',
  'cluster.SettingsService',
  'account.AccountService',
  'gpgkey.GPGKeyService',
  'application.ApplicationService',
  'project.ProjectService',
] as const;

export const K8S_TIME = `${META}.Time`;
/** A message of argo-cd's pkg/apis/application/v1alpha1 by its short name (`AppProjectSpec`). */
export const V1A1_MESSAGE = (name: string): string => `${V1A1}.${name}`;
