// What the key store (argocd-gpg-keys-cm) and the SSH allowed signers
// (argocd-ssh-allowed-signers-cm) share: one ConfigMap in the controller's namespace,
// loaded at start and followed by a watch (a change is effective at once), reloads
// serialized, a version bumped on each, entries that cannot be used reported once per
// change (log + Warning Event on the ConfigMap), and read-modify-write with optimistic
// concurrency for the API's changes.
import type { Logger } from 'pino';
import { isStraitError } from '../../base/errors/index.js';
import { Kinds } from '../../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';
import { Informer, eventHandlers } from '../../platform/controller/index.js';

export type ConfigMap = KubeObject & { data?: Record<string, string> };

export abstract class ConfigMapStore {
  /** bumped whenever the content changes; part of verification cache keys */
  version = 0;
  private informer: Informer | undefined;
  private lastProblems = '';
  private loading: Promise<void> = Promise.resolve();

  constructor(
    protected readonly store: ResourceStore,
    readonly namespace: string,
    readonly name: string,
    protected readonly log: Logger,
    /** for log lines: "the key store" */
    private readonly what: string,
  ) {}

  /** Load now, then follow the ConfigMap; `onChange` runs after each reload. */
  async start(onChange: () => void): Promise<void> {
    await this.reload();
    this.informer = new Informer(
      this.store,
      Kinds.ConfigMap,
      { namespace: this.namespace },
      eventHandlers(
        (ev) => {
          if (ev.object.metadata.name !== this.name) return;
          void this.reload().then(onChange, (err: unknown) => this.log.warn({ err }, `reloading ${this.what} failed`));
        },
        (err) => this.log.debug({ err }, 'watch ended; listing again'),
      ),
    ).start();
  }

  stop(): void {
    this.informer?.stop();
  }

  /** Read the ConfigMap and rebuild (serialized). */
  reload(): Promise<void> {
    this.loading = this.loading.then(
      () => this.load(),
      () => this.load(),
    );
    return this.loading;
  }

  private async load(): Promise<void> {
    const cm = await this.store.get<ConfigMap>(Kinds.ConfigMap, this.name, this.namespace);
    const problems = await this.rebuild(cm?.data ?? {});
    this.version++;
    const summary = JSON.stringify(problems);
    if (summary === this.lastProblems) return;
    this.lastProblems = summary;
    for (const p of problems) {
      this.log.warn({ configMap: this.name, ...p.log }, p.logMessage);
      await this.store
        .recordEvent({
          involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: this.name, namespace: this.namespace },
          type: 'Warning',
          reason: p.reason,
          message: p.message,
          source: 'strait-gitops',
        })
        .catch(() => undefined);
    }
  }

  /** Take the ConfigMap's data; the entries that cannot be used, as they are reported. */
  protected abstract rebuild(data: Record<string, string>): Promise<{ reason: string; message: string; logMessage: string; log: Record<string, unknown> }[]>;

  /** Read-modify-write of the ConfigMap's data with optimistic concurrency, then reload. */
  protected async modifyData(change: (data: Record<string, string>) => Record<string, string>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const cm = await this.store.get<ConfigMap>(Kinds.ConfigMap, this.name, this.namespace);
      const data = change({ ...(cm?.data ?? {}) });
      try {
        if (cm) {
          await this.store.update<ConfigMap>({ ...cm, data });
        } else {
          await this.store.apply<ConfigMap>(
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: this.name, namespace: this.namespace, labels: { 'app.kubernetes.io/part-of': 'argocd' } },
              data,
            },
            { fieldManager: 'strait-gitops' },
          );
        }
        break;
      } catch (err) {
        if (attempt < 5 && isStraitError(err) && (err.code === 'STRAIT_ERR_CONFLICT' || err.code === 'STRAIT_ERR_ALREADY_EXISTS')) continue;
        throw err;
      }
    }
    await this.reload();
  }
}
