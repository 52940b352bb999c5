// Raw commit objects from one repository mirror through one long-running
// `git cat-file --batch` (git-exec.ts's environment: no replace objects, no grafts), so
// a strict history check reads a new commit in well under a millisecond instead of
// starting git for it, and a cold check of thousands of commits is one pipelined stream.
// Each object is checked to hash to the name it was asked by. The process ends after
// `idleMs` without requests and when closed; a read after that starts a new one. Objects
// fetched into the mirror after the process started are found (git looks at the pack
// directory again when an object is not in the packs it knows).
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { E } from '../../base/errors/index.js';
import { gitObjectMatches } from '../../platform/signatures/index.js';
import { spawnGit } from './git-exec.js';

interface Pending {
  id: string;
  resolve: (raw: Buffer | undefined) => void;
  reject: (err: Error) => void;
}

/** Bounds one answer: a commit object larger than this is refused (git's own objects are far smaller). */
const MAX_OBJECT = 16 * 1024 * 1024;
const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export class CommitReader {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly pending: Pending[] = [];
  private acc: Buffer = Buffer.alloc(0);
  private idle: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly idleMs = 15_000,
  ) {}

  /** The raw commit objects (undefined for an ID the repository does not have), in the order asked. */
  async readMany(ids: readonly string[]): Promise<(Buffer | undefined)[]> {
    if (ids.length === 0) return [];
    for (const id of ids) if (!OID.test(id)) throw E.internal(`not a full object ID: ${JSON.stringify(id)}`);
    const child = this.start();
    this.hold(child, true);
    const answers = ids.map((id) => new Promise<Buffer | undefined>((resolve, reject) => this.pending.push({ id, resolve, reject })));
    child.stdin.write(`${ids.join('\n')}\n`);
    return Promise.all(answers);
  }

  async read(id: string): Promise<Buffer | undefined> {
    return (await this.readMany([id]))[0];
  }

  close(): void {
    this.closed = true;
    this.stop(new Error('commit reader closed'));
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.closed) throw E.internal('commit reader used after close');
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.pending.length === 0) this.stop();
    }, this.idleMs);
    this.idle.unref();
    if (this.child) return this.child;
    const child = spawnGit(this.dir, ['cat-file', '--batch']);
    this.child = child;
    this.acc = Buffer.alloc(0);
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString();
    });
    child.stdout.on('data', (c: Buffer) => this.onData(c));
    child.stdin.on('error', () => {
      /* the exit handler rejects what is pending */
    });
    child.on('error', (err) => this.stop(err));
    child.on('close', (code) => {
      if (this.child === child) this.stop(E.systemTool('git cat-file --batch', code ?? 'signal', stderr.trim()));
    });
    return child;
  }

  /** An idle reader never keeps the process alive: its pipes hold the event loop only while answers are due. */
  private hold(child: ChildProcessWithoutNullStreams, on: boolean): void {
    for (const h of [child, child.stdin, child.stdout, child.stderr] as { ref?: () => void; unref?: () => void }[]) {
      if (on) h.ref?.();
      else h.unref?.();
    }
  }

  private stop(err?: Error): void {
    const child = this.child;
    this.child = undefined;
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    if (child) {
      child.stdin.end();
      child.kill();
    }
    const failed = this.pending.splice(0);
    for (const p of failed) p.reject(err ?? new Error('git cat-file --batch ended'));
  }

  private onData(chunk: Buffer): void {
    this.acc = this.acc.length === 0 ? chunk : Buffer.concat([this.acc, chunk]);
    let off = 0;
    while (this.pending.length > 0) {
      const nl = this.acc.indexOf(10, off);
      if (nl < 0) break;
      const header = this.acc.subarray(off, nl).toString('latin1');
      const p = this.pending[0]!;
      const parts = header.split(' ');
      if (parts[1] === 'missing' || parts[1] === 'ambiguous') {
        this.pending.shift();
        p.resolve(undefined);
        off = nl + 1;
        continue;
      }
      const size = Number(parts[2]);
      if (parts.length !== 3 || !Number.isSafeInteger(size) || size < 0 || size > MAX_OBJECT) {
        this.stop(E.internal(`git cat-file --batch answered ${JSON.stringify(header.slice(0, 200))} for ${p.id}`));
        return;
      }
      if (this.acc.length < nl + 1 + size + 1) break;
      const raw = Buffer.from(this.acc.subarray(nl + 1, nl + 1 + size));
      off = nl + 1 + size + 1;
      this.pending.shift();
      if (parts[1] !== 'commit' || parts[0] !== p.id || !gitObjectMatches('commit', raw, p.id)) {
        p.reject(
          E.internal(`git returned content that is not the commit ${p.id} that was asked for (${JSON.stringify(header.slice(0, 120))}); refusing to use it`),
        );
        continue;
      }
      p.resolve(raw);
    }
    this.acc = off >= this.acc.length ? Buffer.alloc(0) : this.acc.subarray(off);
    if (this.pending.length === 0 && this.child) this.hold(this.child, false);
  }
}
