// The key store: ConfigMap argocd-gpg-keys-cm (name from GPG_KEYS_CM) in the
// controller's namespace. One entry per key: name = 16-hex ID of the primary key,
// value = the ASCII-armored public key. An entry whose name is not its key's ID, or
// whose value holds no key or several keys, is reported (log + Warning Event on the
// ConfigMap) and ignored. The ConfigMap is watched; a change is effective at once.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { E, isStraitError } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import { GPG_KEYS_CM, Kinds } from '../../platform/resources/index.js';
import { Keyring, normalizeKeyID, readPublicKeys, type KeyInfo } from '../../platform/signatures/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';
import { Informer, eventHandlers } from '../../platform/controller/index.js';

export interface KeyProblem {
  entry: string;
  reason: string;
}

type ConfigMap = KubeObject & { data?: Record<string, string> };

export class KeyStore {
  keyring = new Keyring();
  /** bumped whenever the keyring changes; part of verification cache keys */
  version = 0;
  problems: KeyProblem[] = [];
  private readonly parsed = new Map<string, Awaited<ReturnType<typeof readPublicKeys>>>();
  private informer: Informer | undefined;
  private lastProblems = '';
  private loading: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ResourceStore,
    readonly namespace: string,
    readonly name: string = GPG_KEYS_CM,
    private readonly log: Logger = silentLogger(),
  ) {}

  /** Load now, then follow the ConfigMap; `onChange` runs after each reload. */
  async start(onChange: () => void): Promise<void> {
    await this.reload();
    this.informer = new Informer(this.store, Kinds.ConfigMap, { namespace: this.namespace }, eventHandlers((ev) => {
      if (ev.object.metadata.name !== this.name) return;
      void this.reload().then(onChange, (err: unknown) => this.log.warn({ err }, 'reloading the key store failed'));
    }, (err) => this.log.debug({ err }, 'watch ended; listing again'))).start();
  }

  stop(): void {
    this.informer?.stop();
  }

  /** Read the ConfigMap and rebuild the keyring (serialized). */
  reload(): Promise<void> {
    this.loading = this.loading.then(() => this.doReload(), () => this.doReload());
    return this.loading;
  }

  private async doReload(): Promise<void> {
    const cm = await this.store.get<ConfigMap>(Kinds.ConfigMap, this.name, this.namespace);
    const data = cm?.data ?? {};
    const ring = new Keyring();
    const problems: KeyProblem[] = [];
    for (const [entry, value] of Object.entries(data).sort(([a], [b]) => a.localeCompare(b))) {
      if (!/^[0-9A-Fa-f]{16}$/.test(entry)) {
        problems.push({ entry, reason: `entry name ${JSON.stringify(entry)} is not a 16-hex key ID` });
        continue;
      }
      const hash = createHash('sha256').update(value).digest('hex');
      let keys = this.parsed.get(hash);
      if (!keys) {
        try {
          keys = await readPublicKeys(value);
        } catch (err) {
          problems.push({ entry, reason: `holds no public key: ${isStraitError(err) ? err.message : String(err)}` });
          continue;
        }
        this.parsed.set(hash, keys);
      }
      if (keys.length !== 1) {
        problems.push({ entry, reason: `holds ${keys.length} keys; put each key in its own entry` });
        continue;
      }
      const key = keys[0]!;
      const id = key.getKeyID().toHex().toUpperCase();
      if (id !== entry.toUpperCase()) {
        problems.push({ entry, reason: `entry name ${entry} differs from its key's ID ${id}` });
        continue;
      }
      await ring.add(key, value);
    }
    this.keyring = ring;
    this.version++;
    this.problems = problems;
    const summary = JSON.stringify(problems);
    if (summary !== this.lastProblems) {
      this.lastProblems = summary;
      for (const p of problems) {
        this.log.warn({ configMap: this.name, entry: p.entry }, `ignoring key store entry: ${p.reason}`);
        await this.store.recordEvent({
          involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: this.name, namespace: this.namespace },
          type: 'Warning', reason: 'InvalidKeyEntry', message: `entry ${p.entry} ignored: ${p.reason}`, source: 'strait-gitops',
        }).catch(() => undefined);
      }
    }
  }

  list(): KeyInfo[] {
    return this.keyring.list().map((e) => e.info);
  }

  get(id: string): KeyInfo {
    const keyID = normalizeKeyID(id);
    const e = this.keyring.get(keyID);
    if (!e) throw E.gpgKeyNotFound(keyID);
    return e.info;
  }

  /** Import every key of `armored`; existing IDs are skipped unless `upsert`. */
  async add(armored: string, upsert = false): Promise<{ created: KeyInfo[]; skipped: string[] }> {
    const keys = await readPublicKeys(armored);
    const created: KeyInfo[] = [];
    const skipped: string[] = [];
    await this.modify((data) => {
      for (const key of keys) {
        const id = key.getKeyID().toHex().toUpperCase();
        if (data[id] !== undefined && !upsert) {
          skipped.push(id);
          continue;
        }
        data[id] = key.armor();
      }
    });
    for (const key of keys) {
      const id = key.getKeyID().toHex().toUpperCase();
      if (!skipped.includes(id)) {
        const e = this.keyring.get(id);
        if (e) created.push(e.info);
      }
    }
    return { created, skipped };
  }

  async remove(id: string): Promise<void> {
    const keyID = normalizeKeyID(id);
    let found = false;
    await this.modify((data) => {
      for (const k of Object.keys(data)) {
        if (k.toUpperCase() === keyID) {
          delete data[k];
          found = true;
        }
      }
    });
    if (!found) throw E.gpgKeyNotFound(keyID);
  }

  /** Read-modify-write of the ConfigMap with optimistic concurrency, then reload. */
  private async modify(change: (data: Record<string, string>) => void): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const cm = await this.store.get<ConfigMap>(Kinds.ConfigMap, this.name, this.namespace);
      const data = { ...(cm?.data ?? {}) };
      change(data);
      try {
        if (cm) {
          await this.store.update<ConfigMap>({ ...cm, data });
        } else {
          await this.store.apply<ConfigMap>({
            apiVersion: 'v1', kind: 'ConfigMap',
            metadata: { name: this.name, namespace: this.namespace, labels: { 'app.kubernetes.io/part-of': 'argocd' } },
            data,
          }, { fieldManager: 'strait-gitops' });
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
