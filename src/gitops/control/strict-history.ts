// Strict mode (Argo CD 3.5 source integrity, gpg mode strict): the revision and all its
// ancestors must be signed by an allowed key, except what seal commits vouch for.
//
// Argo CD's rule, exactly: GS = the ancestors of the target (itself included) whose
// message carries "Argocd-gpg-seal:" (any case) and whose signature is good (made by a
// key of the keyring that is neither expired nor revoked). The commits checked are
//   I = ancestors*(target) - ancestors*(GS)            ("*": the commit itself too)
//   B = the parents of commits in I that are not in I  (git rev-list --boundary)
// and V = I + B must all pass the policy; a target that is itself a good seal is checked
// alone. With no seal, V is the whole history down to the root commit(s).
//
// Fast paths, both sound (a commit they skip passes the policy, so no refusal is missed):
//   - verdicts: each commit's cryptographic check is cached by commit ID and keyring
//     version (bounded); the policy (key list, identity rules, expiry now) is applied to
//     the cached verdict on every use, so one check serves every project;
//   - history-ok memo: a commit C is history-ok for a policy when C passes and either C is a
//     good seal or every parent is history-ok. Then every commit Argo CD would check for C
//     passes (V(C) is inside C plus the V of its parents). A new commit on a history-ok
//     parent reads and checks one object: the incremental cost;
//   - clean tips: a verified target whose every ancestor passed (no seal needed) is
//     remembered; `git rev-list --not <clean tips>` leaves out commits that all passed.
// The in-process walk stops at history-ok commits and at good seals. When it finds a
// failure (it may, where a seal on another branch would have excused a commit), or the
// history is long, V is computed exactly from `git rev-list --topo-order --parents`, and
// the refusal names the oldest failing commit in V (the first that broke the chain), with
// its author and why, and how many others fail.
import type {
  AllowedSigners,
  Keyring,
  SignatureFailureKind,
  SignerRules,
  SshSignerRule,
  VerificationResult,
  VerificationStatus,
  VerifyOptions,
} from '../../platform/signatures/index.js';
import { aboutSubject, checkSigner, expiredMessage, failureKind, isSshKeyID, verifyCommitSignatures } from '../../platform/signatures/index.js';

/** SSH signatures in a history: the allowed signers (with a version for the caches) and the project's sshSigners. */
export interface SshTrust {
  signers: AllowedSigners;
  version: number;
  /** undefined = no SSH signer is allowed */
  rules?: readonly SshSignerRule[];
}

/** Where commits come from (RepoCache; a fake in unit tests). */
export interface CommitSource {
  readCommits(url: string, ids: readonly string[]): Promise<(Buffer | undefined)[]>;
  ancestry(url: string, commit: string, exclude?: readonly string[]): Promise<{ id: string; parents: string[] }[]>;
}

/** One commit's cryptographic verdict: what the policy is applied to. Kept small (no payload, no signature text). */
export interface CommitVerdict {
  id: string;
  parents: string[];
  /** "Name <email>" */
  author: string;
  committerEmail: string;
  /** the message carries Argo CD's seal trailer (Argocd-gpg-seal:) */
  seal: boolean;
  /** without any policy: valid, unsigned, unknown-key, revoked, bad-signature or expired */
  status: VerificationStatus;
  /** the verifier's message, about "Revision" */
  message: string;
  keyID: string;
  primaryKeyID: string;
  signer: string;
  identities: string[];
  /** ms since the epoch when the signing key expires; Infinity = never */
  expires: number;
}

export interface PolicyFailure {
  status: Exclude<VerificationStatus, 'valid'>;
  message: string;
}

export interface HistoryFailure extends PolicyFailure {
  kind: SignatureFailureKind;
  commit: string;
  author: string;
  keyID: string;
  /** every failing commit in V */
  failing: number;
}

export interface HistoryOutcome {
  /** the target commit's own verdict (for status.signature) */
  head: CommitVerdict;
  failure: HistoryFailure | undefined;
  /** commits whose verdict was applied for this target (0 when the target was already history-ok) */
  commitsChecked: number;
  /** good seal commits the check stopped at */
  seals: string[];
}

