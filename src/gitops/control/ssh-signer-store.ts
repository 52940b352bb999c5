// The SSH allowed signers (a strait extension beside Argo CD's GnuPG key store):
// ConfigMap argocd-ssh-allowed-signers-cm (name from SSH_SIGNERS_CM) in the controller's
// namespace, one data entry `allowed_signers` holding git's gpg.ssh.allowedSignersFile
// text (ssh-keygen(1) ALLOWED SIGNERS), so the file a team already has is the
// ConfigMap: `kubectl create configmap argocd-ssh-allowed-signers-cm --from-file=allowed_signers`.
// A line that cannot be parsed is reported (log + Warning Event on the ConfigMap,
// reason InvalidSshSignerEntry) and ignored; the others are used. The ConfigMap is
// watched; a change is effective at once. The API and CLI add and remove lines by
// key fingerprint ("SHA256:…") and keep the rest of the text (comments included).
import type { Logger } from 'pino';
import { E } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import { SSH_SIGNERS_CM } from '../../platform/resources/index.js';
import {
  AllowedSigners,
  describeSshKey,
  normalizeFingerprint,
  parseAllowedSignerLine,
  sshKeyText,
  type AllowedSigner,
  type AllowedSignerProblem,
} from '../../platform/signatures/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { ConfigMapStore } from './configmap-store.js';

export const ALLOWED_SIGNERS_KEY = 'allowed_signers';

/** One allowed_signers line as the API shows it. */
export interface SshSignerInfo {
  fingerprint: string;
  /** ED25519, ECDSA-256, RSA-3072 … */
  keyType: string;
  principals: string;
  certAuthority: boolean;
  namespaces?: string;
  /** RFC 3339 */
  validAfter?: string;
  validBefore?: string;
  /** "type base64" */
  publicKey: string;
  comment: string;
  /** the line as stored */
  line: string;
}

const rfc3339 = (secs: number): string => new Date(secs * 1000).toISOString().replace('.000Z', 'Z');

export function signerInfo(e: AllowedSigner): SshSignerInfo {
  return {
    fingerprint: e.key.fingerprint,
    keyType: describeSshKey(e.key),
    principals: e.principals,
    certAuthority: e.certAuthority,
    ...(e.namespaces !== undefined ? { namespaces: e.namespaces } : {}),
    ...(e.validAfter !== undefined ? { validAfter: rfc3339(e.validAfter) } : {}),
    ...(e.validBefore !== undefined ? { validBefore: rfc3339(e.validBefore) } : {}),
    publicKey: sshKeyText(e.key),
    comment: e.comment,
    line: e.text,
  };
}

/** The fingerprint of a stored line, or undefined when the line is a comment or unreadable. */
function lineFingerprint(text: string): string | undefined {
  const t = text.trim();
  if (t === '' || t.startsWith('#')) return undefined;
  try {
    return parseAllowedSignerLine(t).key.fingerprint;
  } catch {
    return undefined;
  }
}

export class SshSignerStore extends ConfigMapStore {
  signers = new AllowedSigners();
  problems: AllowedSignerProblem[] = [];

  constructor(store: ResourceStore, namespace: string, name: string = SSH_SIGNERS_CM, log: Logger = silentLogger()) {
    super(store, namespace, name, log, 'the SSH allowed signers');
  }

  protected async rebuild(data: Record<string, string>): Promise<{ reason: string; message: string; logMessage: string; log: Record<string, unknown> }[]> {
    const signers = AllowedSigners.parse(data[ALLOWED_SIGNERS_KEY] ?? '');
    const problems = [...signers.problems];
    for (const k of Object.keys(data)) {
      if (k !== ALLOWED_SIGNERS_KEY)
        problems.push({ line: 0, text: k, reason: `entry ${JSON.stringify(k)} is not read; put every line in the entry "${ALLOWED_SIGNERS_KEY}"` });
    }
    this.signers = signers;
    this.problems = problems;
    return problems.map((p) => ({
      reason: 'InvalidSshSignerEntry',
      message: p.reason,
      logMessage: `ignoring SSH allowed signers line: ${p.reason}`,
      log: { line: p.line },
    }));
  }

  list(): SshSignerInfo[] {
    return this.signers.entries.map(signerInfo);
  }

  /**
   * Add the lines of an allowed_signers text. Every line must parse (else nothing is
   * written). A key that has lines already is skipped, unless `upsert`: then its old
   * lines are replaced by the new ones.
   */
  async add(text: string, upsert = false): Promise<{ created: SshSignerInfo[]; skipped: string[] }> {
    const entries: AllowedSigner[] = [];
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const t = (lines[i] as string).trim();
      if (t === '' || t.startsWith('#')) continue;
      entries.push(parseAllowedSignerLine(t, i + 1));
    }
    if (entries.length === 0) throw E.allowedSignersInvalid(1, 'the input holds no allowed signer line', text.slice(0, 200));
    const created: SshSignerInfo[] = [];
    const skipped: string[] = [];
    await this.modify((current) => {
      const have = new Set(current.map(lineFingerprint).filter((f): f is string => f !== undefined));
      const incoming = new Set(entries.map((e) => e.key.fingerprint));
      let kept = current;
      if (upsert)
        kept = current.filter((l) => {
          const f = lineFingerprint(l);
          return f === undefined || !incoming.has(f);
        });
      const added: string[] = [];
      created.length = 0;
      skipped.length = 0;
      for (const e of entries) {
        if (!upsert && have.has(e.key.fingerprint)) {
          if (!skipped.includes(e.key.fingerprint)) skipped.push(e.key.fingerprint);
          continue;
        }
        added.push(e.text);
        created.push(signerInfo(e));
      }
      return [...kept, ...added];
    });
    return { created, skipped };
  }

  /** Remove every line of the key with this fingerprint. */
  async remove(fingerprint: string): Promise<void> {
    // a '+' in a query string that was not percent-encoded arrives as a space; fingerprints have none
    const fp = normalizeFingerprint(fingerprint.trim().replace(/ /g, '+'));
    let found = false;
    await this.modify((current) =>
      current.filter((l) => {
        const hit = lineFingerprint(l) === fp;
        if (hit) found = true;
        return !hit;
      }),
    );
    if (!found) throw E.sshSignerNotFound(fp);
  }

  /** Read-modify-write of the allowed_signers text (lines) with optimistic concurrency, then reload. */
  private modify(change: (lines: string[]) => string[]): Promise<void> {
    return this.modifyData((data) => {
      const before = (data[ALLOWED_SIGNERS_KEY] ?? '').split('\n').filter((l, i, all) => !(l === '' && i === all.length - 1));
      const text = change(before).join('\n');
      return { ...data, [ALLOWED_SIGNERS_KEY]: text === '' ? '' : `${text}\n` };
    });
  }
}
