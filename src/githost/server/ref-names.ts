// Branch and tag names githost refuses everywhere a name can enter (push, the API's
// default_branch, imported repositories): a name of 40 or 64 hex digits (any case)
// reads as a full commit ID. Readers that resolve a revision take a full commit ID
// as the commit (git rev-parse, Argo CD's IsCommitSHA, the GitOps controller's
// git-cache.ts), but a reader that tries refs first would let whoever may push a
// branch take over a pinned commit; refusing the name closes that for every reader.
import { E } from '../../base/errors/index.js';

const FULL_SHA_NAME = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/** Why `ref` (refs/heads/<name> or refs/tags/<name>) may not be created, or undefined. */
export function refNameRefusal(ref: string): string | undefined {
  const m = /^refs\/(heads|tags)\/(.*)$/.exec(ref);
  if (!m) return undefined;
  const what = m[1] === 'heads' ? 'branch' : 'tag';
  const name = m[2] as string;
  if (!FULL_SHA_NAME.test(name)) return undefined;
  return `${what} name ${JSON.stringify(name)} looks like a full commit SHA; a revision of 40 or 64 hex digits names a commit, never a ${what}; pick another name`;
}

/** STRAIT_ERR_GITHOST_NAME_INVALID for a branch or tag name that looks like a full commit SHA. */
export function checkRefName(kind: 'branch' | 'tag', name: string): string {
  const why = refNameRefusal(`refs/${kind === 'branch' ? 'heads' : 'tags'}/${name}`);
  if (why)
    throw E.githostNameInvalid(
      kind,
      name,
      'looks like a full commit SHA (40 or 64 hex digits), which names a commit, never a branch or tag; pick another name',
    );
  return name;
}