const SEAL = /argocd-gpg-seal:/i;
/** The walk in process reads at most this many commits, in at most this many round trips, before asking git for the whole ancestry. */
const WALK_LIMIT = 256;
const WALK_TRIPS = 4;
const MAX_TIPS = 16;
/** Commits read and checked together when many are (verdictsOf), and how many such chunks are in flight at once. */
const CHUNK = 128;
const DEPTH = 4;

/** The policy applied to a verdict at `now`: undefined when the commit passes. */
export function judge(v: CommitVerdict, rules: SignerRules, now: number): PolicyFailure | undefined {
  if (v.status !== 'valid') return { status: v.status, message: v.message };
  if (v.expires <= now) return { status: 'expired', message: expiredMessage(v.keyID, new Date(v.expires).toISOString()) };
  // an SSH key was judged against the allowed signers and sshSigners when it was verified; the OpenPGP key list is not its
  const { allowedKeyIDs, ...identityRules } = rules;
  const applied = isSshKeyID(v.keyID) || allowedKeyIDs === undefined ? identityRules : { ...identityRules, allowedKeyIDs };
  return checkSigner({ keyID: v.keyID, primaryKeyID: v.primaryKeyID, identities: v.identities }, applied, v.committerEmail);
}

/**
 * The commits V holds when the target is no good seal: the listed ones that are not ancestors of a good seal, plus the
 * boundary (the excluded parents of included commits), children before parents as git listed them. Fills `seals`.
 */
function commitsSinceSeals(list: { id: string; parents: string[] }[], set: Map<string, CommitVerdict>, now: number, seals: string[]): string[] {
  // ancestors*(good seals) inside the listed commits
  const excluded = new Set<string>();
  const queue: string[] = [];
  for (const [id, v] of set)
    if (isGoodSeal(v, now)) {
      seals.push(id);
      queue.push(id);
    }
  while (queue.length > 0) {
    const id = queue.pop()!;
    if (excluded.has(id) || !set.has(id)) continue;
    excluded.add(id);
    for (const p of set.get(id)!.parents) queue.push(p);
  }
  const inV = new Set<string>();
  for (const x of list) {
    if (excluded.has(x.id)) continue;
    inV.add(x.id);
    for (const p of x.parents) if (excluded.has(p)) inV.add(p); // the boundary
  }
  // children before parents, as git listed them
  return list.map((x) => x.id).filter((id) => inV.has(id));
}

/** The outcome of a strict check that failed: the oldest failing commit named, and how many more fail. */
function strictFailure(
  head: CommitVerdict,
  target: string,
  set: Map<string, CommitVerdict>,
  commitsChecked: number,
  seals: string[],
  failing: { id: string; f: PolicyFailure | undefined }[],
): HistoryOutcome {
  const first = failing[failing.length - 1]!;
  const v = set.get(first.id)!;
  const f = first.f!;
  const inHistory = first.id !== target;
  const subject = inHistory ? `History commit ${first.id} by ${v.author}` : 'Revision';
  const scope =
    seals.length > 0
      ? `every commit since the seal commit${seals.length > 1 ? 's' : ''} ${seals.map((s) => s.slice(0, 12)).join(', ')}`
      : 'every commit down to the root';
  const more = failing.length > 1 ? `; ${failing.length - 1} more commit${failing.length > 2 ? 's' : ''} fail` : '';
  const message =
    inHistory || failing.length > 1 ? `${aboutSubject(f.message, subject)} (strict mode: ${scope} must be signed by an allowed key${more})` : f.message;
  return {
    head,
    commitsChecked,
    seals,
    failure: {
      kind: failureKind(f.status, inHistory),
      status: f.status,
      message,
      commit: first.id,
      author: v.author,
      keyID: v.keyID,
      failing: failing.length,
    },
  };
}

/** judge() of each verdict once per check, however many passes ask (the policy and `now` are the check's). */
class Judged {
  private readonly m = new Map<CommitVerdict, PolicyFailure | undefined>();
  constructor(
    private readonly rules: SignerRules,
    private readonly now: number,
  ) {}
  of(v: CommitVerdict): PolicyFailure | undefined {
    if (this.m.has(v)) return this.m.get(v);
    const f = judge(v, this.rules, this.now);
    this.m.set(v, f);
    return f;
  }
}

