// The key store: ConfigMap argocd-gpg-keys-cm (name from GPG_KEYS_CM) in the
// controller's namespace. One entry per key: name = 16-hex ID of the primary key,
// value = the ASCII-armored public key. An entry whose name is not its key's ID, or
// whose value holds no key or several keys, is reported (log + Warning Event on the
// ConfigMap) and ignored. The ConfigMap is watched; a change is effective at once.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { E, isStraitError } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import { GPG_KEYS_CM } from '../../platform/resources/index.js';
import { Keyring, normalizeKeyID, readPublicKeys, type KeyInfo } from '../../platform/signatures/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { ConfigMapStore } from './configmap-store.js';

export interface KeyProblem {
  entry: string;
  reason: string;
}

export class KeyStore extends ConfigMapStore {
  keyring = new Keyring();
  problems: KeyProblem[] = [];
  private readonly parsed = new Map<string, Awaited<ReturnType<typeof readPublicKeys>>>();

  constructor(store: ResourceStore, namespace: string, name: string = GPG_KEYS_CM, log: Logger = silentLogger()) {
    super(store, namespace, name, log, 'the key store');
  }

  protected async rebuild(data: Record<string, string>): Promise<{ reason: string; message: string; logMessage: string; log: Record<string, unknown> }[]> {
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
    this.problems = problems;
    return problems.map((p) => ({
      reason: 'InvalidKeyEntry',
      message: `entry ${p.entry} ignored: ${p.reason}`,
      logMessage: `ignoring key store entry: ${p.reason}`,
      log: { entry: p.entry },
    }));
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

  private modify(change: (data: Record<string, string>) => void): Promise<void> {
    return this.modifyData((data) => {
      change(data);
      return data;
    });
  }
}
