// Push notification: in-process subscribers (the control module syncs at once) and
// an optional POST of a Gitea-style push payload to loopback URLs, signed as Gitea
// signs it when pushWebhookSecret is set.
import { createHmac } from 'node:crypto';
import type { Logger } from '../../base/log/index.js';

export interface PushEvent {
  owner: string;
  repo: string;
  /** full ref name, e.g. refs/heads/main */
  ref: string;
  /** 40 zeros when the ref was created */
  oldSha: string;
  /** 40 zeros when the ref was deleted */
  newSha: string;
  pusher: string;
}

export type PushListener = (event: PushEvent) => void;

export class PushEvents {
  private readonly listeners = new Set<PushListener>();

  constructor(
    private readonly webhooks: readonly string[],
    private readonly log: Logger,
    private readonly baseURL: () => string,
    private readonly secret = '',
  ) {}

  /** Subscribe; returns the unsubscribe function. */
  onPush(cb: PushListener): () => void {
    this.listeners.add(cb);
    return () => {
      this.listeners.delete(cb);
    };
  }

  /** Parse post-receive lines ("<old> <new> <ref>") and publish each. */
  publishLog(owner: string, repo: string, pusher: string, text: string): PushEvent[] {
    const events: PushEvent[] = [];
    for (const line of text.split('\n')) {
      const m = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\S+)$/.exec(line.trim());
      if (m) events.push({ owner, repo, ref: m[3] as string, oldSha: m[1] as string, newSha: m[2] as string, pusher });
    }
    for (const e of events) this.publish(e);
    return events;
  }

  publish(event: PushEvent): void {
    for (const cb of this.listeners) {
      try {
        cb(event);
      } catch (err) {
        this.log.warn({ err }, 'push listener failed');
      }
    }
    for (const url of this.webhooks) void this.post(url, event);
  }

  /** Gitea's signature headers: hex HMAC-SHA256 of the body with the shared secret. */
  private signature(body: string): Record<string, string> {
    if (!this.secret) return {};
    const hex = createHmac('sha256', this.secret).update(body).digest('hex');
    return { 'X-Gitea-Signature': hex, 'X-Hub-Signature-256': `sha256=${hex}` };
  }

  private async post(url: string, e: PushEvent): Promise<void> {
    const base = this.baseURL();
    const body = JSON.stringify({
      ref: e.ref,
      before: e.oldSha,
      after: e.newSha,
      repository: { name: e.repo, full_name: `${e.owner}/${e.repo}`, owner: { login: e.owner }, clone_url: `${base}/${e.owner}/${e.repo}.git` },
      pusher: { login: e.pusher },
    });
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Gitea-Event': 'push', 'X-Strait-Event': 'push', ...this.signature(body) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(5000),
      });
      await res.arrayBuffer();
      if (res.status >= 300) this.log.warn({ url, status: res.status }, 'push webhook answered with an error');
    } catch (err) {
      this.log.warn({ url, err: (err as Error).message }, 'push webhook failed');
    }
  }
}