/** Good in git's sense (%G? = G): a valid signature by a keyring key that is neither expired nor revoked, whoever is allowed. */
const cryptoGood = (v: CommitVerdict, now: number): boolean => v.status === 'valid' && v.expires > now;
const isGoodSeal = (v: CommitVerdict, now: number): boolean => v.seal && cryptoGood(v, now);

/** A Map that forgets its oldest entries beyond `max`. */
class Bounded<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    return this.m.get(k);
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.max) {
      const drop = Math.ceil(this.max / 10);
      let n = 0;
      for (const key of this.m.keys()) {
        if (n++ >= drop) break;
        this.m.delete(key);
      }
    }
  }
  get size(): number {
    return this.m.size;
  }
}

export interface HistoryVerifierOptions {
  /** commit verdicts kept (default 100,000: about 40 MB at most) */
  maxVerdicts?: number;
  /** history-ok entries kept (default 100,000) */
  maxMemo?: number;
}

export class HistoryVerifier {
  private readonly verdicts: Bounded<CommitVerdict>;
  /** `${policyKey}|${ringVersion}|${id}` -> history-ok until (ms; a key's expiry ends it) */
  private readonly okUntil: Bounded<number>;
  /** `${url}|${policyKey}|${ringVersion}` -> targets whose whole ancestry passed */
  private readonly tips = new Map<string, { id: string; until: number }[]>();

  constructor(
    private readonly source: CommitSource,
    opts: HistoryVerifierOptions = {},
  ) {
    this.verdicts = new Bounded(opts.maxVerdicts ?? 100_000);
    this.okUntil = new Bounded(opts.maxMemo ?? 100_000);
  }

  get cachedVerdicts(): number {
    return this.verdicts.size;
  }

  /**
   * Verdicts of commits (cached, else read and checked). Many are read and checked in chunks,
   * pipelined: the next chunk is read (git) and parsed (here) while the public-key checks of
   * the one before run on libuv's thread pool; a chunk's objects are garbage once its verdicts
   * are made, so a cold history of any length holds about two chunks at a time.
   */
  async verdictsOf(url: string, ids: readonly string[], ring: Keyring, ringVersion: number | string, now: number, ssh?: SshTrust): Promise<CommitVerdict[]> {
    const out: (CommitVerdict | undefined)[] = ids.map((id) => this.verdicts.get(`${ringVersion}:${id}`));
    const missing = ids.filter((_, i) => out[i] === undefined);
    if (missing.length === 0) return out as CommitVerdict[];
    const opts: VerifyOptions = { now: new Date(now), ...(ssh ? { sshSigners: ssh.signers, sshRules: ssh.rules ?? [] } : {}) };
    const made = new Map<string, CommitVerdict>();
    const chunks: string[][] = [];
    for (let start = 0; start < missing.length; start += CHUNK) chunks.push(missing.slice(start, start + CHUNK));
    const reads: (Promise<(Buffer | undefined)[]> | undefined)[] = [];
    let asked = 0;
    const readUpTo = (k: number): void => {
      for (; asked <= k && asked < chunks.length; asked++) {
        const read = this.source.readCommits(url, chunks[asked]!);
        read.catch(() => undefined); // awaited below, in order; no unhandled rejection meanwhile
        reads[asked] = read;
      }
    };
    readUpTo(DEPTH);
    const checking: Promise<void>[] = [];
    for (let k = 0; k < chunks.length; k++) {
      const raws = await reads[k]!;
      reads[k] = undefined; // the chunk's objects are garbage once checked
      readUpTo(k + DEPTH + 1);
      const check = this.check(chunks[k]!, raws, ring, ringVersion, opts, made);
      check.catch(() => undefined); // awaited in order below
      checking.push(check);
      if (checking.length >= DEPTH) await checking.shift();
    }
    for (const check of checking) await check;
    for (let i = 0; i < ids.length; i++) out[i] ??= made.get(ids[i]!);
    return out as CommitVerdict[];
  }

  /** One chunk: parsed here, the public-key checks of many on the thread pool (verifyCommitSignatures). */
  private async check(
    ids: readonly string[],
    raws: readonly (Buffer | undefined)[],
    ring: Keyring,
    ringVersion: number | string,
    opts: VerifyOptions,
    made: Map<string, CommitVerdict>,
  ): Promise<void> {
    const present: Buffer[] = [];
    for (const raw of raws) if (raw) present.push(raw);
    const results = await verifyCommitSignatures(present, ring, opts);
    for (let i = 0, k = 0; i < ids.length; i++) {
      const v = makeVerdict(ids[i]!, raws[i] ? results[k++] : undefined);
      made.set(v.id, v);
      this.verdicts.set(`${ringVersion}:${v.id}`, v);
    }
  }

  /** Strict mode for one target commit under one policy. */
  async verify(
    url: string,
    target: string,
    policy: { key: string; rules: SignerRules },
    ring: Keyring,
    keyringVersion: number,
    nowDate: Date,
    ssh?: SshTrust,
  ): Promise<HistoryOutcome> {
    const now = nowDate.getTime();
    // verdicts depend on the keyring and, for SSH-signed commits, on the allowed signers and sshSigners
    const ringVersion = ssh ? `${keyringVersion}|ssh${ssh.version}|${JSON.stringify(ssh.rules ?? null)}` : keyringVersion;
    const memo = `${policy.key}|${ringVersion}|`;
    const judged = new Judged(policy.rules, now);
    const [head] = await this.verdictsOf(url, [target], ring, ringVersion, now, ssh);
    if ((this.okUntil.get(memo + target) ?? 0) > now) return { head: head!, failure: undefined, commitsChecked: 0, seals: [] };

    // the walk in process, one batch of commits per round trip to git: stops at history-ok
    // commits and good seals; a history longer than a few round trips goes to git at once
    const walk = new Map<string, CommitVerdict>([[target, head!]]);
    let stopUntil = Infinity;
    let bail = false;
    let frontier = isGoodSeal(head!, now) ? [] : [...new Set(head!.parents)];
    for (let trips = 0; frontier.length > 0; trips++) {
      const next: string[] = [];
      for (const id of frontier) {
        if (walk.has(id)) continue;
        const ok = this.okUntil.get(memo + id) ?? 0;
        if (ok > now) stopUntil = Math.min(stopUntil, ok);
        else next.push(id);
      }
      if (next.length === 0) break;
      if (trips >= WALK_TRIPS || walk.size + next.length > WALK_LIMIT) {
        bail = true;
        break;
      }
      const got = await this.verdictsOf(url, next, ring, ringVersion, now, ssh);
      frontier = [];
      for (const v of got) {
        walk.set(v.id, v);
        if (!isGoodSeal(v, now)) for (const p of v.parents) if (!walk.has(p)) frontier.push(p);
      }
      frontier = [...new Set(frontier)];
    }
    if (!bail) {
      const ok = this.historyOk(walk, new Set(), judged, now, memo);
      if (ok.has(target)) {
        let until = stopUntil;
        for (const v of walk.values()) until = Math.min(until, v.expires);
        for (const id of ok) this.okUntil.set(memo + id, until);
        return { head: head!, failure: undefined, commitsChecked: walk.size, seals: [...walk.values()].filter((v) => isGoodSeal(v, now)).map((v) => v.id) };
      }
    }
    return this.exact(url, target, head!, policy, judged, ring, ringVersion, now, memo, ssh);
  }

  /**
   * The history-ok commits of a set: C passes and is a good seal, or each parent is
   * history-ok (in the set, or memoized), or is outside the set and `outsideIsGood` says
   * it passed with all its ancestors ('all': git left it out as an ancestor of a clean tip).
   */
  private historyOk(set: Map<string, CommitVerdict>, outsideIsGood: Set<string> | 'all', judged: Judged, now: number, memo: string): Set<string> {
    const ok = new Set<string>();
    const state = new Map<string, boolean>();
    const visit = (start: string): boolean => {
      // iterative post-order over parents inside `set`
      const stack: { id: string; i: number }[] = [{ id: start, i: 0 }];
      while (stack.length > 0) {
        const top = stack[stack.length - 1]!;
        const v = set.get(top.id)!;
        if (state.has(top.id)) {
          stack.pop();
          continue;
        }
        const seal = isGoodSeal(v, now);
        if (!seal && top.i < v.parents.length) {
          const p = v.parents[top.i++]!;
          if (set.has(p) && !state.has(p)) stack.push({ id: p, i: 0 });
          continue;
        }
        const good =
          judged.of(v) === undefined &&
          (seal ||
            v.parents.every((p) => {
              if (set.has(p)) return state.get(p) === true;
              if ((this.okUntil.get(memo + p) ?? 0) > now) return true;
              return outsideIsGood === 'all' || outsideIsGood.has(p);
            }));
        state.set(top.id, good);
        if (good) ok.add(top.id);
        stack.pop();
      }
      return state.get(start) === true;
    };
    for (const id of set.keys()) if (!state.has(id)) visit(id);
    return ok;
  }

  /** V exactly as Argo CD computes it, from git's ancestry of the target. */
  private async exact(
    url: string,
    target: string,
    head: CommitVerdict,
    policy: { key: string; rules: SignerRules },
    judged: Judged,
    ring: Keyring,
    ringVersion: number | string,
    now: number,
    memo: string,
    ssh?: SshTrust,
  ): Promise<HistoryOutcome> {
    const tipKey = `${url}|${policy.key}|${ringVersion}`;
    const tips = (this.tips.get(tipKey) ?? []).filter((t) => t.until > now);
    const list = await this.source.ancestry(
      url,
      target,
      tips.map((t) => t.id),
    );
    const verdicts = await this.verdictsOf(
      url,
      list.map((x) => x.id),
      ring,
      ringVersion,
      now,
      ssh,
    );
    const set = new Map<string, CommitVerdict>();
    list.forEach((x, i) => {
      // git's parents are authoritative (a commit object that cannot be parsed has none of its own)
      const v = verdicts[i]!;
      set.set(x.id, v.parents.join() === x.parents.join() ? v : { ...v, parents: x.parents });
    });
    const targetV = set.get(target) ?? head;
    let checked: string[];
    const seals: string[] = [];
    if (isGoodSeal(targetV, now)) {
      checked = [target];
      seals.push(target);
    } else {
      checked = commitsSinceSeals(list, set, now, seals);
    }
    const failing = checked.map((id) => ({ id, f: judged.of(set.get(id)!) })).filter((x) => x.f !== undefined);
    if (failing.length === 0) {
      // parents git left out are ancestors of clean tips: they and all their ancestors passed;
      // the target itself: V(target) passed, and a child's V lies in the child, its parents and their V
      const ok = this.historyOk(set, 'all', judged, now, memo);
      ok.add(target);
      let until = Infinity;
      for (const t of tips) until = Math.min(until, t.until);
      for (const v of set.values()) until = Math.min(until, v.expires);
      for (const id of ok) this.okUntil.set(memo + id, until);
      if (this.clean(set, judged, target)) this.tips.set(tipKey, [{ id: target, until }, ...tips].slice(0, MAX_TIPS));
      if (this.tips.size > 1000) this.tips.clear();
      return { head, failure: undefined, commitsChecked: checked.length, seals };
    }
    return strictFailure(head, target, set, checked.length, seals, failing);
  }

  /** Every listed ancestor of `target` passes on its own (no seal needed): a clean tip. */
  private clean(set: Map<string, CommitVerdict>, judged: Judged, target: string): boolean {
    const seen = new Set<string>();
    const stack = [target];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const v = set.get(id);
      if (!v) continue; // left out by a clean tip
      if (judged.of(v) !== undefined) return false;
      for (const p of v.parents) stack.push(p);
    }
    return true;
  }
}

function makeVerdict(id: string, r: VerificationResult | undefined): CommitVerdict {
  if (!r) {
    return {
      id,
      parents: [],
      author: '(unknown)',
      committerEmail: '',
      seal: false,
      status: 'bad-signature',
      message: `Revision cannot be verified: commit ${id} is not in the repository`,
      keyID: '',
      primaryKeyID: '',
      signer: '',
      identities: [],
      expires: Infinity,
    };
  }
  const c = r.commit;
  return {
    id,
    parents: c?.parents ?? [],
    author: c ? `${c.author.name} <${c.author.email}>` : '(unknown)',
    committerEmail: c?.committer.email ?? '',
    seal: c !== undefined && SEAL.test(c.message),
    status: r.status,
    message: r.message,
    keyID: r.keyID,
    primaryKeyID: r.primaryKeyID,
    signer: r.signer,
    identities: r.signerIdentities,
    expires: r.keyExpires ? Date.parse(r.keyExpires) : Infinity,
  };
}
